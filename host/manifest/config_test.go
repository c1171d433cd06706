package manifest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

// configTOML is a [config] table in the table form.
const configTOML = `
[config]
sensitive = ["api_token"]

[config.schema]
type = "object"
required = ["endpoint", "api_token"]

[config.schema.properties.endpoint]
type = "string"
pattern = "^https://"

[config.schema.properties.api_token]
type = "string"
minLength = 8

[config.schema.properties.retries]
type = "integer"
minimum = 0
maximum = 10
default = 3

[config.schema.properties.mode]
enum = ["fast", "safe"]
`

// TestParseConfig: the [config] table decodes in its table form and in its
// JSON-string form to the same Manifest, and each broken rule is reported
// at its path (all of them at once, through Problems).
func TestParseConfig(t *testing.T) {
	m, err := manifest.Parse([]byte(problemsBase + configTOML))
	if err != nil {
		t.Fatalf("table form: %v", err)
	}
	jsonForm := problemsBase + `
[config]
sensitive = ["api_token"]
schema = '''{"type":"object","required":["endpoint","api_token"],"properties":{
  "endpoint":{"type":"string","pattern":"^https://"},
  "api_token":{"type":"string","minLength":8},
  "retries":{"type":"integer","minimum":0,"maximum":10,"default":3},
  "mode":{"enum":["fast","safe"]}}}'''
`
	m2, err := manifest.Parse([]byte(jsonForm))
	if err != nil {
		t.Fatalf("JSON form: %v", err)
	}
	a, _ := json.Marshal(m.Config)
	b, _ := json.Marshal(m2.Config)
	if string(a) != string(b) {
		t.Errorf("the two forms differ:\n%s\n%s", a, b)
	}
	// Marshal keeps it.
	out, err := manifest.Marshal(m2)
	if err != nil {
		t.Fatal(err)
	}
	m3, err := manifest.Parse(out)
	if err != nil {
		t.Fatalf("marshalled: %v\n%s", err, out)
	}
	c, _ := json.Marshal(m3.Config)
	if string(a) != string(c) {
		t.Errorf("Marshal lost the config:\n%s\n%s", a, c)
	}

	cases := []struct {
		name, doc string
		path      string
		err       error
		reason    string
	}{
		{"no schema", "[config]\nsensitive = []\n", "config.schema", manifest.ErrParse, "missing"},
		{"schema wrong type", "[config]\nschema = 3\n", "config.schema", manifest.ErrParse, "a table or a string"},
		{"string not an object", "[config]\nschema = '[1]'\n", "config.schema", manifest.ErrParse, "found an array"},
		{"string not JSON", "[config]\nschema = '{'\n", "config.schema", manifest.ErrParse, "JSON object"},
		{"not an object type", "[config]\nschema = { type = \"string\" }\n", "config.schema.type", manifest.ErrValidation, `must be "object"`},
		{"unknown key", "[config]\nschema = { type = \"object\" }\nextra = 1\n", "config.extra", manifest.ErrParse, "unknown key"},
		{"bad key name", "[config.schema]\ntype = \"object\"\nproperties = { ApiToken = { type = \"string\" } }\n", "config.schema.properties.ApiToken", manifest.ErrValidation, "lower-case letter"},
		{"required not declared", "[config.schema]\ntype = \"object\"\nrequired = [\"nope\"]\n", "config.schema.required[0]", manifest.ErrValidation, "not a property"},
		{"sensitive not declared", "[config]\nsensitive = [\"nope\"]\nschema = { type = \"object\" }\n", "config.sensitive[0]", manifest.ErrValidation, "not a property"},
		{"sensitive default", "[config]\nsensitive = [\"k\"]\nschema = { type = \"object\", properties = { k = { type = \"string\", default = \"x\" } } }\n", "config.sensitive[0]", manifest.ErrValidation, "must not have a default"},
		{"does not compile", "[config]\nschema = { type = \"object\", properties = { k = { type = 7 } } }\n", "config.schema", manifest.ErrValidation, "not a valid JSON Schema"},
		{"too large", "[config]\nschema = { type = \"object\", description = \"" + strings.Repeat("x", manifest.MaxConfigSchemaBytes) + "\" }\n", "config.schema", manifest.ErrValidation, "over the 65536-byte limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Parse([]byte(problemsBase + "\n" + tc.doc))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			var fe *manifest.FieldError
			if !errors.As(err, &fe) || fe.Path != tc.path || !strings.Contains(fe.Reason, tc.reason) {
				t.Fatalf("err = %v, want path %s and a reason with %q", err, tc.path, tc.reason)
			}
		})
	}

	// Several problems come together.
	_, err = manifest.Parse([]byte(problemsBase + "\n[config]\nsensitive = [\"a\", \"b\"]\nschema = { type = \"object\" }\n"))
	var ps *manifest.Problems
	if !errors.As(err, &ps) || len(ps.List) != 2 {
		t.Fatalf("err = %v, want two problems", err)
	}
}

