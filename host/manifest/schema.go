package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// maxReasonBytes bounds the reason of an InstanceError, which may quote
// part of an untrusted instance.
const maxReasonBytes = 512

// schemaURL is the base URI under which a tool schema is compiled. It names
// nothing outside the schema: the compiler has no loader.
const schemaURL = "urn:palyra:skill:tool-schema"

// noLoader refuses every external resource, so a "$ref" (or "$schema") to an
// http, https or file URL fails closed instead of touching the network or
// the disk.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("external schema references are not allowed")
}

// compileSchema converts a tool schema decoded from TOML to JSON values and
// compiles it as JSON Schema (draft 2020-12 unless "$schema" names another
// known draft). Problems are reported against path.
func compileSchema(path string, doc map[string]any) (sch *jsonschema.Schema, errs []pending) {
	if doc == nil {
		return nil, []pending{{path: path, reason: "must be a table (a JSON Schema object)", err: ErrValidation}}
	}
	var c collector
	jv := toJSON(&c, path, doc, 0)
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	defer func() {
		// The compiler runs on untrusted input; a panic in it must not take
		// the host down.
		if r := recover(); r != nil {
			sch, errs = nil, []pending{{path: path, reason: fmt.Sprintf("not a valid JSON Schema: compiler failed: %v", r), err: ErrValidation}}
		}
	}()
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource(schemaURL, jv); err != nil {
		return nil, []pending{{path: path, reason: "not a valid JSON Schema: " + truncate(oneLine(err.Error()), maxReasonBytes), err: ErrValidation, cause: err}}
	}
	s, err := comp.Compile(schemaURL)
	if err != nil {
		return nil, []pending{{path: path, reason: "not a valid JSON Schema: " + compileReason(err), err: ErrValidation, cause: err}}
	}
	return s, nil
}

// compileReason turns a compiler error into one line. A schema that breaks
// the metaschema is reported by its first failing keyword.
func compileReason(err error) string {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			loc, why := describe(ve)
			return fmt.Sprintf("at %q: %s", loc, why)
		}
	}
	return truncate(oneLine(err.Error()), maxReasonBytes)
}

// toJSON converts a TOML value to the JSON value the schema library wants
// (json.Number for numbers). TOML date-times and non-finite floats have no
// JSON equivalent and are reported, as is nesting deeper than MaxNesting
// (which also stops a cyclic map in a manifest built in code).
func toJSON(c *collector, path string, v any, depth int) any {
	if depth > MaxNesting {
		c.addf(ErrValidation, path, "nested more than %d levels deep", MaxNesting)
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(x))
		for _, k := range keys {
			out[k] = toJSON(c, joinKey(path, k), x[k], depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toJSON(c, joinIndex(path, i), e, depth+1)
		}
		return out
	case string, bool:
		return x
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			c.addf(ErrValidation, path, "%v has no JSON equivalent", x)
			return nil
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	case json.Number:
		if _, err := strconv.ParseFloat(string(x), 64); err != nil {
			c.addf(ErrValidation, path, "%q is not a JSON number", truncate(string(x), 80))
			return nil
		}
		return x
	case []string: // from manifests built in code
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	}
	// Other Go numbers, from manifests built in code.
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return toJSON(c, path, rv.Int(), depth)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return json.Number(strconv.FormatUint(rv.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		return toJSON(c, path, rv.Float(), depth)
	}
	c.addf(ErrValidation, path, "%s has no JSON equivalent", tomlType(v))
	return nil
}

// describe renders a validation failure as the JSON pointer of the failing
// value and one line saying why. It follows the first cause down to a
// leaf, except at a oneOf or anyOf that no branch matched: there every
// branch's own failure is named ("branch 0: ...; branch 1: ..."), since
// the first alone sends the author after the wrong branch.
func describe(ve *jsonschema.ValidationError) (location, reason string) {
	for {
		var word string
		switch ve.ErrorKind.(type) {
		case *kind.OneOf:
			word = "oneOf"
		case *kind.AnyOf:
			word = "anyOf"
		}
		if word != "" && len(ve.Causes) > 0 {
			parts := make([]string, len(ve.Causes))
			for i, c := range ve.Causes {
				loc, why := describe(c)
				if loc != jsonPointer(ve.InstanceLocation) {
					why = fmt.Sprintf("at %q: %s", loc, why)
				}
				parts[i] = fmt.Sprintf("branch %d: %s", branchIndex(c.SchemaURL, word, i), why)
			}
			return jsonPointer(ve.InstanceLocation), truncate(fmt.Sprintf("'%s' failed, no branch matched: %s", word, strings.Join(parts, "; ")), maxBranchesReasonBytes)
		}
		if len(ve.Causes) == 0 {
			return jsonPointer(ve.InstanceLocation), leafMessage(ve)
		}
		ve = ve.Causes[0]
	}
}

// maxBranchesReasonBytes bounds a reason that names every branch of a
// oneOf or anyOf (each branch's own reason is bounded by maxReasonBytes).
const maxBranchesReasonBytes = 4 * maxReasonBytes

// branchIndex reads the branch number from a cause's schema location
// ("...#/oneOf/2" or "...#/oneOf/2/properties/..."), or returns i.
func branchIndex(schemaURL, word string, i int) int {
	_, frag, ok := strings.Cut(schemaURL, "#")
	if !ok {
		return i
	}
	at := strings.LastIndex(frag, "/"+word+"/")
	if at < 0 {
		return i
	}
	rest := frag[at+len(word)+2:]
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		rest = rest[:j]
	}
	if n, err := strconv.Atoi(rest); err == nil {
		return n
	}
	return i
}

