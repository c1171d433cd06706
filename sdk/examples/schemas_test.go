package examples_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaCases are documents each tool's schemas must accept or refuse. The
// outputs have the shape the built modules return.
var schemaCases = []struct {
	example, tool string
	input         string
	inputOK       bool
	output        string // "" when not checked
}{
	{"echo", "palyra.echo", `{"text":"hi"}`, true, `{"echo":"hi"}`},
	{"echo", "palyra.echo", `{}`, false, ""},
	{"echo", "palyra.echo", `{"text":"hi","x":1}`, false, ""},
	{"echo", "palyra.upper", `{"text":"hi"}`, true, `{"text":"HI"}`},
	{"echo", "palyra.upper", `{"text":""}`, true, ""}, // valid input; the tool answers empty_text
	{"http-fetch", "palyra.http_fetch", `{"url":"https://api.example.com/x","use_token":true,"max_body_bytes":100}`, true,
		`{"status":200,"content_type":"text/plain","body":"ok","truncated":false}`},
	{"http-fetch", "palyra.http_fetch", `{"url":"file:///etc/passwd"}`, false, ""},
	{"http-fetch", "palyra.http_fetch", `{"url":"https://a","max_body_bytes":65537}`, false, ""},
	{"kv-counter", "palyra.increment", `{"name":"visits","by":5}`, true, `{"name":"visits","count":5}`},
	{"kv-counter", "palyra.increment", `{"name":"../x"}`, false, ""},
	{"kv-counter", "palyra.increment", `{"name":".hidden"}`, false, ""},
	{"kv-counter", "palyra.get", `{"name":"a.b-c_d"}`, true, `{"name":"a.b-c_d","count":0}`},
	{"report", "palyra.report", `{"title":"Sales","rows":[{"label":"EU","value":3},{"label":"US","value":4.5}]}`, true,
		`{"v":1,"surface":"report","components":[{"id":"title","type":"text","props":{"value":"Sales"}},{"id":"table","type":"table","props":{"columns":["Label","Value"],"rows":[["EU",3],["US",4.5]]}},{"id":"chart","type":"chart","props":{"title":"Sales","kind":"bar","series":[{"label":"EU","value":3},{"label":"US","value":4.5}]}},{"id":"total","type":"text","props":{"value":"Total: 7.5","tone":"muted"}},{"id":"add","type":"form","props":{"title":"Add a row","submit_label":"Add","fields":[{"id":"label","label":"Label","type":"text","required":true},{"id":"value","label":"Value","type":"number","required":true,"min":0,"max":1000000,"step":0.5},{"id":"kind","label":"Chart kind","type":"select","default":"bar","options":[{"label":"Bar","value":"bar"},{"label":"Line","value":"line"},{"label":"Pie","value":"pie"}]}]}}]}`},
	{"report", "palyra.report", `{"title":"Sales","rows":[{"label":"EU","value":-1}]}`, false, ""},
	{"report", "palyra.report", `{"a2ui_submit":{"document_id":"01J","surface":"report","component_id":"add","values":{"label":"JP","value":2.5,"kind":"pie"}}}`, true,
		`{"a2ui_update":{"surface":"report","patch":{"v":1,"ops":[{"op":"add","path":"/components/1/props/rows/-","value":["JP",2.5]},{"op":"add","path":"/components/2/props/series/-","value":{"label":"JP","value":2.5}},{"op":"replace","path":"/components/2/props/kind","value":"pie"},{"op":"replace","path":"/components/3/props/value","value":"Added JP: 2.5"}]}}}`},
	{"report", "palyra.report", `{"a2ui_submit":{"document_id":"01J","surface":"report","component_id":"add","values":{"label":"JP","value":2.5,"kind":"donut"}}}`, false, ""},
	{"report", "palyra.report", `{"title":"Sales","rows":[],"a2ui_submit":{}}`, false, ""},
}

// TestSchemas compiles every tool schema as JSON Schema (draft 2020-12) and
// checks it against sample documents.
func TestSchemas(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.tool+" "+tc.input, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(examplebuild.MustDir(t, tc.example), "skill.toml"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := manifest.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			var tool *manifest.Tool
			for i := range m.Entrypoints.Tools {
				if m.Entrypoints.Tools[i].ID == tc.tool {
					tool = &m.Entrypoints.Tools[i]
				}
			}
			if tool == nil {
				t.Fatalf("no tool %s", tc.tool)
			}
			in := compile(t, tool.InputSchema)
			if err := in.Validate(parse(t, tc.input)); (err == nil) != tc.inputOK {
				t.Errorf("input %s: valid=%v, want %v (%v)", tc.input, err == nil, tc.inputOK, err)
			}
			if tc.output != "" {
				if err := compile(t, tool.OutputSchema).Validate(parse(t, tc.output)); err != nil {
					t.Errorf("output %s: %v", tc.output, err)
				}
			}
		})
	}
}

func compile(t *testing.T, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", parse(t, string(b))); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("compile %s: %v", b, err)
	}
	return s
}

func parse(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(s)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
