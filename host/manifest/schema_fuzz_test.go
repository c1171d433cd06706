package manifest_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

// toolInputs are inputs real calls send (the tests of host, daemon,
// mcpserver and the examples) plus the malformed ones the API tests send.
var toolInputs = []string{
	`{}`, `{"msg":"hi"}`, `{"text":"hi"}`, `{"hello":"world"}`, `{"hello":"exit:10"}`, `{"url":"https://example.com/"}`,
	`{"key":"counter","delta":1}`, `{"event":{"kind":"skill:installed","skill_id":"acme.echo"}}`, `42`, `null`, `[]`,
	`{"msg":1}`, `{"text":"` + strings.Repeat("é", 300) + `"}`, `{"a":1e400}`, `{"n":12345678901234567890123}`, `not json`, `{"a":`,
}

// FuzzToolSchemas: the host's check of a tool input against the manifest's
// input_schema (host/gate.go, before anything reaches a sidecar), with any
// schema and any input. Compiling never panics and fails only with a coded
// error; validating returns nil or an *InstanceError wrapping
// ErrInputSchema whose reason is bounded, valid UTF-8 text and whose
// location is a JSON pointer; the same input gets the same answer twice.
// Seeded with the input_schema of every tool of the manifests in
// testdata and the examples, each with the inputs real calls send.
func FuzzToolSchemas(f *testing.F) {
	var schemas [][]byte
	for _, root := range []string{manifestsDir, vectorsDir, "../../sdk/examples"} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".toml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m, err := manifest.Parse(data)
			if err != nil {
				return nil // the refused manifests of testdata/manifests/bad
			}
			for _, tl := range m.Entrypoints.Tools {
				if b, err := json.Marshal(tl.InputSchema); err == nil {
					schemas = append(schemas, b)
				}
			}
			return nil
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	if len(schemas) == 0 {
		f.Fatal("no tool schema found to seed with")
	}
	for i, s := range schemas {
		f.Add(s, []byte(toolInputs[i%len(toolInputs)]))
	}
	for _, in := range toolInputs {
		f.Add([]byte(`{"type":"object","required":["msg"],"properties":{"msg":{"type":"string","maxLength":100}}}`), []byte(in))
	}
	f.Add([]byte(`{"$ref":"https://example.com/s.json"}`), []byte(`{}`))
	for _, sch := range []string{`{"type":"object"}`, `{"type":"array","title":"t"}`, `{"type":"string"}`, `{"type":"boolean"}`, `{"type":"null"}`, `{}`} {
		for _, in := range []string{` {"a":[1]} `, `[]`, `"s"`, `true`, `false`, `null`, `0`, `{"a":}`, `{} {}`, "\t\n{}", ``, ` `} {
			f.Add([]byte(sch), []byte(in))
		}
	}
	f.Add([]byte(`{"type":"object","properties":{"a":{"multipleOf":1e-300}},"patternProperties":{"^x(":{}}}`), []byte(`{"a":1e300}`))
	f.Fuzz(func(t *testing.T, schema, input []byte) {
		var doc map[string]any
		if json.Unmarshal(schema, &doc) != nil || doc == nil {
			return // a manifest's input_schema is a TOML table
		}
		var m manifest.Manifest
		m.Entrypoints.Tools = []manifest.Tool{{ID: "fuzz.tool", Name: "tool", InputSchema: doc, OutputSchema: map[string]any{}}}
		sch, err := m.ToolSchemas("fuzz.tool")
		if err != nil {
			if errcode.Of(err) == "" || errcode.Of(err) == errcode.Internal {
				t.Fatalf("schema %s: uncoded error %v", schema, err)
			}
			return
		}
		check := func() error {
			err := sch.ValidateInputJSON(input)
			if err == nil {
				return nil
			}
			var ie *manifest.InstanceError
			if !errors.As(err, &ie) || !errors.Is(err, manifest.ErrInputSchema) {
				t.Fatalf("schema %s input %q: %v is not an *InstanceError wrapping ErrInputSchema", schema, input, err)
			}
			if len(ie.Reason) > 2<<10 || !utf8.ValidString(ie.Reason) || ie.Reason == "" {
				t.Fatalf("reason of %d bytes (valid UTF-8 %v): %.200q", len(ie.Reason), utf8.ValidString(ie.Reason), ie.Reason)
			}
			if ie.Location != "" && !strings.HasPrefix(ie.Location, "/") {
				t.Fatalf("location %q is not a JSON pointer", ie.Location)
			}
			return err
		}
		first, second := check(), check()
		if (first == nil) != (second == nil) || first != nil && first.Error() != second.Error() {
			t.Fatalf("schema %s input %q: %v, then %v", schema, input, first, second)
		}
		// The fast check of a type-only schema answers as the full
		// validator does.
		if slow := manifest.SlowValidateInputJSON(sch, input); (first == nil) != (slow == nil) {
			t.Fatalf("schema %s input %q: %v, the full validator %v", schema, input, first, slow)
		}
	})
}
