// Package skilltest runs skill handlers natively, against an in-memory fake
// of the host side of the Palyra skills ABI (sdk/ABI.md), so a skill's
// dispatch, JSON and capability use can be unit-tested with plain go test,
// without building WebAssembly.
//
// The fake follows the ABI: handles are numbered from canonicalized grant
// lists (trimmed, empties dropped, sorted, de-duplicated) with the bases of
// §2.1; a capability call on a handle that is not granted returns -1 with an
// error detail and never reaches the Backend; a request over 1 MiB returns
// -4; past 256 calls every call returns -7; output past the output limit is
// refused with -4; log records are cut to 4 KiB.
//
//	mux := skill.NewMux()
//	mux.Handle("acme.echo", skill.Typed(echo))
//	res := skilltest.Run(mux, skilltest.Call{ToolID: "acme.echo", Input: map[string]string{"text": "hi"}})
//	if res.Status != 0 { t.Fatal(res.ErrorCode(), res.ErrorMessage()) }
package skilltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// Call describes one invocation.
type Call struct {
	// ToolID is the tool to call.
	ToolID string
	// SkillID defaults to "test.skill".
	SkillID string
	// InvocationID defaults to "01TESTINVOCATION0000000000".
	InvocationID string
	// Input is the tool input: a json.RawMessage or []byte is used as is,
	// anything else is encoded with encoding/json. nil is the JSON null.
	Input any
	// Grants names what the call is granted; handles are assigned as the
	// host does.
	Grants Grants
	// Deadline becomes deadline_unix_ms; the zero Time leaves it out.
	Deadline time.Time
	// Backend answers capability calls on granted handles. nil answers
	// every call with -8 (unavailable).
	Backend Backend
	// InputDocument, when non-nil, replaces the generated input document
	// byte for byte (to test malformed documents).
	InputDocument []byte
	// MaxOutputBytes defaults to 1 MiB, the ABI's output limit.
	MaxOutputBytes int
	// MaxCalls defaults to 256, the ABI's default capability-call budget.
	MaxCalls int
	// Config is the skill's operator config the call reads with
	// Context.Config (sdk/ABI.md §3.1): a json.RawMessage or []byte is
	// used as is, anything else is encoded with encoding/json. nil is {}.
	Config any
}

// Grants lists granted names per kind: HTTP hosts (or "*.domain"
// patterns), secret keys ("skill:acme.x/api_token"), storage prefixes and
// channel names.
type Grants struct {
	HTTP     []string
	Secrets  []string
	Storage  []string
	Channels []string
}

// Request is one capability call that reached the Backend.
type Request struct {
	// Handle is the handle called.
	Handle int32
	// Kind is "http", "secret", "storage" or "channel".
	Kind string
	// Name is the grant behind Handle: the host, key, prefix or channel.
	Name string
	// Body is the request document exactly as the guest sent it.
	Body []byte
}

// Response is a Backend's answer: a response document, or a negative code
// with the error detail the guest reads after it.
type Response struct {
	// Code is 0 for success or a negative ABI code (-1 … -9).
	Code int32
	// Body is the response document when Code is 0.
	Body []byte
	// ErrorCode and Message form the detail {"error":{"code","message"}}
	// when Code is negative.
	ErrorCode string
	Message   string
}

// OK returns a successful Response whose body is v encoded with
// encoding/json (a json.RawMessage or []byte is used as is).
func OK(v any) Response {
	b, err := encode(v)
	if err != nil {
		return Fail(abi.CodeInternal, "internal", err.Error())
	}
	return Response{Body: b}
}

// Fail returns a failed Response with a negative code and its detail.
func Fail(code int32, errorCode, message string) Response {
	return Response{Code: code, ErrorCode: errorCode, Message: message}
}

// Backend plays the host's capability broker.
type Backend interface {
	Capability(req Request) Response
}

// BackendFunc adapts a function to Backend.
type BackendFunc func(req Request) Response

// Capability calls f.
func (f BackendFunc) Capability(req Request) Response { return f(req) }

// Log is one log record the guest wrote.
type Log struct {
	Level   int32
	Message string
}

// Result is what an invocation left behind.
type Result struct {
	// Status is the entrypoint's result: 0 success, non-zero tool error.
	Status int32
	// Output is the output buffer.
	Output []byte
	// Logs are the records written with log, in order.
	Logs []Log
	// Requests are the capability calls that reached the Backend, in order.
	Requests []Request
	// Calls counts every capability-call, including refused ones.
	Calls int
}

