package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"
)

const (
	// ProtocolMajor is the highest compat.required_protocol_major this build runs.
	ProtocolMajor = 1
	// RuntimeVersion is the Palyra runtime version this build is compatible
	// with, compared against compat.min_palyra_version / max_palyra_version.
	RuntimeVersion = "0.1.0"

	// MaxManifestBytes is the largest skill.toml Parse reads. Palyra bounds
	// it only by the 16 MiB artifact entry limit; real manifests are a few
	// KiB, and this bound keeps a hostile one cheap to reject.
	MaxManifestBytes = 1 << 20

	// MaxTools is the most tools a manifest may declare. Palyra sets no
	// limit; this one bounds the JSON Schema compilation a hostile manifest
	// can cause before its signature is checked.
	MaxTools = 1024

	// MaxProblems is the most problems Parse lists for one skill.toml; it
	// counts any beyond in Problems.More, so a hostile manifest cannot make
	// an error message of unbounded size.
	MaxProblems = 100
)

// Defaults for keys a manifest leaves out (Palyra's). Parse fills them in,
// so a parsed Manifest never holds a zero quota or version; Marshal leaves
// out zero values, so a Manifest built in code gets the same defaults.
const (
	DefaultManifestVersion     = 2
	DefaultWallClockTimeoutMS  = 30_000
	DefaultFuelBudget          = 10_000_000
	DefaultMaxMemoryBytes      = 64 << 20
	DefaultConfigSchemaVersion = 1
	DefaultContractVersion     = 1
)

const (
	legacyManifestVersion    = 1
	currentManifestVersion   = 2
	minMaxMemoryBytes        = 64 << 10 // one wasm page
	supportedContractVersion = 1
)

// Parse decodes skill.toml and validates it against every rule of Palyra's
// SkillManifest, plus one of its own: each tool's input_schema and
// output_schema must compile as JSON Schema.
//
// Decoding is strict: an unknown key at any level, a missing required key or
// a value of the wrong type is an error wrapping ErrParse; the legacy names
// compat.min_protocol_major and compat.min_runtime_version are accepted, but
// not together with their current names. Keys left out get their defaults.
// A broken rule is an error wrapping ErrValidation. Parse reports every
// problem in one run: a single one as a *FieldError naming the field, more
// as a *Problems listing them all (parse problems first, then broken rules,
// each group in the order written in data), which errors.Is every sentinel
// it holds and errors.As the first *FieldError.
//
// Parse checks the syntax of the compat fields but not whether this build
// satisfies them; see CheckCompat.
func Parse(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, &FieldError{Reason: fmt.Sprintf("skill.toml is %d bytes, above the limit of %d", len(data), MaxManifestBytes), Err: ErrParse}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		line, col := lineCol(data, off)
		return nil, &FieldError{Line: line, Column: col, Reason: fmt.Sprintf("not valid UTF-8 at line %d, column %d", line, col), Err: ErrParse}
	}
	// A leading byte order mark, which some editors write, is not part of
	// the document; the TOML decoder would reject it.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if fe := checkNesting(data); fe != nil {
		return nil, fe
	}
	var root map[string]any
	if err := toml.Unmarshal(data, &root); err != nil {
		return nil, syntaxError(err)
	}
	d := &decoder{info: docInfo{
		present:  map[string]bool{},
		spelled:  map[string]string{},
		nonTable: map[string]string{},
	}}
	m := d.decode(root)
	// The rules are checked even when decoding found problems, so that one
	// run reports everything; a rule problem on a field that already has a
	// decoding problem (or inside or around one) is only its echo, and is
	// dropped.
	v := &validator{info: &d.info}
	v.manifest(m)
	rules := v.errs
	if len(d.errs) > 0 {
		rules = slices.DeleteFunc(rules, func(r pending) bool {
			return slices.ContainsFunc(d.errs, func(p pending) bool { return overlaps(p.path, r.path) }) ||
				slices.ContainsFunc(d.unset, func(p string) bool { return overlaps(p, r.path) })
		})
	}
	if err := problems(placed(d.errs, data), placed(rules, data)); err != nil {
		return nil, err
	}
	return m, nil
}

// problems returns nil for no problem, the *FieldError for one, else
// *Problems holding them all (decoding problems first), at most MaxProblems.
func problems(decoding, rules []*FieldError) error {
	all := append(decoding, rules...)
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	p := &Problems{List: all}
	if len(all) > MaxProblems {
		p.List, p.More = all[:MaxProblems:MaxProblems], len(all)-MaxProblems
	}
	return p
}

