package manifest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestToolSchemas(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/full_v2.toml"))
	s, err := m.ToolSchemas(" acme.weather.current ")
	if err != nil {
		t.Fatal(err)
	}
	if s.ToolID() != "acme.weather.current" {
		t.Fatalf("ToolID = %q", s.ToolID())
	}
	tests := []struct {
		name     string
		output   bool
		value    string
		location string // "-" = valid
	}{
		{"input ok", false, `{"city": "Oslo", "units": "metric"}`, "-"},
		{"input wrong type", false, `{"city": 5}`, "/city"},
		{"input enum", false, `{"city": "Oslo", "units": "kelvin"}`, "/units"},
		{"input missing required", false, `{}`, ""},
		{"input extra property", false, `{"city": "Oslo", "x": 1}`, ""},
		{"input empty city", false, `{"city": ""}`, "/city"},
		{"input not an object", false, `["Oslo"]`, ""},
		{"output ok", true, `{"temperature": -3.5}`, "-"},
		{"output wrong type", true, `{"temperature": "cold"}`, "/temperature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := decodeJSON(t, tt.value)
			validate, sentinel, code := s.ValidateInput, manifest.ErrInputSchema, "invalid_input"
			validateJSON := s.ValidateInputJSON
			if tt.output {
				validate, sentinel, code = s.ValidateOutput, manifest.ErrOutputSchema, "invalid_output"
				validateJSON = s.ValidateOutputJSON
			}
			for _, err := range []error{validate(v), validateJSON([]byte(tt.value))} {
				if tt.location == "-" {
					if err != nil {
						t.Fatalf("unexpected error: %v", err)
					}
					continue
				}
				var ie *manifest.InstanceError
				if !errors.As(err, &ie) {
					t.Fatalf("error %v is not an *InstanceError", err)
				}
				if !errors.Is(err, sentinel) || errcode.Of(err) != code {
					t.Errorf("error %v: want %v with code %s, got code %s", err, sentinel, code, errcode.Of(err))
				}
				if ie.Location != tt.location || ie.ToolID != "acme.weather.current" || ie.Reason == "" {
					t.Errorf("InstanceError = %+v, want location %q", ie, tt.location)
				}
			}
		})
	}

	// Bad JSON is an input error too.
	for _, bad := range []string{`{"city": `, `{} {}`, ``} {
		err := s.ValidateInputJSON([]byte(bad))
		var ie *manifest.InstanceError
		if !errors.As(err, &ie) || !errors.Is(err, manifest.ErrInputSchema) {
			t.Errorf("ValidateInputJSON(%q) = %v", bad, err)
		}
	}

	if _, err := m.ToolSchemas("acme.weather.nope"); !errors.Is(err, manifest.ErrUnknownTool) || errcode.Of(err) != "unknown_tool" {
		t.Errorf("unknown tool: %v", err)
	}
}

// TestToolSchemasRefs: local references resolve; draft-07 is honoured;
// exact integers are compared exactly.
func TestToolSchemasRefs(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/schema_refs.toml"))
	s, err := m.ToolSchemas("acme.echo")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		output bool
		value  string
		ok     bool
		loc    string
	}{
		{false, `{"item": "abc"}`, true, ""},
		{false, `{"item": "ABC"}`, false, "/item"},
		{true, `{"score": 1.5, "tags": ["a"]}`, true, ""},
		{true, `{"score": 1000001}`, false, "/score"},
		{true, `{"score": -1.5}`, true, ""},
		{true, `{"extra": 1}`, false, ""},
		{true, `{"tags": ["a", 1]}`, false, "/tags/1"},
	}
	for _, c := range cases {
		validate := s.ValidateInputJSON
		if c.output {
			validate = s.ValidateOutputJSON
		}
		err := validate([]byte(c.value))
		if c.ok != (err == nil) {
			t.Errorf("%s: err = %v, want ok=%v", c.value, err, c.ok)
			continue
		}
		var ie *manifest.InstanceError
		if err != nil && (!errors.As(err, &ie) || ie.Location != c.loc) {
			t.Errorf("%s: error %+v, want location %q", c.value, err, c.loc)
		}
	}
}

// TestToolSchemasUnparsed: a manifest built in code is compiled on demand,
// and a schema that does not compile is reported as Parse would.
func TestToolSchemasUnparsed(t *testing.T) {
	m := &manifest.Manifest{Entrypoints: manifest.Entrypoints{Tools: []manifest.Tool{
		{ID: "acme.a", InputSchema: map[string]any{"type": "object"}, OutputSchema: map[string]any{"type": 5}},
		{ID: "acme.b", InputSchema: nil, OutputSchema: map[string]any{}},
		{ID: "acme.c", InputSchema: map[string]any{"type": "integer", "maximum": int64(3)}, OutputSchema: map[string]any{}},
	}}}
	for id, path := range map[string]string{"acme.a": "entrypoints.tools[0].output_schema", "acme.b": "entrypoints.tools[1].input_schema"} {
		_, err := m.ToolSchemas(id)
		var fe *manifest.FieldError
		if !errors.As(err, &fe) || fe.Path != path || !errors.Is(err, manifest.ErrValidation) {
			t.Errorf("ToolSchemas(%s) = %v, want a validation error at %s", id, err, path)
		}
	}
	s, err := m.ToolSchemas("acme.c")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateInput(json.Number("4")); !errors.Is(err, manifest.ErrInputSchema) {
		t.Errorf("4 > maximum 3 passed: %v", err)
	}
	if err := s.ValidateInput(float64(3)); err != nil {
		t.Errorf("3 failed: %v", err)
	}
	if err := s.ValidateInput(struct{}{}); !errors.Is(err, manifest.ErrInputSchema) {
		t.Errorf("a Go struct is not a JSON value, got %v", err)
	}
}

