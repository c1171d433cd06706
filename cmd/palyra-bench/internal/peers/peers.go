package peers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Runner runs one tool call of the echo logic in-process, with a fresh
// instance per call. Every Runner of this package is safe for concurrent use.
type Runner interface {
	// Name names the peer in reports: "wasmtime-go (in-process)",
	// "wazero (in-process)" or "extism go-sdk".
	Name() string
	// Call runs the tool with input, e.g. {"text":"hello"}, and returns its
	// output, e.g. {"echo":"hello"}. A tool error of the guest is a
	// *ToolError.
	Call(ctx context.Context, input []byte) ([]byte, error)
	// Close frees the compiled module and the engine. Calls after Close
	// return ErrClosed. Close is idempotent.
	Close(ctx context.Context) error
}

// Names of the runners.
const (
	NameWasmtime = "wasmtime-go (in-process)"
	NameWazero   = "wazero (in-process)"
	NameExtism   = "extism go-sdk"
)

// ErrClosed is returned by Call after Close.
var ErrClosed = errors.New("peers: runner is closed")

// ToolError is a tool error reported by the guest: the entrypoint returned
// non-zero (sdk/ABI.md §4), or the Extism guest set an error.
type ToolError struct {
	// Code is the guest's error code, e.g. "invalid_input"; "tool_error"
	// when the guest wrote no error document.
	Code string
	// Message is the guest's message.
	Message string
}

// Error returns "peers: tool error <code>: <message>".
func (e *ToolError) Error() string {
	return "peers: tool error " + e.Code + ": " + e.Message
}

// The call the peers make: the echo example's palyra.echo tool.
const (
	abiVersion = "palyra.skills.abi.v1"
	skillID    = "palyra.echo"
	toolID     = "palyra.echo"
	entrypoint = "palyra_plugin_main"

	moduleHost         = "palyra:skills/host@1"
	moduleCapabilities = "palyra:plugins/host-capabilities@0.1.0"

	// defaultDeadline is the deadline_unix_ms of a call whose ctx has none.
	// The peers do not enforce it (no epoch interruption, no close on ctx
	// done): it is only reported to the guest, which ignores it.
	defaultDeadline = 30 * time.Second

	maxOutputBytes       = 1 << 20 // sdk/ABI.md §4
	maxErrorMessageBytes = 4 << 10 // sdk/ABI.md §4
)

// Negative results of the palyra host functions (sdk/ABI.md §7).
const (
	codeNotGranted     int32 = -1
	codeInvalidRequest int32 = -3
	codeTooLarge       int32 = -4
)

// invocations numbers the calls of this process, for invocation_id.
var invocations atomic.Uint64

// inputDocument returns the input document of sdk/ABI.md §3 for one call of
// palyra.echo with no grants. input is embedded verbatim, as a host that
// validated it against the tool's input schema would: it is trusted here,
// so a malformed input makes a malformed document, which the guest SDK
// reports as the tool error abi_error. An empty input is null.
func inputDocument(ctx context.Context, input []byte) []byte {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultDeadline)
	}
	if len(input) == 0 {
		input = []byte("null")
	}
	b := make([]byte, 0, 256+len(input))
	b = append(b, `{"abi":"`+abiVersion+`","invocation_id":"peer-`...)
	b = strconv.AppendUint(b, invocations.Add(1), 10)
	b = append(b, `","skill_id":"`+skillID+`","tool_id":"`+toolID+`","input":`...)
	b = append(b, input...)
	b = append(b, `,"grants":{"http":[],"secrets":[],"storage":[],"channels":[]},"deadline_unix_ms":`...)
	b = strconv.AppendInt(b, deadline.UnixMilli(), 10)
	return append(b, '}')
}

// notGrantedDocument is the pending response after any capability-call:
// these peers grant nothing, so every handle is not_granted (sdk/ABI.md §2.2,
// §7).
var notGrantedDocument = []byte(`{"error":{"code":"not_granted","message":"no capability is granted to this call"}}`)

// invalidRequestDocument is the pending response after a capability-call
// whose request lies outside memory.
var invalidRequestDocument = []byte(`{"error":{"code":"invalid_request","message":"request pointer/length outside memory"}}`)

// result turns what the guest's entrypoint returned and wrote into the
// call's result (sdk/ABI.md §4).
func result(rc int32, out []byte) ([]byte, error) {
	if rc == 0 {
		if len(out) == 0 {
			return []byte("null"), nil
		}
		return out, nil
	}
	return nil, toolError(out)
}

// toolError reads a tool error document {"code":...,"message":...}; any
// other text is the message of the code tool_error (sdk/ABI.md §4).
func toolError(doc []byte) *ToolError {
	var d struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(doc, &d); err == nil && d.Code != "" {
		return &ToolError{Code: d.Code, Message: d.Message}
	}
	msg := doc
	if len(msg) > maxErrorMessageBytes {
		i := maxErrorMessageBytes // cut without splitting a rune
		for i > 0 && !utf8.RuneStart(msg[i]) {
			i--
		}
		msg = msg[:i]
	}
	return &ToolError{Code: "tool_error", Message: string(msg)}
}

// exitResult is the result of a guest that called proc_exit(code)
// (sdk/ABI.md §2.3): 0 is success with the output written so far.
func exitResult(code uint32, out []byte) ([]byte, error) {
	if code == 0 {
		return result(0, out)
	}
	if len(out) > 0 {
		return nil, toolError(out)
	}
	return nil, &ToolError{Code: "tool_error", Message: fmt.Sprintf("proc_exit(%d)", code)}
}
