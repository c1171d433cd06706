package channels

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// maxLoggedText bounds the text a Log channel writes per message.
const maxLoggedText = 4 << 10

// Log is a channel that writes each message to a structured log, at info
// level, tagged with the channel, skill, tool and message id. Text is cut
// to 4 KiB; a JSON message is logged as its size only.
type Log struct {
	Logger hclog.Logger
}

// Send logs m.
func (l *Log) Send(_ context.Context, m Message) error {
	text := m.Text
	if len(text) > maxLoggedText {
		text = text[:maxLoggedText] + "…"
	}
	args := []any{"channel", m.Channel, "skill_id", m.SkillID, "tool_id", m.ToolID, "message_id", m.ID}
	if text != "" {
		args = append(args, "text", text)
	}
	if len(m.Data) > 0 {
		args = append(args, "message_bytes", len(m.Data))
	}
	l.Logger.Info("channel message", args...)
	return nil
}

// Poster sends one HTTP POST for a Webhook and returns the status code. The
// host implements it with its egress firewall, so a webhook URL obeys the
// same rules as a skill's requests.
type Poster interface {
	Post(ctx context.Context, url string, contentType string, body []byte) (status int, err error)
}

// PosterFunc adapts a function to Poster.
type PosterFunc func(ctx context.Context, url, contentType string, body []byte) (int, error)

// Post calls f.
func (f PosterFunc) Post(ctx context.Context, url, contentType string, body []byte) (int, error) {
	return f(ctx, url, contentType, body)
}

// Webhook is a channel that POSTs each message, as the JSON of Message, to
// URL. A 2xx status is delivered; anything else is an error naming the
// status (the response body is not read into errors).
type Webhook struct {
	URL    string
	Poster Poster
}

// Send posts m.
func (w *Webhook) Send(ctx context.Context, m Message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("webhook: encode: %w", err)
	}
	status, err := w.Poster.Post(ctx, w.URL, "application/json", body)
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("webhook: status %d", status)
	}
	return nil
}

// PubSub is an in-memory channel that hands each message to every current
// subscriber. Delivery never blocks the sender: a subscriber whose buffer
// is full misses the message, which is counted in Dropped. It is safe for
// concurrent use; the zero PubSub is ready.
type PubSub struct {
	mu      sync.Mutex
	subs    map[int]chan Message
	next    int
	dropped atomic.Uint64
}

// Subscribe returns a channel receiving every message sent from now on,
// buffered to buffer (at least 1), and a cancel function that closes it.
func (p *PubSub) Subscribe(buffer int) (<-chan Message, func()) {
	ch := make(chan Message, max(buffer, 1))
	p.mu.Lock()
	if p.subs == nil {
		p.subs = map[int]chan Message{}
	}
	id := p.next
	p.next++
	p.subs[id] = ch
	p.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			p.mu.Lock()
			delete(p.subs, id)
			p.mu.Unlock()
			close(ch)
		})
	}
}

// Send hands m to every subscriber.
func (p *PubSub) Send(_ context.Context, m Message) error {
	m.Data = bytes.Clone(m.Data)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range p.subs {
		select {
		case ch <- m:
		default:
			p.dropped.Add(1)
		}
	}
	return nil
}

// Dropped returns the number of messages a full subscriber missed.
func (p *PubSub) Dropped() uint64 { return p.dropped.Load() }
