package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/palyra-go/palyra/internal/textutil"
	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// ABIVersion is the ABI this SDK implements (sdk/ABI.md).
const ABIVersion = "palyra.skills.abi.v1"

// Handler serves one tool. It receives the tool input exactly as the caller
// sent it (already validated against the tool's input_schema by the
// supervisor) and returns the output as one JSON value. A nil or empty output
// is the JSON null.
type Handler func(ctx *Context, input json.RawMessage) (json.RawMessage, error)

// Typed adapts a function with typed input and output to a Handler. The input
// is decoded with encoding/json into a new In (an absent or null input leaves
// it the zero value); a decode failure is the tool error CodeInvalidInput. The
// output is encoded with encoding/json, without HTML escaping.
//
// Typed also builds encoding/json's caches for In and Out right away, so
// that a handler registered in init pays for them in _initialize, which the
// host runs ahead of the call in a prepared instance, rather than on every
// call: each call runs in a fresh instance, whose caches start empty. No
// method of In or Out runs then.
func Typed[In, Out any](fn func(ctx *Context, in In) (Out, error)) Handler {
	if !jsonEnvelope {
		warmCodecs[In, Out]()
	}
	return func(ctx *Context, input json.RawMessage) (json.RawMessage, error) {
		var in In
		if len(bytes.TrimSpace(input)) > 0 {
			if err := json.Unmarshal(input, &in); err != nil {
				return nil, Errorf(CodeInvalidInput, "decode input of %s: %v", ctx.ToolID(), err)
			}
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		b, err := marshalJSON(out)
		if err != nil {
			return nil, Errorf(CodeInvalidOutput, "encode output of %s: %v", ctx.ToolID(), err)
		}
		return b, nil
	}
}

// warmCodecs fills encoding/json's per-type caches for In and Out without
// running any of their methods: it decodes {} into an In unless *In has an
// UnmarshalJSON method, and encodes a nil *Out, which builds Out's encoder
// but writes only null.
func warmCodecs[In, Out any]() {
	var in In
	if _, custom := any(&in).(json.Unmarshaler); !custom {
		_ = json.Unmarshal([]byte(`{}`), &in)
	}
	_, _ = marshalJSON((*Out)(nil))
}

// Mux maps tool ids to handlers. Register handlers in package init functions:
// a Go reactor (-buildmode=c-shared) runs them during _initialize, but never
// runs main. A Mux is safe for concurrent use; registration normally ends
// before the first call.
type Mux struct {
	mu       sync.RWMutex
	handlers map[string]Handler
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{handlers: make(map[string]Handler)} }

// DefaultMux is the Mux served by the exported entrypoint palyra_plugin_main,
// and the one Handle and HandleRaw register with.
var DefaultMux = NewMux()

// Handle registers h for toolID. It panics when toolID is empty, h is nil or
// toolID already has a handler: those are programming errors, found at init.
func (m *Mux) Handle(toolID string, h Handler) {
	if toolID == "" {
		panic("skill: Handle with an empty tool id")
	}
	if h == nil {
		panic("skill: Handle with a nil handler for " + toolID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.handlers == nil {
		m.handlers = make(map[string]Handler)
	}
	if _, dup := m.handlers[toolID]; dup {
		panic("skill: duplicate handler for tool " + toolID)
	}
	m.handlers[toolID] = h
}

// ToolIDs returns the registered tool ids, sorted.
func (m *Mux) ToolIDs() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := make([]string, 0, len(m.handlers))
	for id := range m.handlers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (m *Mux) handler(toolID string) Handler {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.handlers[toolID]
}

// Handle registers a typed handler for toolID on DefaultMux; see Typed and
// Mux.Handle.
func Handle[In, Out any](toolID string, fn func(ctx *Context, in In) (Out, error)) {
	DefaultMux.Handle(toolID, Typed(fn))
}

// HandleRaw registers h for toolID on DefaultMux.
func HandleRaw(toolID string, h Handler) {
	DefaultMux.Handle(toolID, h)
}

func init() {
	abi.Serve = func(mux any, h abi.Host) int32 { return mux.(*Mux).serve(h) }
}

// inputDocument is the input document of sdk/ABI.md §3.
type inputDocument struct {
	ABI            string          `json:"abi"`
	InvocationID   string          `json:"invocation_id"`
	SkillID        string          `json:"skill_id"`
	ToolID         string          `json:"tool_id"`
	Input          json.RawMessage `json:"input"`
	Grants         Grants          `json:"grants"`
	DeadlineUnixMS int64           `json:"deadline_unix_ms"`
}

// errorDocument is the tool error document of sdk/ABI.md §4.
type errorDocument struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// serve runs one invocation: read the input document, dispatch on tool_id,
// write the output or an error document. It returns the entrypoint result:
// 0 on success, 1 on a tool error.
func (m *Mux) serve(h abi.Host) int32 {
	doc, err := readInput(h)
	if err != nil {
		return fail(h, err)
	}
	hd := m.handler(doc.ToolID)
	if hd == nil {
		return fail(h, Errorf(CodeUnknownTool, "no handler for tool %q", doc.ToolID))
	}
	ctx := newContext(h, doc)
	out, err := call(hd, ctx, doc.Input)
	if err != nil {
		return fail(h, err)
	}
	if len(out) == 0 {
		return 0
	}
	if !json.Valid(out) {
		return fail(h, Errorf(CodeInvalidOutput, "output of %s is not JSON", doc.ToolID))
	}
	if len(out) > abi.MaxOutputBytes {
		return fail(h, Errorf(CodeOutputTooLarge, "output is %d bytes, over the %d-byte limit", len(out), abi.MaxOutputBytes))
	}
	switch rc := h.OutputWrite(out); {
	case rc == abi.CodeTooLarge:
		return fail(h, Errorf(CodeOutputTooLarge, "output of %d bytes refused by the host (too_large)", len(out)))
	case rc < 0:
		return fail(h, Errorf(CodeABIError, "output-write returned %d", rc))
	}
	return 0
}

// call runs hd and turns a panic into an error, so a panicking handler still
// produces a tool error document.
func call(hd Handler, ctx *Context, input json.RawMessage) (out json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, Errorf(CodePanic, "handler panicked: %v", r)
		}
	}()
	return hd(ctx, input)
}

func readInput(h abi.Host) (*inputDocument, error) {
	n := h.InputLen()
	if n < 0 {
		return nil, Errorf(CodeABIError, "input-len returned %d", n)
	}
	if n > abi.MaxInputBytes {
		return nil, Errorf(CodeABIError, "input document is %d bytes, over the %d-byte limit", n, abi.MaxInputBytes)
	}
	buf := make([]byte, n)
	if n > 0 {
		if got := h.InputRead(buf); got != n {
			return nil, Errorf(CodeABIError, "input-read returned %d, want %d", got, n)
		}
	}
	doc, err := decodeInputDocument(buf)
	if err != nil {
		return nil, Errorf(CodeABIError, "decode input document: %v", err)
	}
	if doc.ABI != "" && doc.ABI != abi.Version {
		return nil, Errorf(CodeABIError, "input document is for abi %q, this SDK implements %q", doc.ABI, abi.Version)
	}
	return doc, nil
}

// decodeInputDocument decodes the input document, by hand (envelope.go)
// or, in builds with the palyra_sdk_json_envelope tag, with encoding/json.
func decodeInputDocument(b []byte) (*inputDocument, error) {
	if jsonEnvelope {
		var doc inputDocument
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, err
		}
		return &doc, nil
	}
	return parseInputDocument(b)
}

