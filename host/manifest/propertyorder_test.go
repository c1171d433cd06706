package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
)

func TestInputPropertyOrders(t *testing.T) {
	tests := []struct {
		name string
		toml string
		want manifest.PropertyOrders
	}{
		{
			name: "inline tables keep their order",
			toml: `[[entrypoints.tools]]
id = "a.t"
input_schema = { type = "object", properties = { zeta = { type = "string" }, alpha = { type = "number" }, mid = { type = "object", properties = { y = {}, x = {} } } } }
`,
			want: manifest.PropertyOrders{"a.t": {"": {"zeta", "alpha", "mid"}, "/properties/mid": {"y", "x"}}},
		},
		{
			name: "table headers, per tool",
			toml: `[[entrypoints.tools]]
id = "a.one"
[entrypoints.tools.input_schema]
type = "object"
[entrypoints.tools.input_schema.properties.text]
type = "string"
[entrypoints.tools.input_schema.properties.count]
type = "integer"

[[entrypoints.tools]]
id = "a.two"
[entrypoints.tools.input_schema.properties.b]
type = "string"
[entrypoints.tools.input_schema.properties.a]
type = "string"
`,
			want: manifest.PropertyOrders{"a.one": {"": {"text", "count"}}, "a.two": {"": {"b", "a"}}},
		},
		{
			name: "dotted keys",
			toml: `[[entrypoints.tools]]
id = "a.t"
input_schema.type = "object"
input_schema.properties.second.type = "string"
input_schema.properties.first.type = "string"
`,
			want: manifest.PropertyOrders{"a.t": {"": {"second", "first"}}},
		},
		{
			name: "oneOf branches and array items, with a key that needs escaping",
			toml: `[[entrypoints.tools]]
id = "a.t"
[entrypoints.tools.input_schema]
type = "object"
[[entrypoints.tools.input_schema.oneOf]]
title = "Report"
[entrypoints.tools.input_schema.oneOf.properties.title]
type = "string"
[entrypoints.tools.input_schema.oneOf.properties."rows/x".items.properties.value]
type = "number"
[entrypoints.tools.input_schema.oneOf.properties."rows/x".items.properties.label]
type = "string"
[[entrypoints.tools.input_schema.oneOf]]
properties = { submit = {}, about = {} }
`,
			want: manifest.PropertyOrders{"a.t": {
				"/oneOf/0":                          {"title", "rows/x"},
				"/oneOf/0/properties/rows~1x/items": {"value", "label"},
				"/oneOf/1":                          {"submit", "about"},
			}},
		},
		{
			name: "tools given as an inline array",
			toml: `[entrypoints]
tools = [ { id = "a.t", input_schema = { properties = { q = {}, p = {} } } } ]
`,
			want: manifest.PropertyOrders{"a.t": {"": {"q", "p"}}},
		},
		{
			name: "a tool without an id or an input_schema table is left out",
			toml: `[[entrypoints.tools]]
input_schema = { properties = { a = {} } }
[[entrypoints.tools]]
id = "a.noschema"
[[entrypoints.tools]]
id = "a.notable"
input_schema = "x"
[[entrypoints.tools]]
id = "a.noprops"
input_schema = { type = "object" }
`,
			want: manifest.PropertyOrders{"a.noprops": {}},
		},
		{name: "no entrypoints", toml: "skill_id = \"a\"\n", want: manifest.PropertyOrders{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := manifest.InputPropertyOrders([]byte(tt.toml))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestInputPropertyOrdersRefusesBadTOML(t *testing.T) {
	for name, doc := range map[string]string{
		"syntax":            "[[entrypoints.tools]\nid = \"a\"\n",
		"a scalar as table": "entrypoints = 1\n[entrypoints.tools]\n",
		"too deep":          "a = " + strings.Repeat("[", manifest.MaxNesting+5) + strings.Repeat("]", manifest.MaxNesting+5) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := manifest.InputPropertyOrders([]byte(doc)); !errors.Is(err, manifest.ErrParse) {
				t.Fatalf("err = %v, want ErrParse", err)
			}
		})
	}
}

// The orders of the example skills name exactly the properties Parse
// decodes, for every object schema of every tool, and the report's follow
// its skill.toml.
func TestInputPropertyOrdersMatchParse(t *testing.T) {
	files, err := filepath.Glob("../../sdk/examples/*/skill.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example manifests: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := manifest.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		orders, err := manifest.InputPropertyOrders(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tool := range m.Entrypoints.Tools {
			want := map[string][]string{}
			propertySets(tool.InputSchema, "", want)
			got := orders[tool.ID]
			if len(got) != len(want) {
				t.Errorf("%s %s: orders for %d schemas, want %d (%v / %v)", f, tool.ID, len(got), len(want), got, want)
			}
			for ptr, names := range want {
				sorted := slices.Sorted(slices.Values(got[ptr]))
				if !slices.Equal(sorted, names) {
					t.Errorf("%s %s %q: order %v is not of the properties %v", f, tool.ID, ptr, got[ptr], names)
				}
			}
		}
		if strings.Contains(f, "/report/") {
			if got := orders["palyra.report"]["/oneOf/0"]; !slices.Equal(got, []string{"title", "rows"}) {
				t.Errorf("report /oneOf/0 = %v, want [title rows]", got)
			}
			if got := orders["palyra.report"]["/oneOf/0/properties/rows/items"]; !slices.Equal(got, []string{"label", "value"}) {
				t.Errorf("report rows items = %v, want [label value]", got)
			}
		}
	}
}

// propertySets records the sorted property names of every object schema
// with properties under v, by pointer.
func propertySets(v any, ptr string, into map[string][]string) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok && len(props) > 0 {
			names := make([]string, 0, len(props))
			for k := range props {
				names = append(names, k)
			}
			slices.Sort(names)
			into[ptr] = names
		}
		for k, c := range x {
			propertySets(c, ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), into)
		}
	case []any:
		for i, c := range x {
			propertySets(c, ptr+"/"+strconv.Itoa(i), into)
		}
	}
}

