package toolschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/textutil"
)

// ErrInvalidSchema is a schema document that is not JSON, not a schema,
// or refers to another document.
var ErrInvalidSchema = errcode.New("invalid_tool_schema", "invalid tool schema")

// MaxMessageBytes bounds the message of a validation error.
const MaxMessageBytes = 4 << 10

// Validator holds a tool's compiled input and output schemas (any draft
// jsonschema/v6 supports; 2020-12 when the schema names none). A nil
// schema accepts everything. It is safe for concurrent use.
type Validator struct {
	input, output *jsonschema.Schema
}

// New compiles the input and output JSON Schema documents; either may be
// nil or empty to accept anything. References to other documents ($ref to
// a URL or a file) are refused: a tool's schemas must be self-contained.
func New(inputSchema, outputSchema []byte) (*Validator, error) {
	in, err := compile("input", inputSchema)
	if err != nil {
		return nil, err
	}
	out, err := compile("output", outputSchema)
	if err != nil {
		return nil, err
	}
	return &Validator{input: in, output: out}, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema reference %q: external references are not allowed", url)
}

func compile(name string, doc []byte) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("%w: %s schema: %w", ErrInvalidSchema, name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	url := "urn:palyra:tool:" + name + "-schema"
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("%w: %s schema: %w", ErrInvalidSchema, name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %s schema: %w", ErrInvalidSchema, name, err)
	}
	return s, nil
}

// ValidateInput validates v (decoded JSON, numbers as json.Number: see
// Decode) against the input schema.
func (s *Validator) ValidateInput(v any) error { return validate(s.input, v) }

// ValidateOutput validates v against the output schema.
func (s *Validator) ValidateOutput(v any) error { return validate(s.output, v) }

// HasInput and HasOutput report whether there is a schema to check.
func (s *Validator) HasInput() bool { return s.input != nil }

// HasOutput reports whether there is an output schema to check.
func (s *Validator) HasOutput() bool { return s.output != nil }

func validate(s *jsonschema.Schema, v any) error {
	if s == nil {
		return nil
	}
	err := s.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		// The detailed message names the field and the rule at fault.
		return errors.New(textutil.TruncateValid(ve.Error(), MaxMessageBytes))
	}
	return err
}

// Decode decodes one JSON value with exact numbers (json.Number), as the
// validators expect; trailing data is an error.
func Decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}
