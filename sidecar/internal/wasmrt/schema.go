package wasmrt

// Validator checks a tool's input before the guest runs and its output
// after. Values are decoded JSON with numbers as json.Number. A Validator
// must be safe for concurrent use.
//
// The runtime has no schema library of its own (a sidecar validates
// nothing on the trusted side's behalf, and the library's initialization
// cost every sidecar start 2.4 ms): internal/toolschema's Validator is one
// implementation, used by this package's tests.
type Validator interface {
	// ValidateInput returns an error when the tool input is not acceptable;
	// the call fails with ErrInvalidInput and the guest does not run.
	ValidateInput(v any) error
	// ValidateOutput returns an error when the output is not acceptable;
	// the call fails with ErrInvalidOutput.
	ValidateOutput(v any) error
}