func leafMessage(leaf *jsonschema.ValidationError) string {
	if out := leaf.BasicOutput(); out != nil && out.Error != nil {
		return truncate(oneLine(out.Error.String()), maxReasonBytes)
	}
	return truncate(oneLine(leaf.Error()), maxReasonBytes)
}

// jsonPointer renders instance location tokens as an RFC 6901 pointer.
func jsonPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// ToolSchemas holds the compiled input and output JSON Schemas of one tool.
// It is immutable and safe for concurrent use; compile it once with
// Manifest.ToolSchemas and keep it for as long as the manifest is in use.
type ToolSchemas struct {
	toolID        string
	input, output *jsonschema.Schema
	// inFast and outFast accept without the full validator the instances
	// a schema of "type" alone (or no keyword at all) accepts: see
	// fastCheck.
	inFast, outFast fastCheck
}

// fastCheck is a check of an instance that needs no decoding: for a schema
// whose only assertion is one "type" of object, array, string, boolean or
// null (or that asserts nothing), valid JSON whose first byte is of that
// type matches it. It only ever accepts: an instance it does not accept
// goes to the full validator, which accepts it or says why not. So the
// result is the full validator's; the common call with a schema like
// {type = "object"} is spared decoding its input into Go values.
type fastCheck struct {
	on    bool
	first byte // the first byte of an instance of the type; 0: any value
}

// fastCheckOf returns the fast check of schema doc (as compiled): on only
// for "type" alone among the assertions (annotations may be there).
func fastCheckOf(doc map[string]any) fastCheck {
	var fc fastCheck
	for k, v := range doc {
		switch k {
		case "title", "description", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly":
			// annotations: they assert nothing
		case "type":
			t, ok := v.(string)
			if !ok {
				return fastCheck{}
			}
			switch t {
			case "object":
				fc.first = '{'
			case "array":
				fc.first = '['
			case "string":
				fc.first = '"'
			case "boolean":
				fc.first = 'b' // t or f, see accepts
			case "null":
				fc.first = 'n'
			default: // number and integer need the value
				return fastCheck{}
			}
		default:
			return fastCheck{}
		}
	}
	fc.on = true
	return fc
}

// accepts reports whether data is valid JSON of the check's type; false
// means "ask the full validator", not "invalid".
func (fc fastCheck) accepts(data []byte) bool {
	if !fc.on || !json.Valid(data) {
		return false
	}
	if fc.first == 0 {
		return true
	}
	i := 0
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	if i == len(data) {
		return false
	}
	if fc.first == 'b' {
		return data[i] == 't' || data[i] == 'f'
	}
	return data[i] == fc.first
}

