package toolschema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/palyra-go/palyra/internal/toolschema"
)

// FuzzValidator: a tool's schemas and a call's input are both untrusted
// (the schema comes from a manifest, the input from a caller). Compiling
// fails only with ErrInvalidSchema; validation never panics and its
// message is bounded, valid UTF-8. Seeded with the schemas of the tests,
// the examples and the supervisor's callers, and the inputs of real calls.
func FuzzValidator(f *testing.F) {
	schemas := []string{
		`{"type":"object","required":["msg"],"properties":{"msg":{"type":"string"}}}`,
		`{"type":"object","properties":{"text":{"type":"string"}}}`,
		`{"properties":{"text":{"type":"string"}}}`,
		`{"type":"object"}`,
		`{"type":"object","required":["url"],"properties":{"url":{"type":"string","format":"uri","maxLength":2048}},"additionalProperties":false}`,
		`{"type":"object","properties":{"key":{"type":"string","pattern":"^[a-z0-9_.-]{1,64}$"},"delta":{"type":"integer","minimum":-1000,"maximum":1000}}}`,
		`{"$ref":"https://example.com/s.json"}`,
		`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
	}
	inputs := []string{`{"msg":"hi"}`, `{"msg":1}`, `{"text":"hi"}`, `{}`, `{"url":"https://example.com/"}`, `{"key":"counter","delta":1}`,
		`{"next":{"next":{"next":{}}}}`, `42`, `{"a":1e400}`, `{"text":"` + strings.Repeat("\u00e9", 3000) + `"}`}
	for i, s := range schemas {
		for j := range 3 {
			f.Add([]byte(s), []byte(inputs[(i+j)%len(inputs)]))
		}
	}
	f.Fuzz(func(t *testing.T, schema, input []byte) {
		v, err := toolschema.New(schema, schema)
		if err != nil {
			if !errors.Is(err, toolschema.ErrInvalidSchema) {
				t.Fatalf("schema %q: %v does not wrap ErrInvalidSchema", schema, err)
			}
			return
		}
		if len(input) == 0 || !json.Valid(input) {
			return // refused as invalid_input before validation
		}
		doc, err := toolschema.Decode(input)
		if err != nil {
			return // refused as invalid_input with the decoder's reason
		}
		for _, err := range []error{v.ValidateInput(doc), v.ValidateOutput(doc)} {
			if err == nil {
				continue
			}
			if msg := err.Error(); len(msg) > toolschema.MaxMessageBytes || !utf8.ValidString(msg) || msg == "" {
				t.Fatalf("message of %d bytes (limit %d), valid UTF-8 %v", len(msg), toolschema.MaxMessageBytes, utf8.ValidString(msg))
			}
		}
	})
}
