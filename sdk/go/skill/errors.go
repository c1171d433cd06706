package skill

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// Error is a tool error with a stable code. A handler that returns an error
// for which errors.As finds an *Error reports that Code and Message in the
// tool error document (sdk/ABI.md §4); else one for which errors.As finds a
// *CapabilityError is reported with code "capability_" + its Name()
// (capability_denied, capability_not_granted, ...; capability_error for a
// code this SDK does not know) and the error's text;
// any other error with code CodeToolError and the error's text.
type Error struct {
	// Code is the stable snake_case code callers match on, at most 64 bytes.
	// A code that breaks that rule is reported as CodeToolError.
	Code string
	// Message is the human-readable text; it is cut to 4 KiB when reported.
	Message string

	cause error
}

// Codes the SDK itself reports in tool error documents.
const (
	// CodeToolError is the code of any handler error that is not an *Error.
	CodeToolError = "tool_error"
	// CodeUnknownTool: the input document names a tool no handler serves.
	CodeUnknownTool = "unknown_tool"
	// CodeInvalidInput: the tool input does not decode into the handler's
	// input type.
	CodeInvalidInput = "invalid_input"
	// CodeInvalidOutput: the handler's output does not encode as JSON.
	CodeInvalidOutput = "invalid_output"
	// CodeOutputTooLarge: the output is over the host's output limit.
	CodeOutputTooLarge = "output_too_large"
	// CodeABIError: the input document could not be read or decoded, or a
	// host function failed in a way the ABI does not allow.
	CodeABIError = "abi_error"
	// CodePanic: the handler panicked; the message holds the panic value.
	CodePanic = "panic"
)

// NewError returns an *Error with the given code and message.
func NewError(code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Errorf returns an *Error with the given code and a message formatted as by
// fmt.Errorf; a %w verb wraps its operand, so errors.Is and errors.As see
// through the result.
func Errorf(code, format string, args ...any) *Error {
	cause := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: cause.Error(), cause: cause}
}

// Error returns "code: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the errors wrapped with %w by Errorf, if any.
func (e *Error) Unwrap() error {
	if e.cause == nil {
		return nil
	}
	return errors.Unwrap(e.cause)
}

// Sentinels for the negative results of capability calls (sdk/ABI.md §7).
// Every error returned by a capability helper is a *CapabilityError, and
// errors.Is(err, ErrDenied) and the like match its code.
var (
	ErrNotGranted      = errors.New("skill: capability not granted")            // -1
	ErrDenied          = errors.New("skill: capability denied by policy")       // -2
	ErrInvalidRequest  = errors.New("skill: invalid capability request")        // -3
	ErrTooLarge        = errors.New("skill: over a size limit")                 // -4
	ErrUpstreamFailure = errors.New("skill: upstream failure")                  // -5
	ErrTimeout         = errors.New("skill: capability timed out")              // -6
	ErrQuotaExceeded   = errors.New("skill: capability quota exceeded")         // -7
	ErrUnavailable     = errors.New("skill: capability backend not configured") // -8
	ErrInternal        = errors.New("skill: host internal error")               // -9
)

var codeInfo = map[int32]struct {
	name string
	err  error
}{
	abi.CodeNotGranted:      {"not_granted", ErrNotGranted},
	abi.CodeDenied:          {"denied", ErrDenied},
	abi.CodeInvalidRequest:  {"invalid_request", ErrInvalidRequest},
	abi.CodeTooLarge:        {"too_large", ErrTooLarge},
	abi.CodeUpstreamFailure: {"upstream_failure", ErrUpstreamFailure},
	abi.CodeTimeout:         {"timeout", ErrTimeout},
	abi.CodeQuotaExceeded:   {"quota_exceeded", ErrQuotaExceeded},
	abi.CodeUnavailable:     {"unavailable", ErrUnavailable},
	abi.CodeInternal:        {"internal", ErrInternal},
}

// CapabilityError is a failed capability operation: a negative result of
// capability-call (or a failure the SDK detected before calling, such as a
// host with no matching grant, reported with the code the host would use).
type CapabilityError struct {
	// Kind is "http", "secret", "storage", "channel", or "" for Context.Call.
	Kind string
	// Op is the operation: the HTTP method, or the op of the request.
	Op string
	// Handle is the handle the request went to; 0 when none was found.
	Handle int32
	// Code is the negative result (sdk/ABI.md §7), e.g. -2.
	Code int32
	// Detail is the code of the host's error detail, e.g. "host_not_allowed",
	// read from the pending response; empty when the host gave none.
	Detail string
	// Message is the host's (or the SDK's) explanation.
	Message string
}

// Name returns the ABI name of e.Code, e.g. "denied", or "error_<code>" for
// a code this SDK does not know.
func (e *CapabilityError) Name() string {
	if info, ok := codeInfo[e.Code]; ok {
		return info.name
	}
	return "error_" + strconv.Itoa(int(e.Code))
}

// Error describes the operation and the host's detail.
func (e *CapabilityError) Error() string {
	s := "skill: "
	if e.Kind != "" {
		s += e.Kind + " "
	} else {
		s += "capability "
	}
	if e.Op != "" {
		s += e.Op + " "
	}
	if e.Handle != 0 {
		s += "(handle " + strconv.Itoa(int(e.Handle)) + ") "
	}
	s += "failed: " + e.Name()
	if e.Detail != "" && e.Detail != e.Name() {
		s += " (" + e.Detail + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the sentinel for e.Code (ErrDenied for -2, ...), or nil for
// an unknown code.
func (e *CapabilityError) Unwrap() error {
	if info, ok := codeInfo[e.Code]; ok {
		return info.err
	}
	return nil
}
