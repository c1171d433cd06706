package a2ui

import (
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/textutil"
)

// The sentinels of the package. Every error the package returns is an
// *Error that wraps one of them, so callers branch with errors.Is and report
// errcode.Of(err).
//
// An error about a limit wraps ErrLimit (whose code errcode.Of reports) and
// also the sentinel of the input it is about: ErrInvalid for a document,
// ErrInvalidPatch for a patch, ErrInvalidSubmit for a form submit. So
// errors.Is(err, ErrInvalid) holds for every error of Validate,
// errors.Is(err, ErrInvalidPatch) for every error of ParsePatch and
// errors.Is(err, ErrInvalidSubmit) for every error of ParseSubmit and
// ValidateSubmit.
var (
	// ErrInvalid: a document is not valid A2UI: bad JSON, an unknown key,
	// component type or prop, a value of the wrong type or out of range.
	ErrInvalid = errcode.New("a2ui_invalid", "invalid A2UI document")
	// ErrLimit: a document, patch or submit is over one of the limits
	// (MaxDocumentBytes, MaxComponents, MaxString, ...). The *Error names
	// the limit and the size seen.
	ErrLimit = errcode.New("a2ui_limit_exceeded", "A2UI document exceeds a limit")
	// ErrInvalidPatch: a patch is not a valid JSON-Patch subset patch.
	ErrInvalidPatch = errcode.New("a2ui_invalid_patch", "invalid A2UI patch")
	// ErrPatchConflict: a valid patch does not apply to the document: a
	// path that does not exist, an index out of range or not canonical, a
	// step through a value that is not an object or array.
	ErrPatchConflict = errcode.New("a2ui_patch_conflict", "A2UI patch conflict")
	// ErrInvalidSubmit: a form submit is malformed or does not match the
	// form it names.
	ErrInvalidSubmit = errcode.New("a2ui_invalid_submit", "invalid A2UI form submit")
)

// Error reports what is wrong with a document, patch or submit and where.
// Every error of the package is an *Error; read it with errors.As.
type Error struct {
	// Path is the RFC 6901 JSON Pointer of the offending value inside the
	// input: "/components/3/props/fields/2/type" in a document,
	// "/ops/1/path" in a patch, "/values/email" in a submit. It is "" when
	// the problem is with the input as a whole (too large, not JSON).
	// Errors of Apply about the patched document point into that document.
	Path string
	// Err is the sentinel: ErrInvalid, ErrLimit, ErrInvalidPatch,
	// ErrPatchConflict or ErrInvalidSubmit.
	Err error
	// Msg says what is wrong, in lower case with no trailing period. Text
	// from the input in it is quoted and bounded.
	Msg string
	// Limit and Seen are the limit and the size seen when Err is ErrLimit;
	// both are 0 otherwise.
	Limit, Seen int

	// input is the sentinel of the kind of input (ErrInvalid,
	// ErrInvalidPatch or ErrInvalidSubmit) that a limit error also wraps.
	input error
}

// Error returns "a2ui: <path>: <msg>", or "a2ui: <msg>" when Path is "".
func (e *Error) Error() string {
	if e.Path == "" {
		return "a2ui: " + e.Msg
	}
	return "a2ui: " + e.Path + ": " + e.Msg
}

// Unwrap returns Err and, for a limit error, the sentinel of the input
// (ErrInvalid, ErrInvalidPatch or ErrInvalidSubmit). Err comes first, so
// errcode.Of reports its code.
func (e *Error) Unwrap() []error {
	if e.input != nil && e.input != e.Err {
		return []error{e.Err, e.input}
	}
	return []error{e.Err}
}

// errs builds the errors of one kind of input.
type errs struct {
	kind error // ErrInvalid, ErrInvalidPatch or ErrInvalidSubmit
}

func (c errs) invalid(path, format string, args ...any) *Error {
	return &Error{Path: path, Err: c.kind, Msg: fmt.Sprintf(format, args...)}
}

// limit reports that what (e.g. "component count") is seen, over limit.
func (c errs) limit(path, what string, limit, seen int) *Error {
	return &Error{
		Path:  path,
		Err:   ErrLimit,
		Msg:   fmt.Sprintf("%s is %d, over the limit of %d", what, seen, limit),
		Limit: limit,
		Seen:  seen,
		input: c.kind,
	}
}

// quote quotes s for a message, cut to 64 bytes so hostile text stays small.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…", textutil.Truncate(s, max))
}
