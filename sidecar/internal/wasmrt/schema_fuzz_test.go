package wasmrt

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSchemaValidator: the sidecar's own check of a call's input against
// the tool's input_schema (prepareInput: well-formed JSON, decoded with
// exact numbers, then validated), with any schema and any input. Compiling
// fails only with ErrInvalidConfig; validation never panics and its
// message is bounded, valid UTF-8. Seeded with the schemas the tests send
// their sidecars (supervisor, mcpserver and the examples) and the inputs
// of real calls.
func FuzzSchemaValidator(f *testing.F) {
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
		v, err := NewSchemaValidator(schema, nil)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("schema %q: %v does not wrap ErrInvalidConfig", schema, err)
			}
			return
		}
		if len(input) == 0 || !json.Valid(input) {
			return // prepareInput refuses it before validation
		}
		doc, err := decodeJSON(input)
		if err != nil {
			return // refused as invalid_input with the decoder's reason
		}
		err = v.ValidateInput(doc)
		if err == nil {
			return
		}
		if msg := err.Error(); len(msg) > maxDetailBytes || !utf8.ValidString(msg) || msg == "" {
			t.Fatalf("message of %d bytes (limit %d), valid UTF-8 %v", len(msg), maxDetailBytes, utf8.ValidString(msg))
		}
	})
}