// TestConfigSchemaValues: values are checked key by key, naming the key and
// why, without quoting a sensitive value; defaults fill the effective
// document; required keys without a default are missing until set.
func TestConfigSchemaValues(t *testing.T) {
	m, err := manifest.Parse([]byte(problemsBase + configTOML))
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.ConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Keys(), ","); got != "api_token,endpoint,mode,retries" {
		t.Errorf("Keys = %s", got)
	}
	if !s.Sensitive("api_token") || s.Sensitive("endpoint") {
		t.Error("Sensitive is wrong")
	}
	if s.Type("retries") != "integer" || s.Type("mode") != "" {
		t.Error("Type is wrong")
	}
	if got := strings.Join(s.Missing(nil), ","); got != "api_token,endpoint" {
		t.Errorf("Missing(nil) = %s", got)
	}
	for _, tc := range []struct {
		key, value string
		want       string // "" = valid
	}{
		{"endpoint", `"https://x"`, ""},
		{"endpoint", `"http://x"`, "does not match pattern"},
		{"retries", `11`, "maximum"},
		{"retries", `"3"`, "integer"},
		{"mode", `"safe"`, ""},
		{"mode", `"slow"`, "fast"},
		{"nope", `1`, "declares no such key"},
		{"endpoint", `{`, "not valid JSON"},
		{"endpoint", `"` + strings.Repeat("x", manifest.MaxConfigValueBytes) + `"`, "over the 16384-byte limit"},
		{"api_token", `"hunter2"`, "sensitive value"},
	} {
		err := s.ValidateValue(tc.key, json.RawMessage(tc.value))
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s=%s: %v", tc.key, tc.value, err)
			}
			continue
		}
		if !errors.Is(err, manifest.ErrConfigInvalid) || errcode.Of(err) != "config_invalid" || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s=%.40s: err = %v, want config_invalid naming the key and %q", tc.key, tc.value, err, tc.want)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error quotes a sensitive value: %v", err)
		}
	}
	doc, err := s.Effective(map[string]json.RawMessage{"endpoint": json.RawMessage(`"https://e"`), "api_token": json.RawMessage(`"s3cretvalue"`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != `{"api_token":"s3cretvalue","endpoint":"https://e","retries":3}` {
		t.Errorf("Effective = %s", doc)
	}
	if _, err := s.Effective(map[string]json.RawMessage{"retries": json.RawMessage(`99`)}); !errors.Is(err, manifest.ErrConfigInvalid) || !strings.Contains(err.Error(), "retries") {
		t.Errorf("Effective of an unfit value: %v", err)
	}
	if len(s.Missing(map[string]json.RawMessage{"endpoint": nil, "api_token": nil})) != 0 {
		t.Error("set keys are still missing")
	}
	// No [config]: no schema.
	m0, _ := manifest.Parse([]byte(problemsBase))
	if s0, err := m0.ConfigSchema(); s0 != nil || err != nil {
		t.Errorf("ConfigSchema of a manifest without [config] = %v, %v", s0, err)
	}
}