func TestToolSchemasConcurrent(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/full_v2.toml"))
	s, err := m.ToolSchemas("acme.weather.alerts")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if err := s.ValidateOutputJSON([]byte(`[{"level": 3}]`)); err != nil {
					t.Error(err)
					return
				}
				if err := s.ValidateOutputJSON([]byte(`[{"level": 9}]`)); err == nil {
					t.Error("level 9 passed")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestFastCheck: a schema whose only assertion is one "type" of object,
// array, string, boolean or null (or none at all) gets the fast check, and
// every instance gets the full validator's answer from it; any other
// schema goes to the full validator alone.
func TestFastCheck(t *testing.T) {
	inputs := []string{` {"a":[1]} `, `[]`, `[1,"x"]`, `"s"`, `true`, `false`, `null`, `0`, `-1.5e3`, `{"a":}`, `{} {}`, "\t\r\n{}", ``, ` `, `nul`, `"\xff"`}
	for _, tc := range []struct {
		schema string
		fast   bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"array","title":"a list","description":"d","examples":[[1]]}`, true},
		{`{"type":"string"}`, true},
		{`{"type":"boolean"}`, true},
		{`{"type":"null"}`, true},
		{`{}`, true},
		{`{"type":"number"}`, false},
		{`{"type":"integer"}`, false},
		{`{"type":["object","null"]}`, false},
		{`{"type":"object","required":["a"]}`, false},
		{`{"type":"object","additionalProperties":false}`, false},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, false},
	} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(tc.schema), &doc); err != nil {
			t.Fatal(err)
		}
		var m manifest.Manifest
		m.Entrypoints.Tools = []manifest.Tool{{ID: "t.tool", Name: "tool", InputSchema: doc, OutputSchema: map[string]any{}}}
		sch, err := m.ToolSchemas("t.tool")
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		if got := manifest.FastCheckOn(sch); got != tc.fast {
			t.Errorf("%s: fast check %v, want %v", tc.schema, got, tc.fast)
		}
		for _, in := range inputs {
			fast, slow := sch.ValidateInputJSON([]byte(in)), manifest.SlowValidateInputJSON(sch, []byte(in))
			if (fast == nil) != (slow == nil) || fast != nil && fast.Error() != slow.Error() {
				t.Errorf("%s, input %q: %v; the full validator: %v", tc.schema, in, fast, slow)
			}
		}
	}
}

// TestToolSchemasEveryBranch: a value no branch of a oneOf or anyOf
// accepts is reported with every branch's own failure, not the first
// branch's alone; a failure outside such a keyword still names one leaf.
func TestToolSchemasEveryBranch(t *testing.T) {
	target := func(word string) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{
			"target": map[string]any{word: []any{
				map[string]any{"type": "string", "pattern": "^https://"},
				map[string]any{"type": "object", "required": []any{"host"}, "properties": map[string]any{
					"host": map[string]any{"type": "string"}, "port": map[string]any{"type": "integer", "maximum": int64(65535)}}},
				map[string]any{"type": "integer", "minimum": int64(1)},
			}},
		}}
	}
	m := &manifest.Manifest{Entrypoints: manifest.Entrypoints{Tools: []manifest.Tool{
		{ID: "acme.one", InputSchema: target("oneOf"), OutputSchema: map[string]any{}},
		{ID: "acme.any", InputSchema: target("anyOf"), OutputSchema: map[string]any{}},
	}}}
	tests := []struct {
		tool, value, location string
		want                  []string // the reason holds each
	}{
		{"acme.one", `{"target": "http://x"}`, "/target", []string{"'oneOf' failed", "branch 0:", "https", "branch 1:", "object", "branch 2:", "integer"}},
		{"acme.one", `{"target": {"host": "x", "port": 70000}}`, "/target", []string{"branch 0:", "branch 1: at \"/target/port\": maximum", "branch 2:"}},
		{"acme.any", `{"target": 0}`, "/target", []string{"'anyOf' failed", "branch 0:", "branch 1:", "branch 2:", "minimum"}},
		{"acme.one", `{"target": "https://x"}`, "-", nil},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.value, func(t *testing.T) {
			s, err := m.ToolSchemas(tt.tool)
			if err != nil {
				t.Fatal(err)
			}
			err = s.ValidateInputJSON([]byte(tt.value))
			if tt.location == "-" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ie *manifest.InstanceError
			if !errors.As(err, &ie) || !errors.Is(err, manifest.ErrInputSchema) {
				t.Fatalf("error %v is not an input *InstanceError", err)
			}
			if ie.Location != tt.location {
				t.Errorf("Location = %q, want %q", ie.Location, tt.location)
			}
			for _, w := range tt.want {
				if !strings.Contains(ie.Reason, w) {
					t.Errorf("reason %q does not name %q", ie.Reason, w)
				}
			}
			if !strings.Contains(err.Error(), "branch 2:") {
				t.Errorf("error text %q does not carry the branches", err)
			}
		})
	}
}