// ToolSchemas compiles the input_schema and output_schema of the tool whose
// id (trimmed) is toolID. Parse has already checked that they compile, so for
// a parsed manifest the only error is ErrUnknownTool. Each call compiles
// afresh; callers that validate often should keep the result.
func (m *Manifest) ToolSchemas(toolID string) (*ToolSchemas, error) {
	i := m.toolIndex(toolID)
	if i < 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, truncate(toolID, 80))
	}
	tl := &m.Entrypoints.Tools[i]
	base := joinIndex("entrypoints.tools", i)
	in, errs := compileSchema(base+".input_schema", tl.InputSchema)
	if len(errs) > 0 {
		return nil, first(errs, nil)
	}
	out, errs := compileSchema(base+".output_schema", tl.OutputSchema)
	if len(errs) > 0 {
		return nil, first(errs, nil)
	}
	return &ToolSchemas{toolID: strings.TrimSpace(tl.ID), input: in, output: out,
		inFast: fastCheckOf(tl.InputSchema), outFast: fastCheckOf(tl.OutputSchema)}, nil
}

// ToolID returns the id of the tool the schemas belong to.
func (s *ToolSchemas) ToolID() string { return s.toolID }

// ValidateInput checks v against the tool's input_schema. v is a JSON value
// as encoding/json decodes into an any (map[string]any, []any, string,
// float64 or json.Number, bool, nil). A mismatch is an *InstanceError
// wrapping ErrInputSchema.
func (s *ToolSchemas) ValidateInput(v any) error {
	return s.validate(s.input, v, "input", ErrInputSchema)
}

// ValidateOutput checks v against the tool's output_schema, as
// ValidateInput does; a mismatch wraps ErrOutputSchema.
func (s *ToolSchemas) ValidateOutput(v any) error {
	return s.validate(s.output, v, "output", ErrOutputSchema)
}

// ValidateInputJSON decodes data as one JSON value, keeping numbers exact,
// and checks it against the input_schema. Data that is not JSON is reported
// as an *InstanceError wrapping ErrInputSchema too.
func (s *ToolSchemas) ValidateInputJSON(data []byte) error {
	if s.inFast.accepts(data) {
		return nil
	}
	return s.validateJSON(s.input, data, "input", ErrInputSchema)
}

// ValidateOutputJSON is ValidateInputJSON for the output_schema; errors wrap
// ErrOutputSchema.
func (s *ToolSchemas) ValidateOutputJSON(data []byte) error {
	if s.outFast.accepts(data) {
		return nil
	}
	return s.validateJSON(s.output, data, "output", ErrOutputSchema)
}

func (s *ToolSchemas) validateJSON(sch *jsonschema.Schema, data []byte, which string, sentinel error) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &InstanceError{ToolID: s.toolID, Which: which, Reason: "not valid JSON: " + truncate(oneLine(err.Error()), maxReasonBytes), Err: sentinel, Cause: err}
	}
	return s.validate(sch, v, which, sentinel)
}

func (s *ToolSchemas) validate(sch *jsonschema.Schema, v any, which string, sentinel error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &InstanceError{ToolID: s.toolID, Which: which, Reason: fmt.Sprintf("value cannot be validated: %v", r), Err: sentinel}
		}
	}()
	verr := sch.Validate(v)
	if verr == nil {
		return nil
	}
	ie := &InstanceError{ToolID: s.toolID, Which: which, Err: sentinel, Cause: verr}
	var ve *jsonschema.ValidationError
	if errors.As(verr, &ve) {
		ie.Location, ie.Reason = describe(ve)
	} else {
		ie.Reason = truncate(oneLine(verr.Error()), maxReasonBytes)
	}
	return ie
}

// InstanceError reports a tool input or output that does not match the
// tool's schema. It wraps ErrInputSchema or ErrOutputSchema.
type InstanceError struct {
	// ToolID is the tool whose schema was applied.
	ToolID string
	// Which is "input" or "output".
	Which string
	// Location is the JSON pointer (RFC 6901) of the first failing value in
	// the instance, or of the value no oneOf/anyOf branch matched (Reason
	// then names each branch's failure); "" is the whole value.
	Location string
	// Reason says what is wrong, bounded in length because it may quote
	// part of the instance.
	Reason string
	// Err is ErrInputSchema or ErrOutputSchema.
	Err error
	// Cause is the schema library's *jsonschema.ValidationError with every
	// failure, or the JSON syntax error; it may be nil.
	Cause error
}

// Error returns `manifest: tool "<id>" input at "<pointer>": <reason>`.
func (e *InstanceError) Error() string {
	return fmt.Sprintf("manifest: tool %q %s at %q: %s", e.ToolID, e.Which, e.Location, e.Reason)
}

// Unwrap returns Err and, when set, Cause.
func (e *InstanceError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}