// Decode decodes the output into v.
func (r *Result) Decode(v any) error { return json.Unmarshal(r.Output, v) }

// ErrorCode returns the code of the tool error document, or "" when the
// call succeeded or the output is not an error document.
func (r *Result) ErrorCode() string { c, _ := r.errorDoc(); return c }

// ErrorMessage returns the message of the tool error document.
func (r *Result) ErrorMessage() string { _, m := r.errorDoc(); return m }

func (r *Result) errorDoc() (code, message string) {
	if r.Status == 0 {
		return "", ""
	}
	var doc struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(r.Output, &doc) != nil {
		return "", ""
	}
	return doc.Code, doc.Message
}

// Run calls mux once, as the host would call palyra_plugin_main with the
// input document made from call.
func Run(mux *skill.Mux, call Call) *Result {
	h := newHost(call)
	res := &h.res
	res.Status = abi.Serve(mux, h)
	return res
}

type grant struct {
	handle int32
	name   string
}

// canonical trims, drops empties, sorts and de-duplicates (sdk/ABI.md §2.1).
func canonical(kind string, names []string) []grant {
	var c []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			c = append(c, n)
		}
	}
	sort.Strings(c)
	var out []grant
	for i, n := range c {
		if i > 0 && c[i-1] == n {
			continue
		}
		out = append(out, grant{handle: abi.HandleBase(kind) + int32(len(out)), name: n})
	}
	return out
}

type host struct {
	call    Call
	input   []byte
	grants  map[string][]grant
	pending []byte
	hasResp bool
	res     Result
}

func newHost(call Call) *host {
	h := &host{call: call, grants: map[string][]grant{
		abi.KindHTTP:    canonical(abi.KindHTTP, call.Grants.HTTP),
		abi.KindSecret:  canonical(abi.KindSecret, call.Grants.Secrets),
		abi.KindStorage: canonical(abi.KindStorage, call.Grants.Storage),
		abi.KindChannel: canonical(abi.KindChannel, call.Grants.Channels),
	}}
	if call.InputDocument != nil {
		h.input = call.InputDocument
	} else {
		h.input = h.document()
	}
	if h.call.MaxOutputBytes <= 0 {
		h.call.MaxOutputBytes = abi.MaxOutputBytes
	}
	if h.call.MaxCalls <= 0 {
		h.call.MaxCalls = abi.MaxCallsPerInvocation
	}
	return h
}

// document builds the input document of sdk/ABI.md §3.
func (h *host) document() []byte {
	type named map[string]any
	list := func(kind, field string) []named {
		out := []named{}
		for _, g := range h.grants[kind] {
			out = append(out, named{"handle": g.handle, field: g.name})
		}
		return out
	}
	input, err := encode(h.call.Input)
	if err != nil {
		panic(fmt.Sprintf("skilltest: encode Call.Input: %v", err))
	}
	doc := struct {
		ABI          string          `json:"abi"`
		InvocationID string          `json:"invocation_id"`
		SkillID      string          `json:"skill_id"`
		ToolID       string          `json:"tool_id"`
		Input        json.RawMessage `json:"input"`
		Grants       map[string]any  `json:"grants"`
		Deadline     int64           `json:"deadline_unix_ms,omitempty"`
	}{
		ABI:          abi.Version,
		InvocationID: or(h.call.InvocationID, "01TESTINVOCATION0000000000"),
		SkillID:      or(h.call.SkillID, "test.skill"),
		ToolID:       h.call.ToolID,
		Input:        input,
		Grants: map[string]any{
			"http":     list(abi.KindHTTP, "host"),
			"secrets":  list(abi.KindSecret, "key"),
			"storage":  list(abi.KindStorage, "prefix"),
			"channels": list(abi.KindChannel, "channel"),
		},
	}
	if !h.call.Deadline.IsZero() {
		doc.Deadline = h.call.Deadline.UnixMilli()
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("skilltest: encode input document: %v", err))
	}
	return b
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func encode(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return []byte("null"), nil
	case json.RawMessage:
		return v, nil
	case []byte:
		return v, nil
	}
	return json.Marshal(v)
}

func (h *host) InputLen() int32 { return int32(len(h.input)) }

func (h *host) InputRead(buf []byte) int32 { return int32(copy(buf, h.input)) }

func (h *host) OutputWrite(p []byte) int32 {
	if len(h.res.Output)+len(p) > h.call.MaxOutputBytes {
		return abi.CodeTooLarge
	}
	h.res.Output = append(h.res.Output, p...)
	return 0
}