// overlaps reports whether one field path is the other or lies inside it.
func overlaps(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if a == "" || a == b {
		return true
	}
	return strings.HasPrefix(b, a) && (b[len(a)] == '.' || b[len(a)] == '[')
}

// syntaxError wraps an error of the TOML decoder.
func syntaxError(err error) *FieldError {
	fe := &FieldError{Err: ErrParse, Cause: err}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		fe.Line, fe.Column = de.Position()
		fe.Reason = fmt.Sprintf("invalid TOML at line %d, column %d: %s", fe.Line, fe.Column, strings.TrimPrefix(de.Error(), "toml: "))
		return fe
	}
	fe.Reason = "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")
	return fe
}

// CheckCompat checks m.Compat against this build: required_protocol_major
// must be at most ProtocolMajor (else ErrUnsupportedProtocolMajor),
// min_palyra_version at most RuntimeVersion (else
// ErrUnsupportedRuntimeVersion) and, when max_palyra_version is set,
// RuntimeVersion at most max (else ErrRuntimeVersionAboveMaximum). The
// error is a *FieldError naming the field and both versions. Palyra runs
// this check when an artifact is built and when it is inspected or verified.
func CheckCompat(m *Manifest) error {
	if m == nil {
		return &FieldError{Reason: "nil manifest", Err: ErrValidation}
	}
	c := &m.Compat
	if c.RequiredProtocolMajor > ProtocolMajor {
		return &FieldError{
			Path:   "compat.required_protocol_major",
			Reason: fmt.Sprintf("skill requires protocol major %d, this build supports up to %d", c.RequiredProtocolMajor, ProtocolMajor),
			Err:    ErrUnsupportedProtocolMajor,
		}
	}
	runtime, _ := ParseVersion(RuntimeVersion)
	minV, err := ParseVersion(c.MinPalyraVersion)
	if err != nil {
		return &FieldError{Path: "compat.min_palyra_version", Reason: err.Error(), Err: ErrValidation, Cause: err}
	}
	if minV.Compare(runtime) > 0 {
		return &FieldError{
			Path:   "compat.min_palyra_version",
			Reason: fmt.Sprintf("skill requires palyra %s or later, this build is compatible with %s", minV, runtime),
			Err:    ErrUnsupportedRuntimeVersion,
		}
	}
	if strings.TrimSpace(c.MaxPalyraVersion) != "" {
		maxV, err := ParseVersion(c.MaxPalyraVersion)
		if err != nil {
			return &FieldError{Path: "compat.max_palyra_version", Reason: err.Error(), Err: ErrValidation, Cause: err}
		}
		if runtime.Compare(maxV) > 0 {
			return &FieldError{
				Path:   "compat.max_palyra_version",
				Reason: fmt.Sprintf("skill supports palyra up to %s, this build is compatible with %s", maxV, runtime),
				Err:    ErrRuntimeVersionAboveMaximum,
			}
		}
	}
	return nil
}

// Tool returns the tool whose id, trimmed, equals id (trimmed), as a pointer
// into m.Entrypoints.Tools.
func (m *Manifest) Tool(id string) (*Tool, bool) {
	i := m.toolIndex(id)
	if i < 0 {
		return nil, false
	}
	return &m.Entrypoints.Tools[i], true
}

func (m *Manifest) toolIndex(id string) int {
	id = strings.TrimSpace(id)
	for i := range m.Entrypoints.Tools {
		if strings.TrimSpace(m.Entrypoints.Tools[i].ID) == id {
			return i
		}
	}
	return -1
}

// RequiresReview reports whether the manifest is dynamic tool builder output
// still awaiting review (see Builder.RequiresReview). Palyra only reports
// this; Palyra-Go enforces it: such a version installs quarantined
// (review_pending) until an operator approves its review.
func (m *Manifest) RequiresReview() bool {
	return m.Builder.RequiresReview()
}

// RequiresReview reports whether b marks experimental output whose
// review_status (trimmed, lower-cased) is neither "approved" nor "signed".
// A nil Builder needs no review.
func (b *Builder) RequiresReview() bool {
	if b == nil || !b.Experimental {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(b.ReviewStatus)) {
	case "approved", "signed":
		return false
	}
	return true
}

// IsEmpty reports whether the operator section holds nothing: no strings,
// no lists, and no plugin or config table (an empty [operator.plugin] table
// counts as present). A legacy manifest_version 1 manifest must have an
// empty operator section.
func (o *Operator) IsEmpty() bool {
	return o.DisplayName == "" && o.Summary == "" && o.Description == "" &&
		len(o.Categories) == 0 && len(o.Tags) == 0 && o.DocsURL == "" &&
		o.Plugin == nil && o.Config == nil
}
