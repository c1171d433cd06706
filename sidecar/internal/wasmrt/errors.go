package wasmrt

import (
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"

	"github.com/palyra-go/palyra/sdk/abi"
)

// Call outcomes (sdk/ABI.md §7). Every error returned by [Module.Invoke]
// matches exactly one of them with errors.Is, and errcode.Of reports its
// stable code. The outcomes the host reports too (timeout, invalid_input,
// invalid_output, output_too_large, and canceled below) are the shared
// sentinels of host/errcode, so the supervisor's errors and these are one.
var (
	// ErrFuelExhausted: the call used its whole fuel budget.
	ErrFuelExhausted = errcode.New("fuel_exhausted", "fuel exhausted")
	// ErrTimeout: the call's wall-clock deadline passed (epoch interruption,
	// a host function that saw the deadline, or the ctx deadline). When the
	// ctx deadline was the one that ended the call, the error also matches
	// context.DeadlineExceeded.
	ErrTimeout = errcode.ErrTimeout
	// ErrMemoryLimit: a memory or table could not be created within its
	// limit (a declared minimum over it), or a Go guest ran out of memory.
	ErrMemoryLimit = errcode.New("memory_limit_exceeded", "memory limit exceeded")
	// ErrTrap: any other trap. The error is a *TrapError naming the trap.
	ErrTrap = errcode.New("trap", "guest trapped")
	// ErrToolError: the entrypoint returned non-zero or called proc_exit
	// with a non-zero code. The error is a *ToolError.
	ErrToolError = errcode.New("tool_error", "tool reported an error")
	// ErrInvalidInput: the input (or the config) is not JSON or is over
	// its limit. The guest did not run. Schemas are checked on the trusted
	// side, not here.
	ErrInvalidInput = errcode.ErrInvalidInput
	// ErrInvalidOutput: the output is not JSON.
	ErrInvalidOutput = errcode.ErrInvalidOutput
	// ErrOutputTooLarge: the guest returned 0 after output-write refused a
	// write that would have passed MaxOutputBytes.
	ErrOutputTooLarge = errcode.ErrOutputTooLarge
	// ErrMissingExport: no entrypoint of the right signature, or no
	// exported memory in a module that imports pointer-taking functions.
	ErrMissingExport = errcode.New("missing_export", "module lacks a required export")
	// ErrLinkError: the module imports something the host does not
	// provide, or a provided function with another signature.
	ErrLinkError = errcode.New("link_error", "module imports what the host does not provide")
)

// Errors that are not call outcomes of the ABI.
var (
	// ErrCanceled: the invocation's ctx was canceled before or during the
	// call. The error also matches context.Canceled.
	ErrCanceled = errcode.ErrCanceled
	// ErrInvalidModule: the bytes are not a valid WebAssembly module.
	ErrInvalidModule = errcode.New("invalid_module", "invalid WebAssembly module")
	// ErrClosed: the Engine or Module was closed.
	ErrClosed = errcode.New("runtime_closed", "runtime is closed")
	// ErrInvalidConfig: a Config, ModuleConfig or Limits value is out of range.
	ErrInvalidConfig = errcode.New("invalid_config", "invalid runtime configuration")
)

// maxDetailBytes bounds guest-controlled text carried in errors.
const maxDetailBytes = 4 << 10

// TrapError is the error of a call that ended in a trap other than fuel
// exhaustion, epoch interruption or a memory limit. It matches ErrTrap.
type TrapError struct {
	// Code names the trap: one of "stack_overflow", "memory_out_of_bounds",
	// "heap_misaligned", "table_out_of_bounds", "indirect_call_to_null",
	// "bad_signature", "integer_overflow", "integer_division_by_zero",
	// "bad_conversion_to_integer", "unreachable", "proc_exit" (proc_exit(0)
	// during _initialize), or "unknown" when wasmtime gave no code.
	Code string
	// Message is wasmtime's trap message with its backtrace, at most 4 KiB.
	Message string
}

// Error implements error.
func (e *TrapError) Error() string {
	return fmt.Sprintf("%s: %s: %q", ErrTrap.Error(), e.Code, e.Message)
}

// Unwrap returns ErrTrap.
func (e *TrapError) Unwrap() error { return ErrTrap }

// ToolError is the error of a call whose entrypoint reported a failure
// (sdk/ABI.md §4). It matches ErrToolError; its Code is the guest's own code
// and is not an errcode code.
type ToolError struct {
	// ExitCode is the entrypoint's return value or the proc_exit code.
	ExitCode int32
	// Code is the guest's snake_case code (at most 64 bytes), or
	// "tool_error" when the guest gave none.
	Code string
	// Message is the guest's message, valid UTF-8, at most 4 KiB.
	Message string
}

// Error implements error. Guest text is quoted, never interpreted.
func (e *ToolError) Error() string {
	return fmt.Sprintf("%s (exit code %d): %q: %q", ErrToolError.Error(), e.ExitCode, e.Code, e.Message)
}

// Unwrap returns ErrToolError.
func (e *ToolError) Unwrap() error { return ErrToolError }

// ABICode is a negative result of a host function (sdk/ABI.md §7); the
// values and names live in package abi, shared with the supervisor and the
// guest SDK.
type ABICode = abi.Code

// The host-function error codes of sdk/ABI.md §7.
const (
	CodeNotGranted      = abi.CodeNotGranted
	CodeDenied          = abi.CodeDenied
	CodeInvalidRequest  = abi.CodeInvalidRequest
	CodeTooLarge        = abi.CodeTooLarge
	CodeUpstreamFailure = abi.CodeUpstreamFailure
	CodeTimeout         = abi.CodeTimeout
	CodeQuotaExceeded   = abi.CodeQuotaExceeded
	CodeUnavailable     = abi.CodeUnavailable
	CodeInternal        = abi.CodeInternal
)

// CapabilityError is how a Broker refuses a capability request: the guest's
// capability-call returns Code and the pending response becomes
// {"error":{"code":Code.String(),"message":Message}}. Message is shown to
// the guest, so it must not carry secrets; it is cut to 1 KiB.
type CapabilityError struct {
	Code    ABICode
	Message string
}

// Error implements error.
func (e *CapabilityError) Error() string {
	return fmt.Sprintf("capability: %s: %q", e.Code, e.Message)
}
