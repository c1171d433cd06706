package a2ui_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
)

var (
	s   = strings.Repeat
	txt = func(id, value string) string { return comp(id, "text", fmt.Sprintf(`{"value":%q}`, value)) }
	gov = `"track_id":"t","feature_flag":"ff","support_summary":"sum","security_review":["r"],"exit_criteria":["e"]`
)

func withExperimental(e string) string {
	return `{"v":1,"surface":"s","components":[` + txt("a", "x") + `],"experimental":{` + e + `}}`
}

// goodDocs are valid documents; the fuzz targets use them as seeds.
var goodDocs = map[string]string{
	"minimal": doc(txt("a", "x")),
	"all types": doc(
		comp("t", "text", `{"value":"Hello","tone":"success"}`),
		comp("m", "markdown", `{"value":"# Title\n- a"}`),
		comp("l", "list", `{"ordered":true,"items":["a",2,true,null,{"k":[1]}]}`),
		comp("tb", "table", `{"columns":["Region","Sales"],"rows":[["EU",120],["US"],[]]}`),
		comp("f", "form", `{"title":"Contact","submit_label":"Send","fields":[`+
			`{"id":"name","label":"Name","type":"text","required":true,"placeholder":"Jane","hint":"your name","default":"J"},`+
			`{"id":"email","label":"Email","type":"email"},`+
			`{"id":"qty","label":"Qty","type":"number","min":1,"max":10,"step":0.5,"default":2.5},`+
			`{"id":"size","label":"Size","type":"select","options":[{"label":"Small","value":"s"},{"label":"Large","value":"l"}],"default":"l"},`+
			`{"id":"ok","label":"Agree","type":"checkbox","default":false}]}`),
		comp("c", "chart", `{"title":"Sales","kind":"pie","series":[{"label":"EU","value":0},{"label":"US","value":1000000}]}`),
	),
	"defaults": doc(
		comp("t", "text", `{}`), comp("m", "markdown", `{}`), comp("l", "list", `{}`),
		comp("tb", "table", `{"columns":["c"]}`), comp("f", "form", `{}`), comp("c", "chart", `{}`),
		comp("f2", "form", `{"fields":[{"id":"n","type":"number"}]}`),
	),
	"aliases": doc(
		comp("m", "markdown", `{"markdown":"**b**"}`),
		comp("f", "form", `{"submitLabel":"Go","fields":[]}`),
	),
	"id charset": doc(txt("Az09:_-", "x"), txt(s("i", 64), "y")),
	"limits at the edge": `{"v":1,"surface":"` + s("😀", 64) + `","components":[` +
		txt("t", s("é", 512)) + "," +
		comp("m", "markdown", `{"value":"`+s("x", 12000)+`"}`) + "," +
		comp("l", "list", `{"items":[`+repeat(256, func(int) string { return `0` })+`]}`) + "," +
		comp("tb", "table", `{"columns":[`+repeat(16, func(int) string { return `"c"` })+`],"rows":[`+repeat(256, func(int) string { return `[]` })+`]}`) + "," +
		comp("f", "form", `{"submit_label":"`+s("x", 48)+`","fields":[`+repeat(31, func(i int) string { return fmt.Sprintf(`{"id":"f%d","type":"text"}`, i) })+
			`,{"id":"`+s("x", 48)+`","label":"`+s("l", 64)+`","hint":"`+s("h", 128)+`","placeholder":"`+s("p", 96)+`","type":"text"}]}`) + "," +
		comp("c", "chart", `{"series":[`+repeat(64, func(i int) string { return fmt.Sprintf(`{"label":"p%d","value":%d}`, i, i) })+`]}`) + "]}",
	"experimental snake_case": withExperimental(gov + `,"rollout_stage":"limited_preview","ambient_mode":"push_to_talk","consent_required":true`),
	"experimental camelCase":  withExperimental(`"trackId":"t","featureFlag":"a.b:c_d-e","supportSummary":"s","securityReview":["r"],"exitCriteria":["e1","e2"]`),
	"deep item":               doc(comp("l", "list", `{"items":[`+s("[", 32)+s("]", 32)+`]}`)),
	"whitespace":              " \n{ \"v\" : 1.0 , \"surface\":\"s\", \"components\":[" + txt("a", "x") + "] }\n",
}

func TestValidateGood(t *testing.T) {
	fixture, err := os.ReadFile(knownGood)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{"palyra known-good fixture": string(fixture)}
	for k, v := range goodDocs {
		docs[k] = v
	}
	for name, data := range docs {
		t.Run(name, func(t *testing.T) {
			d, err := a2ui.Validate([]byte(data))
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !a2ui.IsDocument([]byte(data)) {
				t.Fatal("IsDocument is false for a valid document")
			}
			out, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			back, err := a2ui.Validate(out)
			if err != nil {
				t.Fatalf("Validate(Marshal(d)): %v\n%s", err, out)
			}
			if !reflect.DeepEqual(d, back) {
				t.Fatalf("round trip changed the document\n%#v\n%#v", d, back)
			}
		})
	}
}

