package skill

import (
	"encoding/json"
	"fmt"

	"github.com/palyra-go/palyra/internal/textutil"
	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// Call sends one raw capability request (a JSON document, sdk/ABI.md §5) to
// handle and returns the response document. It is the escape hatch for
// operations the typed helpers do not cover; a negative result is a
// *CapabilityError carrying the host's error detail.
func (c *Context) Call(handle int32, request []byte) ([]byte, error) {
	return c.call(abi.KindOf(handle), "", handle, request)
}

// call performs one capability-call and reads the pending response.
func (c *Context) call(kind, op string, handle int32, request []byte) ([]byte, error) {
	if len(request) > abi.MaxRequestBytes {
		return nil, &CapabilityError{Kind: kind, Op: op, Handle: handle, Code: abi.CodeTooLarge,
			Message: fmt.Sprintf("request is %d bytes, over the %d-byte limit", len(request), abi.MaxRequestBytes)}
	}
	n := c.h.CapabilityCall(handle, request)
	if n < 0 {
		e := &CapabilityError{Kind: kind, Op: op, Handle: handle, Code: n}
		e.Detail, e.Message = c.errorDetail()
		return nil, e
	}
	if n > abi.MaxResponseBytes {
		return nil, &CapabilityError{Kind: kind, Op: op, Handle: handle, Code: abi.CodeTooLarge,
			Message: fmt.Sprintf("response is %d bytes, over the %d-byte limit", n, abi.MaxResponseBytes)}
	}
	buf := make([]byte, n)
	if n > 0 {
		if got := c.h.ResponseRead(buf); got != n {
			return nil, &CapabilityError{Kind: kind, Op: op, Handle: handle, Code: abi.CodeInternal,
				Message: fmt.Sprintf("response-read returned %d, want %d", got, n)}
		}
	}
	return buf, nil
}

// errorDetail reads the pending error detail {"error":{"code","message"}}
// after a negative capability-call. A missing or malformed detail yields
// empty strings, or the raw text as the message.
func (c *Context) errorDetail() (code, message string) {
	n := c.h.ResponseLen()
	if n <= 0 {
		return "", ""
	}
	if n > abi.MaxErrorMessage*4 {
		n = abi.MaxErrorMessage * 4
	}
	buf := make([]byte, n)
	got := c.h.ResponseRead(buf)
	if got <= 0 {
		return "", ""
	}
	buf = buf[:min(got, n)]
	var doc struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(buf, &doc); err != nil {
		return "", textutil.Truncate(string(buf), abi.MaxErrorMessage)
	}
	return textutil.Truncate(doc.Error.Code, abi.MaxErrorCode), textutil.Truncate(doc.Error.Message, abi.MaxErrorMessage)
}

// callJSON encodes req, calls handle and decodes the response into resp.
func (c *Context) callJSON(kind, op string, handle int32, req, resp any) error {
	b, err := marshalJSON(req)
	if err != nil {
		return &CapabilityError{Kind: kind, Op: op, Handle: handle, Code: abi.CodeInvalidRequest, Message: err.Error()}
	}
	out, err := c.call(kind, op, handle, b)
	if err != nil {
		return err
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(out, resp); err != nil {
		return &CapabilityError{Kind: kind, Op: op, Handle: handle, Code: abi.CodeInternal,
			Message: fmt.Sprintf("decode response: %v", err)}
	}
	return nil
}

func notGranted(kind, op, format string, args ...any) *CapabilityError {
	return &CapabilityError{Kind: kind, Op: op, Code: abi.CodeNotGranted, Message: fmt.Sprintf(format, args...)}
}

// Secret returns the secret granted under ref: a full key
// ("skill:acme.echo_http/api_token"), a bare key name ("api_token") that
// names exactly one granted secret, or a decimal handle. Resolution errors
// surface when the Secret is used.
func (c *Context) Secret(ref string) *Secret {
	hd, err := c.doc.Grants.secretHandle(ref)
	return &Secret{c: c, ref: ref, handle: hd, err: err}
}

// Secret is a granted secret. Its value never reaches the guest: it is used
// by handle in SecretHeader, and Describe tells whether it is set.
type Secret struct {
	c      *Context
	ref    string
	handle int32
	err    error
}

// SecretInfo is the answer to Secret.Describe.
type SecretInfo struct {
	Scope   string `json:"scope"`
	Key     string `json:"key"`
	Present bool   `json:"present"`
}

// Handle returns the secret's handle, or the resolution error.
func (s *Secret) Handle() (int32, error) { return s.handle, s.err }

// Describe asks the host for the secret's scope, key and whether a value is
// stored ({"op":"describe"}, sdk/ABI.md §5.2).
func (s *Secret) Describe() (*SecretInfo, error) {
	if s.err != nil {
		return nil, s.err
	}
	var info SecretInfo
	if err := s.c.callJSON(abi.KindSecret, "describe", s.handle, opRequest{Op: "describe"}, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// Read returns the secret's value ({"op":"read"}). The operator's policy
// refuses it unless secrets.allow_read is set (ErrDenied): prefer
// SecretHeader, which injects the value on the host so this module never
// holds it.
func (s *Secret) Read() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	var resp struct {
		Value       *string `json:"value"`
		ValueBase64 []byte  `json:"value_base64"`
	}
	if err := s.c.callJSON(abi.KindSecret, "read", s.handle, opRequest{Op: "read"}, &resp); err != nil {
		return nil, err
	}
	if resp.Value != nil {
		return []byte(*resp.Value), nil
	}
	if resp.ValueBase64 == nil {
		return []byte{}, nil
	}
	return resp.ValueBase64, nil
}

type opRequest struct {
	Op string `json:"op"`
}

// Channel returns the granted channel called name.
func (c *Context) Channel(name string) *Channel {
	hd, ok := c.doc.Grants.channelHandle(name)
	return &Channel{c: c, name: name, handle: hd, granted: ok}
}

// Channel is a granted message channel (sdk/ABI.md §5.4).
type Channel struct {
	c       *Context
	name    string
	handle  int32
	granted bool
}

// Delivery is the host's answer to a channel send.
type Delivery struct {
	Delivered bool   `json:"delivered"`
	MessageID string `json:"message_id"`
}

// Send sends a text message: {"op":"send","text":text}.
func (ch *Channel) Send(text string) (*Delivery, error) {
	return ch.send(struct {
		Op   string `json:"op"`
		Text string `json:"text"`
	}{"send", text})
}

// SendMessage sends a structured message, encoded with encoding/json:
// {"op":"send","message":message}.
func (ch *Channel) SendMessage(message any) (*Delivery, error) {
	return ch.send(struct {
		Op      string `json:"op"`
		Message any    `json:"message"`
	}{"send", message})
}

func (ch *Channel) send(req any) (*Delivery, error) {
	if !ch.granted {
		return nil, notGranted(abi.KindChannel, "send", "no channel grant named %q", ch.name)
	}
	var d Delivery
	if err := ch.c.callJSON(abi.KindChannel, "send", ch.handle, req, &d); err != nil {
		return nil, err
	}
	return &d, nil
}
