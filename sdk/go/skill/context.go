package skill

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/palyra-go/palyra/internal/textutil"
	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// Context is one invocation as a handler sees it: which tool, for which
// skill, until when, with which grants, and the helpers that use them. It is
// valid only during the handler call that received it, and, like the guest
// itself, is not for concurrent use.
type Context struct {
	h        abi.Host
	doc      *inputDocument
	deadline time.Time
	config   []byte // the config document, once read
}

func newContext(h abi.Host, doc *inputDocument) *Context {
	c := &Context{h: h, doc: doc}
	if doc.DeadlineUnixMS > 0 {
		c.deadline = time.UnixMilli(doc.DeadlineUnixMS)
	}
	return c
}

// ToolID returns the id of the tool being called, e.g. "palyra.echo".
func (c *Context) ToolID() string { return c.doc.ToolID }

// SkillID returns the id of the skill, e.g. "palyra.echo".
func (c *Context) SkillID() string { return c.doc.SkillID }

// InvocationID returns the host's id for this call.
func (c *Context) InvocationID() string { return c.doc.InvocationID }

// Deadline returns when the host will interrupt the call; the zero Time when
// the input document gave none.
func (c *Context) Deadline() time.Time { return c.deadline }

// Grants returns the handles granted to this call, with what each stands
// for. The returned value shares nothing with the Context.
func (c *Context) Grants() Grants { return c.doc.Grants.clone() }

// Grants are the capability handles of one call (sdk/ABI.md §3 "grants").
type Grants struct {
	HTTP     []HTTPGrant    `json:"http"`
	Secrets  []SecretGrant  `json:"secrets"`
	Storage  []StorageGrant `json:"storage"`
	Channels []ChannelGrant `json:"channels"`
}

// HTTPGrant is one granted HTTP host: a name or a "*.domain" pattern.
type HTTPGrant struct {
	Handle int32  `json:"handle"`
	Host   string `json:"host"`
}

// SecretGrant is one granted secret, keyed "<scope>/<key_name>", e.g.
// "skill:acme.echo_http/api_token".
type SecretGrant struct {
	Handle int32  `json:"handle"`
	Key    string `json:"key"`
}

// StorageGrant is one granted storage prefix, e.g. "counters".
type StorageGrant struct {
	Handle int32  `json:"handle"`
	Prefix string `json:"prefix"`
}

// ChannelGrant is one granted channel.
type ChannelGrant struct {
	Handle  int32  `json:"handle"`
	Channel string `json:"channel"`
}

func (g Grants) clone() Grants {
	return Grants{
		HTTP:     append([]HTTPGrant(nil), g.HTTP...),
		Secrets:  append([]SecretGrant(nil), g.Secrets...),
		Storage:  append([]StorageGrant(nil), g.Storage...),
		Channels: append([]ChannelGrant(nil), g.Channels...),
	}
}

// httpHandle returns the handle whose host matches host: the same name, or a
// "*.domain" pattern of which host is a subdomain.
func (g Grants) httpHandle(host string) (int32, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	var wildcard int32
	found := false
	for _, gr := range g.HTTP {
		pat := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(gr.Host)), ".")
		if pat == host {
			return gr.Handle, true
		}
		if rest, ok := strings.CutPrefix(pat, "*."); ok && !found && strings.HasSuffix(host, "."+rest) {
			wildcard, found = gr.Handle, true
		}
	}
	return wildcard, found
}

// secretHandle resolves ref: a decimal handle, a full key
// ("skill:acme.echo_http/api_token") or a bare key name ("api_token") that
// names exactly one granted secret.
func (g Grants) secretHandle(ref string) (int32, error) {
	ref = strings.TrimSpace(ref)
	if n, err := strconv.ParseInt(ref, 10, 32); err == nil {
		return int32(n), nil
	}
	for _, s := range g.Secrets {
		if s.Key == ref {
			return s.Handle, nil
		}
	}
	var matches []SecretGrant
	for _, s := range g.Secrets {
		if i := strings.LastIndexByte(s.Key, '/'); i >= 0 && s.Key[i+1:] == ref {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0].Handle, nil
	case 0:
		return 0, &CapabilityError{Kind: abi.KindSecret, Code: abi.CodeNotGranted,
			Message: fmt.Sprintf("no secret grant matches %q", ref)}
	}
	return 0, &CapabilityError{Kind: abi.KindSecret, Code: abi.CodeInvalidRequest,
		Message: fmt.Sprintf("secret %q is ambiguous: %d grants match; use the full key", ref, len(matches))}
}

// storageHandle returns the handle of prefix; "" selects the only storage
// grant when there is exactly one.
func (g Grants) storageHandle(prefix string) (int32, bool) {
	prefix = strings.Trim(strings.TrimSpace(prefix), "/")
	if prefix == "" {
		if len(g.Storage) == 1 {
			return g.Storage[0].Handle, true
		}
		return 0, false
	}
	for _, s := range g.Storage {
		if strings.Trim(strings.TrimSpace(s.Prefix), "/") == prefix {
			return s.Handle, true
		}
	}
	return 0, false
}

func (g Grants) channelHandle(name string) (int32, bool) {
	name = strings.TrimSpace(name)
	for _, ch := range g.Channels {
		if strings.TrimSpace(ch.Channel) == name {
			return ch.Handle, true
		}
	}
	return 0, false
}

// Kind names a kind of capability handle, as in sdk/ABI.md §2.1.
type Kind string

// The capability kinds.
const (
	KindHTTP    Kind = "http"
	KindSecret  Kind = "secret"
	KindStorage Kind = "storage"
	KindChannel Kind = "channel"
)

// HostHandles returns the handles of kind as Palyra's count/handle imports
// (palyra:plugins/host-capabilities@0.1.0) report them. They are the same
// handles as in Grants, without the names; most skills use Grants or the
// helpers instead.
func (c *Context) HostHandles(kind Kind) []int32 {
	n := c.h.GrantCount(string(kind))
	if n <= 0 {
		return nil
	}
	out := make([]int32, 0, n)
	for i := int32(0); i < n; i++ {
		if hd := c.h.GrantHandle(string(kind), i); hd >= 0 {
			out = append(out, hd)
		}
	}
	return out
}

// Level is the level of a log record (sdk/ABI.md §6).
type Level int32

// The log levels.
const (
	LevelTrace Level = 0
	LevelDebug Level = 1
	LevelInfo  Level = 2
	LevelWarn  Level = 3
	LevelError Level = 4
)

// Log writes one log record. The host tags it with the skill id; a record is
// cut to 4 KiB and a call may log at most 64 KiB in total, after which the
// host drops records.
func (c *Context) Log(level Level, msg string) {
	msg = textutil.Truncate(msg, abi.MaxLogRecord)
	c.h.Log(int32(level), []byte(msg))
}

// Logf formats as fmt.Sprintf and writes one log record; see Log.
func (c *Context) Logf(level Level, format string, args ...any) {
	c.Log(level, fmt.Sprintf(format, args...))
}