// TestValidateTyped checks the typed document Validate returns.
func TestValidateTyped(t *testing.T) {
	d, err := a2ui.Validate([]byte(goodDocs["all types"]))
	if err != nil {
		t.Fatal(err)
	}
	want := &a2ui.Document{Surface: "s", Components: []a2ui.Component{
		{ID: "t", Type: a2ui.TypeText, Props: &a2ui.TextProps{Value: "Hello", Tone: a2ui.ToneSuccess}},
		{ID: "m", Type: a2ui.TypeMarkdown, Props: &a2ui.MarkdownProps{Value: "# Title\n- a"}},
		{ID: "l", Type: a2ui.TypeList, Props: &a2ui.ListProps{Ordered: true, Items: []any{"a", 2.0, true, nil, map[string]any{"k": []any{1.0}}}}},
		{ID: "tb", Type: a2ui.TypeTable, Props: &a2ui.TableProps{Columns: []string{"Region", "Sales"}, Rows: [][]any{{"EU", 120.0}, {"US"}, {}}}},
		{ID: "f", Type: a2ui.TypeForm, Props: &a2ui.FormProps{Title: "Contact", SubmitLabel: "Send", Fields: []a2ui.Field{
			{ID: "name", Label: "Name", Type: a2ui.FieldText, Hint: "your name", Required: true, Default: "J", Placeholder: "Jane"},
			{ID: "email", Label: "Email", Type: a2ui.FieldEmail},
			{ID: "qty", Label: "Qty", Type: a2ui.FieldNumber, Default: 2.5, Min: 1, Max: 10, Step: 0.5},
			{ID: "size", Label: "Size", Type: a2ui.FieldSelect, Default: "l", Options: []a2ui.Option{{Label: "Small", Value: "s"}, {Label: "Large", Value: "l"}}},
			{ID: "ok", Label: "Agree", Type: a2ui.FieldCheckbox, Default: false},
		}}},
		{ID: "c", Type: a2ui.TypeChart, Props: &a2ui.ChartProps{Title: "Sales", Kind: a2ui.ChartPie, Series: []a2ui.Point{{Label: "EU", Value: 0}, {Label: "US", Value: 1e6}}}},
	}}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got  %#v\nwant %#v", d, want)
	}
	if c, ok := d.Component("f"); !ok || c.Type != a2ui.TypeForm {
		t.Fatalf("Component(f) = %v, %v", c, ok)
	}
	if _, ok := d.Component("nope"); ok {
		t.Fatal("Component(nope) found")
	}

	// Absent props get Palyra's defaults; aliases land in the canonical field.
	d, err = a2ui.Validate([]byte(goodDocs["defaults"]))
	if err != nil {
		t.Fatal(err)
	}
	n := d.Components[6].Props.(*a2ui.FormProps).Fields[0]
	if n.Min != 0 || n.Max != 100 || n.Step != 1 {
		t.Fatalf("number defaults = %v %v %v", n.Min, n.Max, n.Step)
	}
	d, err = a2ui.Validate([]byte(goodDocs["aliases"]))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Components[0].Props.(*a2ui.MarkdownProps).Value; got != "**b**" {
		t.Fatalf("markdown alias: %q", got)
	}
	if got := d.Components[1].Props.(*a2ui.FormProps).SubmitLabel; got != "Go" {
		t.Fatalf("submitLabel alias: %q", got)
	}
	out, _ := json.Marshal(d)
	if want := `{"v":1,"surface":"s","components":[{"id":"m","type":"markdown","props":{"value":"**b**"}},{"id":"f","type":"form","props":{"submit_label":"Go","fields":[]}}]}`; string(out) != want {
		t.Fatalf("canonical form:\n%s\nwant\n%s", out, want)
	}
	d, err = a2ui.Validate([]byte(goodDocs["experimental camelCase"]))
	if err != nil {
		t.Fatal(err)
	}
	wantE := &a2ui.Experimental{TrackID: "t", FeatureFlag: "a.b:c_d-e", SupportSummary: "s", RolloutStage: "dark_launch", AmbientMode: "disabled", SecurityReview: []string{"r"}, ExitCriteria: []string{"e1", "e2"}}
	if !reflect.DeepEqual(d.Experimental, wantE) {
		t.Fatalf("experimental = %#v", d.Experimental)
	}
}

func field(f string) string { return doc(form(f)) }

