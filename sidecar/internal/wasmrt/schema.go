package wasmrt

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Validator checks a tool's input before the guest runs and its output
// after. Values are decoded JSON with numbers as json.Number. A Validator
// must be safe for concurrent use.
type Validator interface {
	// ValidateInput returns an error when the tool input is not acceptable;
	// the call fails with ErrInvalidInput and the guest does not run.
	ValidateInput(v any) error
	// ValidateOutput returns an error when the output is not acceptable;
	// the call fails with ErrInvalidOutput.
	ValidateOutput(v any) error
}

// SchemaValidator is a Validator made of compiled JSON Schemas (any draft
// jsonschema/v6 supports; 2020-12 when the schema names none). A nil schema
// accepts everything. It is safe for concurrent use.
type SchemaValidator struct {
	input, output *jsonschema.Schema
}

// NewSchemaValidator compiles the input and output JSON Schema documents;
// either may be nil or empty to accept anything. References to other
// documents ($ref to a URL or file) are refused: a tool's schemas must be
// self-contained.
func NewSchemaValidator(inputSchema, outputSchema []byte) (*SchemaValidator, error) {
	in, err := compileSchema("input", inputSchema)
	if err != nil {
		return nil, err
	}
	out, err := compileSchema("output", outputSchema)
	if err != nil {
		return nil, err
	}
	return &SchemaValidator{input: in, output: out}, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("runtime: schema reference %q: external references are not allowed", url)
}

func compileSchema(name string, doc []byte) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("%w: %s schema: %w", ErrInvalidConfig, name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	url := "urn:palyra:tool:" + name + "-schema"
	if err := c.AddResource(url, v); err != nil {
		return nil, fmt.Errorf("%w: %s schema: %w", ErrInvalidConfig, name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %s schema: %w", ErrInvalidConfig, name, err)
	}
	return s, nil
}

// ValidateInput validates v against the input schema.
func (s *SchemaValidator) ValidateInput(v any) error { return validate(s.input, v) }

// ValidateOutput validates v against the output schema.
func (s *SchemaValidator) ValidateOutput(v any) error { return validate(s.output, v) }

func validate(s *jsonschema.Schema, v any) error {
	if s == nil {
		return nil
	}
	err := s.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		// The detailed message names the field and the rule at fault.
		return errors.New(truncateUTF8(ve.Error(), maxDetailBytes))
	}
	return err
}

var _ Validator = (*SchemaValidator)(nil)