// MarshalOrdered writes what Marshal writes, with the schemas' keys in the
// source's order: the example manifests and some odd ones read back equal,
// with the source's property orders.
func TestMarshalOrdered(t *testing.T) {
	sources := map[string]string{}
	files, err := filepath.Glob("../../sdk/examples/*/skill.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example manifests: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[f] = string(data)
	}
	const head = "manifest_version = 2\nskill_id = \"acme.odd\"\nname = \"Odd\"\nversion = \"1.0.0\"\npublisher = \"acme\"\n\n[compat]\nrequired_protocol_major = 1\nmin_palyra_version = \"0.1.0\"\n\n"
	sources["odd keys"] = head + `[[entrypoints.tools]]
id = "acme.odd"
name = "odd"
description = "Odd keys."
input_schema = { type = "object", required = ["z"], properties = { z = { type = "string", description = "Last letter, first field." }, "a,b" = { type = "string" }, "q\"uote" = { type = "integer" }, "" = {}, empty = {}, "-" = { type = "boolean" }, list = { type = "array", items = { properties = { y = {}, x = {} } } } } }
output_schema = { type = "object", properties = { second = {}, first = {} } }
`
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			m, err := manifest.Parse([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			out, err := manifest.MarshalOrdered(m, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			back, err := manifest.Parse(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !reflect.DeepEqual(back, m) {
				t.Fatalf("read back %+v\nwant %+v\n%s", back, m, out)
			}
			want, err := manifest.InputPropertyOrders([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			got, err := manifest.InputPropertyOrders(out)
			if err != nil {
				t.Fatal(err)
			}
			if name == "odd keys" {
				// The root's properties include keys no struct tag can
				// carry: that table stays sorted; the others keep the
				// source's order.
				want["acme.odd"][""] = []string{"", "-", "a,b", "empty", "list", "q\"uote", "z"}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("orders %v, want %v\n%s", got, want, out)
			}
			plain, err := manifest.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(name, "report") && string(plain) == string(out) {
				t.Error("the report's schemas came out sorted, as Marshal writes them")
			}
		})
	}
}

func TestMarshalOrderedRefusesBadSource(t *testing.T) {
	m, err := manifest.Parse(readExample(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.MarshalOrdered(m, []byte("[[entrypoints.tools]\n")); !errors.Is(err, manifest.ErrParse) {
		t.Fatalf("err = %v, want ErrParse", err)
	}
}

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../sdk/examples", name, "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