// badDocs are invalid documents with the error each must give.
var badDocs = []struct {
	name string
	data string
	want want
}{
	// The document as a whole.
	{"too large", `{"v":1,"surface":"` + s("x", a2ui.MaxDocumentBytes) + `"}`, want{a2ui.ErrLimit, "", "document size in bytes", 262144, 262144 + 20}},
	{"not UTF-8", "{\"v\":1,\"surface\":\"\xff\"}", want{a2ui.ErrInvalid, "", "not valid UTF-8", 0, 0}},
	{"empty", ``, want{a2ui.ErrInvalid, "", "invalid JSON: unexpected end of JSON input (at byte 0)", 0, 0}},
	{"truncated", `{"v":1,"surface":"s","components":[{"id":"a"`, want{a2ui.ErrInvalid, "", "invalid JSON: unexpected end of JSON input (at byte 44)", 0, 0}},
	{"trailing comma", `{"v":1,"surface":"s","components":[1,]}`, want{a2ui.ErrInvalid, "", "invalid JSON: invalid character ']' looking for beginning of value (at byte 38)", 0, 0}},
	{"data after", doc(txt("a", "x")) + ` {}`, want{a2ui.ErrInvalid, "", "after top-level value", 0, 0}},
	{"array", `[]`, want{a2ui.ErrInvalid, "", "want an object, got array", 0, 0}},
	{"duplicate key", `{"v":1,"v":1,"surface":"s","components":[]}`, want{a2ui.ErrInvalid, "/v", "duplicate key", 0, 0}},
	{"duplicate escaped key", doc(comp("a", "text", `{"value":"x","\u0076alue":"y"}`)), want{a2ui.ErrInvalid, "/components/0/props/value", "duplicate key", 0, 0}},
	{"number beyond float64", doc(comp("l", "list", `{"items":[1e400]}`)), want{a2ui.ErrInvalid, "/components/0/props/items/0", "beyond the range", 0, 0}},
	{"nesting over MaxJSONDepth", `{"v":1,"surface":` + s("[", 70) + s("]", 70) + `}`, want{a2ui.ErrLimit, "/surface" + strings.Repeat("/0", 63), "nesting depth", 64, 65}},
	{"unknown top-level key", `{"v":1,"surface":"s","components":[],"style":{}}`, want{a2ui.ErrInvalid, "/style", "unknown key (want v, surface, components, experimental)", 0, 0}},
	{"unknown key with slash", `{"v":1,"a/~b":0}`, want{a2ui.ErrInvalid, "/a~1~0b", "unknown key", 0, 0}},
	{"missing v", `{"surface":"s","components":[]}`, want{a2ui.ErrInvalid, "/v", "required key is missing", 0, 0}},
	{"v 2", `{"v":2,"surface":"s","components":[]}`, want{a2ui.ErrInvalid, "/v", "want 1, got 2", 0, 0}},
	{"v string", `{"v":"1","surface":"s","components":[]}`, want{a2ui.ErrInvalid, "/v", `want 1, got "1"`, 0, 0}},
	{"missing surface", `{"v":1,"components":[]}`, want{a2ui.ErrInvalid, "/surface", "required key is missing", 0, 0}},
	{"surface number", `{"v":1,"surface":1,"components":[]}`, want{a2ui.ErrInvalid, "/surface", "want a string, got number", 0, 0}},
	{"blank surface", `{"v":1,"surface":" \t","components":[]}`, want{a2ui.ErrInvalid, "/surface", "blank", 0, 0}},
	{"surface 129", `{"v":1,"surface":"` + s("a", 129) + `","components":[]}`, want{a2ui.ErrLimit, "/surface", "length in UTF-16 code units", 128, 129}},
	{"surface counts UTF-16", `{"v":1,"surface":"` + s("😀", 65) + `","components":[]}`, want{a2ui.ErrLimit, "/surface", "length", 128, 130}},
	{"missing components", `{"v":1,"surface":"s"}`, want{a2ui.ErrInvalid, "/components", "required key is missing", 0, 0}},
	{"no components", doc(), want{a2ui.ErrInvalid, "/components", "no components", 0, 0}},
	{"components 129", doc(repeat(129, func(i int) string { return txt(fmt.Sprint("c", i), "x") })), want{a2ui.ErrLimit, "/components", "component count", 128, 129}},
	{"components object", `{"v":1,"surface":"s","components":{}}`, want{a2ui.ErrInvalid, "/components", "want an array, got object", 0, 0}},

	// Components.
	{"component string", doc(`"text"`), want{a2ui.ErrInvalid, "/components/0", "want an object, got string", 0, 0}},
	{"component unknown key", doc(`{"id":"a","type":"text","props":{},"style":1}`), want{a2ui.ErrInvalid, "/components/0/style", "unknown key (want id, type, props)", 0, 0}},
	{"missing id", doc(`{"type":"text","props":{}}`), want{a2ui.ErrInvalid, "/components/0/id", "required key is missing", 0, 0}},
	{"empty id", doc(txt("", "x")), want{a2ui.ErrInvalid, "/components/0/id", "empty", 0, 0}},
	{"id with space", doc(txt("ok", "x"), txt("a b", "x")), want{a2ui.ErrInvalid, "/components/1/id", `"a b" has the character ' '`, 0, 0}},
	{"id with dot", doc(txt("a.b", "x")), want{a2ui.ErrInvalid, "/components/0/id", `'.'`, 0, 0}},
	{"id 65", doc(txt(s("i", 65), "x")), want{a2ui.ErrLimit, "/components/0/id", "length", 64, 65}},
	{"id number", doc(`{"id":7,"type":"text","props":{}}`), want{a2ui.ErrInvalid, "/components/0/id", "want a string, got number", 0, 0}},
	{"duplicate id", doc(txt("a", "x"), txt("b", "y"), comp("a", "markdown", `{}`)), want{a2ui.ErrInvalid, "/components/2/id", `id "a" is already used by /components/0`, 0, 0}},
	{"missing type", doc(`{"id":"a","props":{}}`), want{a2ui.ErrInvalid, "/components/0/type", "required key is missing", 0, 0}},
	{"unknown type", doc(comp("a", "video", `{}`)), want{a2ui.ErrInvalid, "/components/0/type", `unknown component type "video" (want text, markdown, list, table, form, chart)`, 0, 0}},
	{"missing props", doc(`{"id":"a","type":"text"}`), want{a2ui.ErrInvalid, "/components/0/props", "required key is missing", 0, 0}},
	{"props array", doc(comp("a", "text", `[]`)), want{a2ui.ErrInvalid, "/components/0/props", "want an object, got array", 0, 0}},

	// text and markdown.
	{"text unknown prop", doc(comp("a", "text", `{"value":"x","color":"red"}`)), want{a2ui.ErrInvalid, "/components/0/props/color", "unknown key (want value, tone)", 0, 0}},
	{"text value number", doc(comp("a", "text", `{"value":3}`)), want{a2ui.ErrInvalid, "/components/0/props/value", "want a string, got number", 0, 0}},
	{"text value null", doc(comp("a", "text", `{"value":null}`)), want{a2ui.ErrInvalid, "/components/0/props/value", "want a string, got null", 0, 0}},
	{"text 513", doc(txt("a", s("x", 513))), want{a2ui.ErrLimit, "/components/0/props/value", "length", 512, 513}},
	{"unknown tone", doc(comp("a", "text", `{"tone":"loud"}`)), want{a2ui.ErrInvalid, "/components/0/props/tone", `unknown tone "loud" (want normal, muted, success, critical)`, 0, 0}},
	{"markdown 12001", doc(comp("m", "markdown", `{"value":"`+s("x", 12001)+`"}`)), want{a2ui.ErrLimit, "/components/0/props/value", "length", 12000, 12001}},
	{"markdown alias 12001", doc(comp("m", "markdown", `{"markdown":"`+s("x", 12001)+`"}`)), want{a2ui.ErrLimit, "/components/0/props/markdown", "length", 12000, 12001}},
	{"markdown and alias", doc(comp("m", "markdown", `{"value":"a","markdown":"b"}`)), want{a2ui.ErrInvalid, "/components/0/props/markdown", `both "value" and its alias "markdown"`, 0, 0}},

	// list.
	{"list ordered string", doc(comp("l", "list", `{"ordered":"yes"}`)), want{a2ui.ErrInvalid, "/components/0/props/ordered", "want a boolean, got string", 0, 0}},
	{"list items object", doc(comp("l", "list", `{"items":{}}`)), want{a2ui.ErrInvalid, "/components/0/props/items", "want an array, got object", 0, 0}},
	{"list 257", doc(comp("l", "list", `{"items":[`+repeat(257, func(int) string { return "1" })+`]}`)), want{a2ui.ErrLimit, "/components/0/props/items", "item count", 256, 257}},
	{"list item 513", doc(comp("l", "list", `{"items":["a","`+s("x", 513)+`"]}`)), want{a2ui.ErrLimit, "/components/0/props/items/1", "length", 512, 513}},
	{"list item too deep", doc(comp("l", "list", `{"items":[`+s("[", 33)+s("]", 33)+`]}`)), want{a2ui.ErrLimit, "/components/0/props/items/0", "nesting depth", 32, 33}},

	// table.
	{"table no columns key", doc(comp("t", "table", `{"rows":[]}`)), want{a2ui.ErrInvalid, "/components/0/props/columns", "required key is missing", 0, 0}},
	{"table empty columns", doc(comp("t", "table", `{"columns":[]}`)), want{a2ui.ErrInvalid, "/components/0/props/columns", "no columns", 0, 0}},
	{"table 17 columns", doc(comp("t", "table", `{"columns":[`+repeat(17, func(int) string { return `"c"` })+`]}`)), want{a2ui.ErrLimit, "/components/0/props/columns", "column count", 16, 17}},
	{"table column number", doc(comp("t", "table", `{"columns":["a",2]}`)), want{a2ui.ErrInvalid, "/components/0/props/columns/1", "want a string, got number", 0, 0}},
	{"table column 513", doc(comp("t", "table", `{"columns":["`+s("c", 513)+`"]}`)), want{a2ui.ErrLimit, "/components/0/props/columns/0", "length", 512, 513}},
	{"table 257 rows", doc(comp("t", "table", `{"columns":["c"],"rows":[`+repeat(257, func(int) string { return "[]" })+`]}`)), want{a2ui.ErrLimit, "/components/0/props/rows", "row count", 256, 257}},
	{"table row object", doc(comp("t", "table", `{"columns":["c"],"rows":[{}]}`)), want{a2ui.ErrInvalid, "/components/0/props/rows/0", "want an array, got object", 0, 0}},
	{"table long row", doc(comp("t", "table", `{"columns":["a","b"],"rows":[["x"],[1,2,3]]}`)), want{a2ui.ErrLimit, "/components/0/props/rows/1", "cell count", 2, 3}},
	{"table cell 513", doc(comp("t", "table", `{"columns":["a","b"],"rows":[["x","`+s("y", 513)+`"]]}`)), want{a2ui.ErrLimit, "/components/0/props/rows/0/1", "length", 512, 513}},
	{"table cell too deep", doc(comp("t", "table", `{"columns":["a"],"rows":[[`+s(`{"a":`, 33)+"1"+s("}", 33)+`]]}`)), want{a2ui.ErrLimit, "/components/0/props/rows/0/0", "nesting depth", 32, 33}},

	// form.
	{"field type date", doc(txt("a", "x"), txt("b", "x"), txt("c", "x"), form(`{"id":"a","type":"text"}`, `{"id":"b","type":"email"}`, `{"id":"d","type":"date"}`)),
		want{a2ui.ErrInvalid, "/components/3/props/fields/2/type", `unknown field type "date" (want text, email, number, select, checkbox)`, 0, 0}},
	{"form unknown prop", doc(comp("f", "form", `{"fields":[],"action":"/x"}`)), want{a2ui.ErrInvalid, "/components/0/props/action", "unknown key", 0, 0}},
	{"form 33 fields", doc(comp("f", "form", `{"fields":[`+repeat(33, func(i int) string { return fmt.Sprintf(`{"id":"f%d","type":"text"}`, i) })+`]}`)), want{a2ui.ErrLimit, "/components/0/props/fields", "field count", 32, 33}},
	{"form title 513", doc(comp("f", "form", `{"title":"`+s("t", 513)+`"}`)), want{a2ui.ErrLimit, "/components/0/props/title", "length", 512, 513}},
	{"submit label 49", doc(comp("f", "form", `{"submit_label":"`+s("x", 49)+`"}`)), want{a2ui.ErrLimit, "/components/0/props/submit_label", "length", 48, 49}},
	{"submitLabel 49", doc(comp("f", "form", `{"submitLabel":"`+s("x", 49)+`"}`)), want{a2ui.ErrLimit, "/components/0/props/submitLabel", "length", 48, 49}},
	{"submit label and alias", doc(comp("f", "form", `{"submit_label":"a","submitLabel":"b"}`)), want{a2ui.ErrInvalid, "/components/0/props/submitLabel", "both", 0, 0}},
	{"field not object", field(`"name"`), want{a2ui.ErrInvalid, "/components/0/props/fields/0", "want an object, got string", 0, 0}},
	{"field missing type", field(`{"id":"a"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/type", "required key is missing", 0, 0}},
	{"field missing id", field(`{"type":"text"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/id", "required key is missing", 0, 0}},
	{"field id bad", field(`{"id":"a b","type":"text"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/id", "has the character", 0, 0}},
	{"field id 49", field(`{"id":"` + s("x", 49) + `","type":"text"}`), want{a2ui.ErrLimit, "/components/0/props/fields/0/id", "length", 48, 49}},
	{"field id duplicate", doc(form(`{"id":"a","type":"text"}`, `{"id":"a","type":"email"}`)), want{a2ui.ErrInvalid, "/components/0/props/fields/1/id", `field id "a" is already used by /components/0/props/fields/0`, 0, 0}},
	{"field label 65", field(`{"id":"a","type":"text","label":"` + s("l", 65) + `"}`), want{a2ui.ErrLimit, "/components/0/props/fields/0/label", "length", 64, 65}},
	{"field hint 129", field(`{"id":"a","type":"text","hint":"` + s("h", 129) + `"}`), want{a2ui.ErrLimit, "/components/0/props/fields/0/hint", "length", 128, 129}},
	{"field placeholder 97", field(`{"id":"a","type":"email","placeholder":"` + s("p", 97) + `"}`), want{a2ui.ErrLimit, "/components/0/props/fields/0/placeholder", "length", 96, 97}},
	{"field required string", field(`{"id":"a","type":"text","required":"yes"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/required", "want a boolean", 0, 0}},
	{"text field with min", field(`{"id":"a","type":"text","min":1}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/min", "unknown key for a text field (want id, label, type, hint, required, default, placeholder)", 0, 0}},
	{"number field with placeholder", field(`{"id":"a","type":"number","placeholder":"1"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/placeholder", "unknown key for a number field", 0, 0}},
	{"checkbox with options", field(`{"id":"a","type":"checkbox","options":[]}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/options", "unknown key for a checkbox field", 0, 0}},
	{"text default number", field(`{"id":"a","type":"text","default":3}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/default", "want a string, got number", 0, 0}},
	{"text default 513", field(`{"id":"a","type":"text","default":"` + s("d", 513) + `"}`), want{a2ui.ErrLimit, "/components/0/props/fields/0/default", "length", 512, 513}},
	{"number min string", field(`{"id":"n","type":"number","min":"0"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/min", "want a number, got string", 0, 0}},
	{"number min -2e6", field(`{"id":"n","type":"number","min":-2e6}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/min", "outside ±1000000", 0, 0}},
	{"number max 2e6", field(`{"id":"n","type":"number","max":2e6}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/max", "outside ±1000000", 0, 0}},
	{"number max below min", field(`{"id":"n","type":"number","min":5,"max":1}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/max", "1 is below min 5", 0, 0}},
	{"number default max below min", field(`{"id":"n","type":"number","min":200}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/max", "100 is below min 200", 0, 0}},
	{"number step 0", field(`{"id":"n","type":"number","step":0}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/step", "outside [1e-06, 100000]", 0, 0}},
	{"number step 1e6", field(`{"id":"n","type":"number","step":1e6}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/step", "outside", 0, 0}},
	{"number default out of range", field(`{"id":"n","type":"number","min":0,"max":10,"default":11}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/default", "11 is outside [min, max] = [0, 10]", 0, 0}},
	{"number default string", field(`{"id":"n","type":"number","default":"3"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/default", "want a number, got string", 0, 0}},
	{"select no options key", field(`{"id":"s","type":"select"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/options", "required key is missing", 0, 0}},
	{"select empty options", field(`{"id":"s","type":"select","options":[]}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/options", "no options", 0, 0}},
	{"select 65 options", field(`{"id":"s","type":"select","options":[` + repeat(65, func(i int) string { return fmt.Sprintf(`{"label":"o","value":"v%d"}`, i) }) + `]}`), want{a2ui.ErrLimit, "/components/0/props/fields/0/options", "option count", 64, 65}},
	{"option unknown key", field(`{"id":"s","type":"select","options":[{"label":"A","value":"a","icon":"x"}]}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/options/0/icon", "unknown key (want label, value)", 0, 0}},
	{"option missing label", field(`{"id":"s","type":"select","options":[{"value":"a"}]}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/options/0/label", "required key is missing", 0, 0}},
	{"option label 65", field(`{"id":"s","type":"select","options":[{"label":"` + s("l", 65) + `","value":"a"}]}`), want{a2ui.ErrLimit, "/components/0/props/fields/0/options/0/label", "length", 64, 65}},
	{"option value bad", field(`{"id":"s","type":"select","options":[{"label":"A","value":"a"},{"label":"B","value":"b b"}]}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/options/1/value", "has the character", 0, 0}},
	{"option value 65", field(`{"id":"s","type":"select","options":[{"label":"A","value":"` + s("v", 65) + `"}]}`), want{a2ui.ErrLimit, "/components/0/props/fields/0/options/0/value", "length", 64, 65}},
	{"option value repeated", field(`{"id":"s","type":"select","options":[{"label":"A","value":"a"},{"label":"B","value":"a"}]}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/options/1/value", "already used by /components/0/props/fields/0/options/0", 0, 0}},
	{"select default not an option", field(`{"id":"s","type":"select","options":[{"label":"A","value":"a"}],"default":"b"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/default", `"b" is not an option value`, 0, 0}},
	{"select default number", field(`{"id":"s","type":"select","options":[{"label":"A","value":"a"}],"default":1}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/default", "want a string", 0, 0}},
	{"checkbox default string", field(`{"id":"c","type":"checkbox","default":"yes"}`), want{a2ui.ErrInvalid, "/components/0/props/fields/0/default", "want a boolean, got string", 0, 0}},

	// chart.
	{"chart kind radar", doc(comp("c", "chart", `{"kind":"radar"}`)), want{a2ui.ErrInvalid, "/components/0/props/kind", `unknown chart kind "radar" (want bar, line, pie)`, 0, 0}},
	{"chart title 513", doc(comp("c", "chart", `{"title":"`+s("t", 513)+`"}`)), want{a2ui.ErrLimit, "/components/0/props/title", "length", 512, 513}},
	{"chart 65 points", doc(comp("c", "chart", `{"series":[`+repeat(65, func(int) string { return `{"label":"a","value":1}` })+`]}`)), want{a2ui.ErrLimit, "/components/0/props/series", "point count", 64, 65}},
	{"chart negative", doc(comp("c", "chart", `{"series":[{"label":"a","value":1},{"label":"b","value":-1}]}`)), want{a2ui.ErrInvalid, "/components/0/props/series/1/value", "-1 is outside [0, 1000000]", 0, 0}},
	{"chart over max", doc(comp("c", "chart", `{"series":[{"label":"a","value":1000000.5}]}`)), want{a2ui.ErrInvalid, "/components/0/props/series/0/value", "outside [0, 1000000]", 0, 0}},
	{"chart value string", doc(comp("c", "chart", `{"series":[{"label":"a","value":"1"}]}`)), want{a2ui.ErrInvalid, "/components/0/props/series/0/value", "want a number, got string", 0, 0}},
	{"chart point no value", doc(comp("c", "chart", `{"series":[{"label":"a"}]}`)), want{a2ui.ErrInvalid, "/components/0/props/series/0/value", "required key is missing", 0, 0}},
	{"chart point extra key", doc(comp("c", "chart", `{"series":[{"label":"a","value":1,"color":"red"}]}`)), want{a2ui.ErrInvalid, "/components/0/props/series/0/color", "unknown key", 0, 0}},
	{"chart label 513", doc(comp("c", "chart", `{"series":[{"label":"`+s("l", 513)+`","value":1}]}`)), want{a2ui.ErrLimit, "/components/0/props/series/0/label", "length", 512, 513}},

	// experimental governance.
	{"experimental not object", withExperimental(``)[:0] + `{"v":1,"surface":"s","components":[` + txt("a", "x") + `],"experimental":true}`, want{a2ui.ErrInvalid, "/experimental", "want an object, got boolean", 0, 0}},
	{"experimental unknown key", withExperimental(gov + `,"owner":"x"`), want{a2ui.ErrInvalid, "/experimental/owner", "unknown key", 0, 0}},
	{"experimental no security_review", withExperimental(`"track_id":"t","feature_flag":"ff","support_summary":"sum","exit_criteria":["e"]`), want{a2ui.ErrInvalid, "/experimental/security_review", "required key is missing", 0, 0}},
	{"experimental no track_id", withExperimental(`"feature_flag":"ff","support_summary":"sum","security_review":["r"],"exit_criteria":["e"]`), want{a2ui.ErrInvalid, "/experimental/track_id", "required key is missing", 0, 0}},
	{"experimental blank track_id", withExperimental(strings.Replace(gov, `"track_id":"t"`, `"track_id":" "`, 1)), want{a2ui.ErrInvalid, "/experimental/track_id", "blank", 0, 0}},
	{"experimental track_id 65", withExperimental(strings.Replace(gov, `"track_id":"t"`, `"track_id":"`+s("t", 65)+`"`, 1)), want{a2ui.ErrLimit, "/experimental/track_id", "length", 64, 65}},
	{"experimental feature_flag char", withExperimental(strings.Replace(gov, `"feature_flag":"ff"`, `"featureFlag":"f f"`, 1)), want{a2ui.ErrInvalid, "/experimental/featureFlag", "has the character ' ' (want [A-Za-z0-9:._-])", 0, 0}},
	{"experimental feature_flag 97", withExperimental(strings.Replace(gov, `"feature_flag":"ff"`, `"feature_flag":"`+s("f", 97)+`"`, 1)), want{a2ui.ErrLimit, "/experimental/feature_flag", "length", 96, 97}},
	{"experimental summary 241", withExperimental(strings.Replace(gov, `"support_summary":"sum"`, `"support_summary":"`+s("s", 241)+`"`, 1)), want{a2ui.ErrLimit, "/experimental/support_summary", "length", 240, 241}},
	{"experimental both spellings", withExperimental(gov + `,"trackId":"t"`), want{a2ui.ErrInvalid, "/experimental/trackId", `both "track_id" and its alias "trackId"`, 0, 0}},
	{"experimental rollout", withExperimental(gov + `,"rollout_stage":"ga"`), want{a2ui.ErrInvalid, "/experimental/rollout_stage", `unknown rollout stage "ga" (want disabled, dark_launch, operator_preview, limited_preview)`, 0, 0}},
	{"experimental ambient", withExperimental(gov + `,"ambientMode":"always_on"`), want{a2ui.ErrInvalid, "/experimental/ambientMode", "unknown ambient mode", 0, 0}},
	{"push_to_talk without consent", withExperimental(gov + `,"ambient_mode":"push_to_talk"`), want{a2ui.ErrInvalid, "/experimental/consent_required", "push_to_talk needs consent_required true", 0, 0}},
	{"push_to_talk consent false", withExperimental(gov + `,"ambient_mode":"push_to_talk","consentRequired":false`), want{a2ui.ErrInvalid, "/experimental/consentRequired", "push_to_talk needs", 0, 0}},
	{"experimental empty exit_criteria", withExperimental(strings.Replace(gov, `"exit_criteria":["e"]`, `"exit_criteria":[]`, 1)), want{a2ui.ErrInvalid, "/experimental/exit_criteria", "empty", 0, 0}},
	{"experimental 7 reviews", withExperimental(strings.Replace(gov, `"security_review":["r"]`, `"security_review":["1","2","3","4","5","6","7"]`, 1)), want{a2ui.ErrLimit, "/experimental/security_review", "entry count", 6, 7}},
	{"experimental review 161", withExperimental(strings.Replace(gov, `"security_review":["r"]`, `"security_review":["r","`+s("r", 161)+`"]`, 1)), want{a2ui.ErrLimit, "/experimental/security_review/1", "length", 160, 161}},
	{"experimental blank criterion", withExperimental(strings.Replace(gov, `"exit_criteria":["e"]`, `"exitCriteria":[""]`, 1)), want{a2ui.ErrInvalid, "/experimental/exitCriteria/0", "blank", 0, 0}},
}

func TestValidateBad(t *testing.T) {
	for _, tt := range badDocs {
		t.Run(tt.name, func(t *testing.T) {
			d, err := a2ui.Validate([]byte(tt.data))
			if d != nil {
				t.Fatal("a document came back with the error")
			}
			checkErr(t, err, tt.want, a2ui.ErrInvalid)
		})
	}
}

func TestErrorString(t *testing.T) {
	_, err := a2ui.Validate([]byte(badDocs[0].data))
	if got, want := err.Error(), "a2ui: document size in bytes is 262164, over the limit of 262144"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	_, err = a2ui.Validate([]byte(doc(txt("a", "x"), txt("b", "x"), txt("c", "x"), form(`{"id":"a","type":"text"}`, `{"id":"b","type":"email"}`, `{"id":"d","type":"date"}`))))
	if got, want := err.Error(), `a2ui: /components/3/props/fields/2/type: unknown field type "date" (want text, email, number, select, checkbox)`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Hostile text in a message is quoted and bounded.
	_, err = a2ui.Validate([]byte(doc(comp("a", s("\n<script>", 100), `{}`))))
	if msg := err.Error(); len(msg) > 200 || strings.Contains(msg, "\n") {
		t.Fatalf("message not bounded or not quoted: %q", msg)
	}
}

func TestIsDocument(t *testing.T) {
	big := `{"components":[` + repeat(2000, func(int) string { return `{"v":1,"surface":"x","s":"}]\"{["}` }) + `],"surface":"s","v":1}`
	tests := []struct {
		name string
		data string
		want bool
	}{
		{"document", doc(txt("a", "x")), true},
		{"invalid document", `{"v":9,"surface":1,"components":"x"}`, true},
		{"keys in another order after a big value", big, true},
		{"escaped key", `{"\u0076":1,"surface":"s","components":[]}`, true},
		{"stops after the three keys", `{"v":1,"surface":"s","components":` + s("[", 100), true},
		{"whitespace", " \r\n\t{ \"v\" : 1 , \"surface\" : \"s\" , \"components\" : [ ] }", true},
		{"no components", `{"v":1,"surface":"s"}`, false},
		{"no v", `{"surface":"s","components":[]}`, false},
		{"keys only nested", `{"a":{"v":1,"surface":"s","components":[]}}`, false},
		{"keys only in strings", `{"a":"\"v\":1,\"surface\":\"s\",\"components\":[]"}`, false},
		{"array", `[{"v":1,"surface":"s","components":[]}]`, false},
		{"text", `hello`, false},
		{"empty", ``, false},
		{"empty object", `{}`, false},
		{"patch", `{"v":1,"ops":[]}`, false},
		{"broken before the keys", `{"v":1,"surface":"s" "components":[]}`, false},
		{"unterminated string", `{"v":1,"surface":"s`, false},
		{"unterminated value", `{"a":[1,2`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := a2ui.IsDocument([]byte(tt.data)); got != tt.want {
				t.Fatalf("IsDocument = %v, want %v", got, tt.want)
			}
		})
	}
}
