package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
)

// The sentinels of the package. Every error Parse, Marshal and CheckCompat
// return wraps exactly one of ErrParse, ErrValidation or the three compat
// sentinels, so callers branch with errors.Is and report errcode.Of(err).
var (
	// ErrParse: skill.toml is too large, not UTF-8, not valid TOML, has an
	// unknown key, lacks a required key or has a value of the wrong type.
	ErrParse = errcode.New("manifest_parse", "manifest parse error")
	// ErrValidation: skill.toml parses but breaks a rule. A path that breaks
	// the artifact path rule also wraps skillpath.ErrInvalid, whose code
	// (invalid_artifact_path) errcode.Of reports, as Palyra does.
	ErrValidation = errcode.New("manifest_validation", "manifest validation failed")
	// ErrUnsupportedProtocolMajor: compat.required_protocol_major is above ProtocolMajor.
	ErrUnsupportedProtocolMajor = errcode.New("unsupported_protocol_major", "unsupported protocol major")
	// ErrUnsupportedRuntimeVersion: compat.min_palyra_version is above RuntimeVersion.
	ErrUnsupportedRuntimeVersion = errcode.New("unsupported_runtime_version", "unsupported runtime version")
	// ErrRuntimeVersionAboveMaximum: RuntimeVersion is above compat.max_palyra_version.
	ErrRuntimeVersionAboveMaximum = errcode.New("runtime_version_above_supported_maximum", "runtime version above the supported maximum")

	// ErrInvalidVersion: a string given to ParseVersion or CompareVersions is
	// not MAJOR.MINOR.PATCH.
	ErrInvalidVersion = errcode.New("invalid_version", "invalid version")
	// ErrUnknownTool: the manifest declares no tool with the requested id.
	// It is errcode.ErrUnknownTool, which the host and the sidecar return
	// too; so are the two schema sentinels below.
	ErrUnknownTool = errcode.ErrUnknownTool
	// ErrInputSchema: a tool input does not match the tool's input_schema.
	ErrInputSchema = errcode.ErrInvalidInput
	// ErrOutputSchema: a tool output does not match the tool's output_schema.
	ErrOutputSchema = errcode.ErrInvalidOutput
)

// FieldError reports a problem with one field of skill.toml. Parse,
// Marshal and CheckCompat return it; use errors.As to read the Path.
//
// The error wraps Err (one of the package's sentinels) and, when there is
// one, Cause: the underlying error, for example a *skillpath.Error for a path
// that breaks the artifact path rule, or the TOML decoder's error.
type FieldError struct {
	// Path names the field in TOML terms, with array indices:
	// "entrypoints.tools[1].id", "capabilities.secrets[0].key_names[2]",
	// `operator.config.properties."api.key".default` (keys that are not bare
	// are quoted). It is "" when the problem is with the whole document
	// (not UTF-8, not TOML, too large).
	Path string
	// Line and Column locate the field (for a missing key: the table that
	// lacks it) in the document, counting from 1. Both are 0 when unknown,
	// for example for errors from CheckCompat or Marshal.
	Line, Column int
	// Reason says what is wrong, in lower case with no trailing period.
	Reason string
	// Err is the sentinel: ErrParse, ErrValidation or a compat sentinel.
	Err error
	// Cause is the underlying error, or nil.
	Cause error
}

// Error returns "manifest: <path>: <reason>".
func (e *FieldError) Error() string {
	if e.Path == "" {
		return "manifest: " + e.Reason
	}
	return "manifest: " + e.Path + ": " + e.Reason
}

// Unwrap returns Cause (when set) and Err. Cause comes first so that
// errcode.Of reports the more specific code of a path-rule failure.
func (e *FieldError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Cause, e.Err}
	}
	return []error{e.Err}
}

// Problems is the error Parse returns when skill.toml has more than one
// problem, so that an author fixes them all in one round. It errors.Is
// every sentinel one of its problems wraps, and errors.As finds the first
// problem as a *FieldError; errcode.Of reports that problem's code.
type Problems struct {
	// List holds the problems: parse problems (syntax, keys, types) first,
	// then broken rules, each group in the order written in the document.
	// It has at least two entries and at most MaxProblems.
	List []*FieldError
	// More counts the problems found beyond MaxProblems, not listed.
	More int
}

// Error returns "manifest: N problems: " and each problem as
// "<path> (line L): <reason>", separated by "; ".
func (p *Problems) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "manifest: %d problems: ", len(p.List)+p.More)
	for i, fe := range p.List {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(fe.Item())
	}
	if p.More > 0 {
		fmt.Fprintf(&b, "; and %d more", p.More)
	}
	return b.String()
}

// Unwrap returns the problems, in List order.
func (p *Problems) Unwrap() []error {
	out := make([]error, len(p.List))
	for i, fe := range p.List {
		out[i] = fe
	}
	return out
}

// ProblemDetail is one problem as Problems.Details lists it.
type ProblemDetail struct {
	Code   string `json:"code"`
	Path   string `json:"path,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Reason string `json:"reason"`
}

// Details returns the problems in a form fit for a JSON error body:
// {"problems": [{code, path, line, column, reason}...], "more": N}.
func (p *Problems) Details() any {
	list := make([]ProblemDetail, len(p.List))
	for i, fe := range p.List {
		list[i] = ProblemDetail{Code: errcode.Of(fe), Path: fe.Path, Line: fe.Line, Column: fe.Column, Reason: fe.Reason}
	}
	return struct {
		Problems []ProblemDetail `json:"problems"`
		More     int             `json:"more,omitempty"`
	}{list, p.More}
}

// Item returns the problem as one line of a list: "<path> (line L):
// <reason>", without the "manifest: " prefix; the line is left out when
// unknown, the path when the problem is with the whole document.
func (e *FieldError) Item() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		if e.Path != "" {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "(line %d)", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// joinKey appends a table key to a field path. Keys that are not bare TOML
// keys are quoted, so a path names exactly one field.
func joinKey(parent, key string) string {
	k := key
	if !isBareKey(key) {
		k = strconv.Quote(key)
	}
	if parent == "" {
		return k
	}
	return parent + "." + k
}

// joinIndex appends an array index to a field path.
func joinIndex(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

func isBareKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
