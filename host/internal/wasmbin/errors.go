package wasmbin

import (
	"strconv"

	"github.com/palyra-go/palyra/host/errcode"
)

// The sentinels of the package. Every error Parse returns is a *FormatError
// (which wraps ErrInvalid) or a *LimitError (which wraps ErrLimit), so
// callers branch with errors.Is and report errcode.Of(err).
var (
	// ErrInvalid: the input is not a well-formed WebAssembly core module
	// binary: bad magic or version, WAT text, a component, truncated or
	// malformed contents, sections out of order, an index out of range, a
	// duplicate export name, a name that is not UTF-8, and so on.
	ErrInvalid = errcode.New("invalid_wasm", "malformed WebAssembly module")
	// ErrLimit: the module is well formed as far as it was read, but a count
	// or size in it exceeds one of the Limits given to Parse.
	ErrLimit = errcode.New("wasm_limit_exceeded", "WebAssembly module exceeds a limit")
)

// FormatError reports why a module is not a valid binary and where. Parse
// returns it for every problem other than a limit; use errors.As to read it.
// It wraps ErrInvalid.
type FormatError struct {
	// Offset is the byte offset in the module at which the problem was
	// found, counting from the first byte of the magic number.
	Offset int64
	// Section names the section being read ("type", "import", "custom",
	// ...), or is "" for the module header and the section framing.
	Section string
	// Reason says what is wrong, in lower case with no trailing period.
	Reason string
}

// Error returns "wasmbin: <section> section at offset N: <reason>", or
// "wasmbin: offset N: <reason>" outside any section.
func (e *FormatError) Error() string {
	return "wasmbin: " + where(e.Section, e.Offset) + ": " + e.Reason
}

// Unwrap returns ErrInvalid.
func (e *FormatError) Unwrap() error { return ErrInvalid }

// LimitError reports a count or size in the module that exceeds one of the
// Limits given to Parse. It wraps ErrLimit.
type LimitError struct {
	// Limit is the name of the Limits field that was exceeded, for example
	// "MaxImports".
	Limit string
	// What names the quantity, for example "import count" or "function
	// body size".
	What string
	// Value is the count or size the module declares.
	Value uint64
	// Max is the limit in force.
	Max uint64
	// Section names the section being read, or is "" for the whole module.
	Section string
	// Offset is the byte offset in the module at which the value was read.
	Offset int64
}

// Error returns "wasmbin: <section> section at offset N: <what> <value>
// exceeds <Limit> (<max>)".
func (e *LimitError) Error() string {
	return "wasmbin: " + where(e.Section, e.Offset) + ": " + e.What + " " +
		strconv.FormatUint(e.Value, 10) + " exceeds " + e.Limit + " (" + strconv.FormatUint(e.Max, 10) + ")"
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

func where(section string, off int64) string {
	s := "offset " + strconv.FormatInt(off, 10)
	if section != "" {
		s = section + " section at " + s
	}
	return s
}
