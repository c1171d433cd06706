package channels

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
)

// Limits of a message.
const (
	// MaxTextBytes bounds a message's text.
	MaxTextBytes = 64 << 10
	// MaxDataBytes bounds a message's JSON document.
	MaxDataBytes = 512 << 10
	// MaxNameBytes bounds a channel name.
	MaxNameBytes = 128
)

// Errors of the package; each carries a stable code.
var (
	ErrNotConfigured = errcode.New("channel_not_configured", "channel is not configured on this host")
	ErrInvalidName   = errcode.New("channel_invalid_name", "invalid channel name")
	ErrExists        = errcode.New("channel_exists", "a channel with this name is already registered")
	ErrInvalid       = errcode.New("channel_invalid_message", "invalid channel message")
	ErrDelivery      = errcode.New("channel_delivery_failed", "channel delivery failed")
)

// Message is one message a skill sends to a channel.
type Message struct {
	// ID is unique per message (set by the Registry when empty).
	ID string `json:"message_id"`
	// Channel is the channel's name.
	Channel string `json:"channel"`
	// SkillID, ToolID and InvocationID say who sent it.
	SkillID      string `json:"skill_id"`
	ToolID       string `json:"tool_id,omitempty"`
	InvocationID string `json:"invocation_id,omitempty"`
	// Time is when the host accepted the message.
	Time time.Time `json:"time"`
	// Text is a plain-text message; Data a JSON document. At least one is
	// set. Both are skill data: display them, never interpret them.
	Text string          `json:"text,omitempty"`
	Data json.RawMessage `json:"message,omitempty"`
}

// Validate checks the message's sizes and that it carries something.
func (m *Message) Validate() error {
	if m.Text == "" && len(m.Data) == 0 {
		return fmt.Errorf("%w: neither text nor message is set", ErrInvalid)
	}
	if len(m.Text) > MaxTextBytes {
		return fmt.Errorf("%w: text is %d bytes, over the %d-byte limit (MaxTextBytes)", ErrInvalid, len(m.Text), MaxTextBytes)
	}
	if len(m.Data) > MaxDataBytes {
		return fmt.Errorf("%w: message is %d bytes, over the %d-byte limit (MaxDataBytes)", ErrInvalid, len(m.Data), MaxDataBytes)
	}
	if len(m.Data) > 0 && !json.Valid(m.Data) {
		return fmt.Errorf("%w: message is not valid JSON", ErrInvalid)
	}
	return nil
}

// Channel is a destination for messages. Send delivers m or returns why it
// could not; it must honour ctx and be safe for concurrent use.
type Channel interface {
	Send(ctx context.Context, m Message) error
}

// ChannelFunc adapts a function to Channel.
type ChannelFunc func(ctx context.Context, m Message) error

// Send calls f.
func (f ChannelFunc) Send(ctx context.Context, m Message) error { return f(ctx, m) }

// Registry holds the channels of a host by name. It is safe for
// concurrent use; the zero Registry is not: use NewRegistry.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Channel
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[string]Channel{}} }

// ValidateName checks a channel name: 1..128 bytes of a-z, 0-9, '.', '_',
// ':' and '-' (the manifest's identifier rule).
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%w: name is %d bytes, over the %d-byte limit", ErrInvalidName, len(name), MaxNameBytes)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return fmt.Errorf("%w: %q: byte %q at offset %d (allowed: a-z, 0-9, '.', '_', ':', '-')", ErrInvalidName, name, c, i)
		}
	}
	return nil
}

// Register adds a channel under name. A name already registered is
// ErrExists: replace a channel with Unregister then Register.
func (r *Registry) Register(name string, c Channel) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if c == nil {
		return fmt.Errorf("channels: register %q: nil channel", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[name]; ok {
		return fmt.Errorf("%w: %q", ErrExists, name)
	}
	r.m[name] = c
	return nil
}

// Unregister removes name; it reports whether it was registered.
func (r *Registry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.m[name]
	delete(r.m, name)
	return ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.m))
	for n := range r.m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Send validates m and delivers it to the channel m.Channel, setting m.ID
// (when empty) and m.Time (when zero). It returns the message id. An
// unknown channel is ErrNotConfigured; a failed delivery wraps ErrDelivery.
func (r *Registry) Send(ctx context.Context, m Message) (string, error) {
	if err := m.Validate(); err != nil {
		return "", err
	}
	r.mu.RLock()
	c, ok := r.m[m.Channel]
	r.mu.RUnlock()
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrNotConfigured, m.Channel)
	}
	if m.ID == "" {
		m.ID = NewID()
	}
	if m.Time.IsZero() {
		m.Time = time.Now().UTC()
	}
	if err := c.Send(ctx, m); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: %q: %w", ErrDelivery, m.Channel, ctx.Err())
		}
		return "", fmt.Errorf("%w: %q: %w", ErrDelivery, m.Channel, err)
	}
	return m.ID, nil
}

// NewID returns a random message id (32 hex digits).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