// fail writes the error document for err and returns 1, or a
// *HookDecision's exit code.
func fail(h abi.Host, err error) int32 {
	doc := errorDocument{Code: CodeToolError, Message: err.Error()}
	status := int32(1)
	var te *Error
	var ce *CapabilityError
	var hd *HookDecision
	if errors.As(err, &hd) {
		doc.Code, doc.Message = hd.code(), hd.Reason
		if hd.ExitCode > 0 {
			status = hd.ExitCode
		}
	} else if errors.As(err, &te) {
		doc.Message = te.Message
		if validCode(te.Code) {
			doc.Code = te.Code
		} else {
			doc.Message = te.Error()
		}
	} else if errors.As(err, &ce) {
		// A capability failure the handler passed on: the code says which
		// (capability_denied, capability_quota_exceeded, ...).
		doc.Code = "capability_error"
		if _, known := codeInfo[ce.Code]; known {
			doc.Code = "capability_" + ce.Name()
		}
	}
	doc.Message = textutil.Truncate(doc.Message, abi.MaxErrorMessage)
	if b, err := marshalJSON(doc); err == nil && h.OutputWrite(b) == abi.CodeTooLarge {
		// The message does not fit what is left of the output buffer: keep
		// the code at least. Nothing better is possible if that fails too.
		doc.Message = ""
		if b, err := marshalJSON(doc); err == nil {
			h.OutputWrite(b)
		}
	}
	return status
}

// validCode reports whether code is snake_case ([a-z][a-z0-9_]*) of at most
// 64 bytes (sdk/ABI.md §4).
func validCode(code string) bool {
	if code == "" || len(code) > abi.MaxErrorCode || code[0] < 'a' || code[0] > 'z' {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// marshalJSON encodes v like json.Marshal, without HTML escaping and without
// the trailing newline of json.Encoder.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("skill: encode JSON: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