func (h *host) Log(level int32, msg []byte) {
	level = max(0, min(level, 4))
	if len(msg) > abi.MaxLogRecord {
		msg = msg[:abi.MaxLogRecord]
	}
	h.res.Logs = append(h.res.Logs, Log{Level: level, Message: string(bytes.ToValidUTF8(msg, []byte("\uFFFD")))})
}

func (h *host) setError(code int32, errorCode, message string) int32 {
	h.pending, _ = json.Marshal(map[string]any{"error": map[string]string{"code": errorCode, "message": message}})
	h.hasResp = true
	return code
}

func (h *host) CapabilityCall(handle int32, req []byte) int32 {
	h.res.Calls++
	h.pending, h.hasResp = nil, false
	if h.res.Calls > h.call.MaxCalls {
		return h.setError(abi.CodeQuotaExceeded, "quota_exceeded", fmt.Sprintf("more than %d capability calls", h.call.MaxCalls))
	}
	if len(req) > abi.MaxRequestBytes {
		return h.setError(abi.CodeTooLarge, "too_large", fmt.Sprintf("request is %d bytes, over %d", len(req), abi.MaxRequestBytes))
	}
	kind := abi.KindOf(handle)
	var name string
	found := false
	for _, g := range h.grants[kind] {
		if g.handle == handle {
			name, found = g.name, true
		}
	}
	if !found {
		return h.setError(abi.CodeNotGranted, "not_granted", fmt.Sprintf("handle %d is not granted", handle))
	}
	if !json.Valid(req) {
		return h.setError(abi.CodeInvalidRequest, "invalid_request", "request is not JSON")
	}
	if kind == abi.KindHTTP {
		// The host's rule (sdk/ABI.md §5.1): the URL's host must be the
		// handle's host, or below its "*.domain" pattern.
		var doc struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(req, &doc)
		u, err := url.Parse(doc.URL)
		if err != nil || u.Host == "" {
			return h.setError(abi.CodeInvalidRequest, "invalid_url", fmt.Sprintf("url %q is not an absolute URL", doc.URL))
		}
		if host := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."); !hostCovered(name, host) {
			return h.setError(abi.CodeDenied, "host_not_allowed", fmt.Sprintf("host %q is not covered by the grant %q of handle %d", host, name, handle))
		}
	}
	r := Request{Handle: handle, Kind: kind, Name: name, Body: append([]byte(nil), req...)}
	h.res.Requests = append(h.res.Requests, r)
	if h.call.Backend == nil {
		return h.setError(abi.CodeUnavailable, "unavailable", "no backend configured")
	}
	resp := h.call.Backend.Capability(r)
	if resp.Code < 0 {
		return h.setError(resp.Code, resp.ErrorCode, resp.Message)
	}
	if len(resp.Body) > abi.MaxResponseBytes {
		return h.setError(abi.CodeTooLarge, "too_large", "response over 4 MiB")
	}
	h.pending, h.hasResp = resp.Body, true
	return int32(len(resp.Body))
}

func (h *host) ResponseLen() int32 {
	if !h.hasResp {
		return abi.CodeInvalidRequest
	}
	return int32(len(h.pending))
}

func (h *host) ResponseRead(buf []byte) int32 {
	if !h.hasResp {
		return abi.CodeInvalidRequest
	}
	return int32(copy(buf, h.pending))
}

func (h *host) ConfigLen() int32 { return int32(len(h.config())) }

func (h *host) ConfigRead(buf []byte) int32 { return int32(copy(buf, h.config())) }

// config is the call's config document.
func (h *host) config() []byte {
	switch c := h.call.Config.(type) {
	case nil:
		return []byte("{}")
	case json.RawMessage:
		return c
	case []byte:
		return c
	}
	b, err := encode(h.call.Config)
	if err != nil {
		panic("skilltest: Call.Config: " + err.Error())
	}
	return b
}

func (h *host) GrantCount(kind string) int32 { return int32(len(h.grants[kind])) }

func (h *host) GrantHandle(kind string, index int32) int32 {
	gs := h.grants[kind]
	if index < 0 || int(index) >= len(gs) {
		return -1
	}
	return gs[index].handle
}

// hostCovered reports whether the granted host pattern covers host: the
// same name, a strict subdomain of a "*.domain" pattern, or any host for "*".
func hostCovered(pattern, host string) bool {
	pattern = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(pattern)), ".")
	if pattern == "*" || pattern == host {
		return true
	}
	rest, ok := strings.CutPrefix(pattern, "*.")
	return ok && strings.HasSuffix(host, "."+rest)
}
