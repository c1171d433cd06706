package a2ui_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/sdk/go/a2ui"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEncoding(t *testing.T) {
	tests := []struct {
		name string
		c    a2ui.Component
		want string
	}{
		{"text", a2ui.Text("t", "hello"), `{"id":"t","type":"text","props":{"value":"hello"}}`},
		{"text tone", a2ui.TextWithTone("t", "ok", a2ui.ToneSuccess), `{"id":"t","type":"text","props":{"value":"ok","tone":"success"}}`},
		{"markdown", a2ui.Markdown("m", "# H"), `{"id":"m","type":"markdown","props":{"value":"# H"}}`},
		{"list", a2ui.List("l", true, "a", 2), `{"id":"l","type":"list","props":{"ordered":true,"items":["a",2]}}`},
		{"empty list", a2ui.List("l", false), `{"id":"l","type":"list","props":{"ordered":false,"items":[]}}`},
		{"table", a2ui.Table("tb", []string{"Region", "Sales"}, [][]any{{"EU", 1.5}}), `{"id":"tb","type":"table","props":{"columns":["Region","Sales"],"rows":[["EU",1.5]]}}`},
		{"bar chart", a2ui.BarChart("c", "Sales", a2ui.Point{Label: "EU", Value: 3}), `{"id":"c","type":"chart","props":{"title":"Sales","kind":"bar","series":[{"label":"EU","value":3}]}}`},
		{"pie chart", a2ui.PieChart("c", "", a2ui.Point{Label: "a", Value: 1}), `{"id":"c","type":"chart","props":{"kind":"pie","series":[{"label":"a","value":1}]}}`},
		{"line chart", a2ui.LineChart("c", "T"), `{"id":"c","type":"chart","props":{"title":"T","kind":"line","series":[]}}`},
		{
			"form",
			a2ui.Form("f", "Contact", "Send",
				func() a2ui.Field {
					f := a2ui.TextField("name", "Name")
					f.Placeholder, f.Required, f.Hint = "Jane", true, "your name"
					return f
				}(),
				a2ui.EmailField("email", "Email"),
				func() a2ui.Field { f := a2ui.NumberField("qty", "Quantity", 1, 10, 1); f.Default = 2; return f }(),
				func() a2ui.Field {
					f := a2ui.SelectField("size", "Size", a2ui.Option{Label: "Small", Value: "s"}, a2ui.Option{Label: "Large", Value: "l"})
					f.Default = "l"
					return f
				}(),
				func() a2ui.Field { f := a2ui.CheckboxField("ok", "Agree"); f.Default = false; return f }(),
			),
			`{"id":"f","type":"form","props":{"title":"Contact","submit_label":"Send","fields":[` +
				`{"hint":"your name","id":"name","label":"Name","placeholder":"Jane","required":true,"type":"text"},` +
				`{"id":"email","label":"Email","type":"email"},` +
				`{"default":2,"id":"qty","label":"Quantity","max":10,"min":1,"step":1,"type":"number"},` +
				`{"default":"l","id":"size","label":"Size","options":[{"label":"Small","value":"s"},{"label":"Large","value":"l"}],"type":"select"},` +
				`{"default":false,"id":"ok","label":"Agree","type":"checkbox"}]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := a2ui.New("s", tt.c); err != nil {
				t.Fatalf("New: %v", err)
			}
			if got := mustJSON(t, tt.c); got != tt.want {
				t.Fatalf("got\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

func TestDocument(t *testing.T) {
	doc, err := a2ui.New("bootstrap", a2ui.Text("welcome", "Palyra bootstrap"))
	if err != nil {
		t.Fatal(err)
	}
	// The known-good document of Palyra's schemas/json.
	want := `{"v":1,"surface":"bootstrap","components":[{"id":"welcome","type":"text","props":{"value":"Palyra bootstrap"}}]}`
	if got := mustJSON(t, doc); got != want {
		t.Fatalf("got %s", got)
	}
}

func rows(n, cells int) [][]any {
	out := make([][]any, n)
	for i := range out {
		out[i] = make([]any, cells)
		for j := range out[i] {
			out[i][j] = j
		}
	}
	return out
}

func points(n int) []a2ui.Point {
	out := make([]a2ui.Point, n)
	for i := range out {
		out[i] = a2ui.Point{Label: fmt.Sprint(i), Value: float64(i)}
	}
	return out
}

func fields(n int) []a2ui.Field {
	out := make([]a2ui.Field, n)
	for i := range out {
		out[i] = a2ui.TextField(fmt.Sprintf("f%d", i), "F")
	}
	return out
}

func options(n int) []a2ui.Option {
	out := make([]a2ui.Option, n)
	for i := range out {
		out[i] = a2ui.Option{Label: "o", Value: fmt.Sprintf("v%d", i)}
	}
	return out
}

func components(n int) []a2ui.Component {
	out := make([]a2ui.Component, n)
	for i := range out {
		out[i] = a2ui.Text(fmt.Sprintf("c%d", i), "x")
	}
	return out
}

func cols(n int) []string { return strings.Split(strings.Repeat("c,", n)[:2*n-1], ",") }

func items(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestLimits checks every limit at the edge: the maximum passes, one more
// fails with a *LimitError naming the limit and the size.
func TestLimits(t *testing.T) {
	s := strings.Repeat
	sel := func(n int) a2ui.Field { return a2ui.SelectField("s", "S", options(n)...) }
	tests := []struct {
		name    string
		surface string
		comps   []a2ui.Component
		limit   string // "" means valid
		max     int
		size    int
	}{
		{"surface 128", s("a", 128), components(1), "", 0, 0},
		{"surface 129", s("a", 129), components(1), "surface length", 128, 129},
		{"surface counts UTF-16 units", s("😀", 65), components(1), "surface length", 128, 130},
		{"components 128", "s", components(128), "", 0, 0},
		{"components 129", "s", components(129), "components", 128, 129},
		{"component id 64", "s", []a2ui.Component{a2ui.Text(s("i", 64), "x")}, "", 0, 0},
		{"component id 65", "s", []a2ui.Component{a2ui.Text(s("i", 65), "x")}, "component id length", 64, 65},
		{"text 512", "s", []a2ui.Component{a2ui.Text("t", s("x", 512))}, "", 0, 0},
		{"text 513", "s", []a2ui.Component{a2ui.Text("t", s("x", 513))}, "text length", 512, 513},
		{"markdown 12000", "s", []a2ui.Component{a2ui.Markdown("m", s("x", 12000))}, "", 0, 0},
		{"markdown 12001", "s", []a2ui.Component{a2ui.Markdown("m", s("x", 12001))}, "markdown length", 12000, 12001},
		{"list 256", "s", []a2ui.Component{a2ui.List("l", false, items(256)...)}, "", 0, 0},
		{"list 257", "s", []a2ui.Component{a2ui.List("l", false, items(257)...)}, "list items", 256, 257},
		{"list item string 513", "s", []a2ui.Component{a2ui.List("l", false, s("x", 513))}, "list item 0 length", 512, 513},
		{"table 16 columns", "s", []a2ui.Component{a2ui.Table("t", cols(16), rows(1, 16))}, "", 0, 0},
		{"table 17 columns", "s", []a2ui.Component{a2ui.Table("t", cols(17), nil)}, "table columns", 16, 17},
		{"table 256 rows", "s", []a2ui.Component{a2ui.Table("t", cols(2), rows(256, 2))}, "", 0, 0},
		{"table 257 rows", "s", []a2ui.Component{a2ui.Table("t", cols(2), rows(257, 2))}, "table rows", 256, 257},
		{"table short row", "s", []a2ui.Component{a2ui.Table("t", cols(3), rows(1, 1))}, "", 0, 0},
		{"table long row", "s", []a2ui.Component{a2ui.Table("t", cols(2), rows(1, 3))}, "row 0 cells", 2, 3},
		{"table cell 513", "s", []a2ui.Component{a2ui.Table("t", cols(1), [][]any{{s("x", 513)}})}, "row 0 cell 0 length", 512, 513},
		{"form 32 fields", "s", []a2ui.Component{a2ui.Form("f", "", "", fields(32)...)}, "", 0, 0},
		{"form 33 fields", "s", []a2ui.Component{a2ui.Form("f", "", "", fields(33)...)}, "form fields", 32, 33},
		{"submit label 49", "s", []a2ui.Component{a2ui.Form("f", "", s("x", 49))}, "submit label length", 48, 49},
		{"field id 49", "s", []a2ui.Component{a2ui.Form("f", "", "", a2ui.TextField(s("x", 49), "L"))}, "field id length", 48, 49},
		{"field label 65", "s", []a2ui.Component{a2ui.Form("f", "", "", a2ui.TextField("x", s("x", 65)))}, "field label length", 64, 65},
		{"select 64 options", "s", []a2ui.Component{a2ui.Form("f", "", "", sel(64))}, "", 0, 0},
		{"select 65 options", "s", []a2ui.Component{a2ui.Form("f", "", "", sel(65))}, "select options", 64, 65},
		{"chart 64 points", "s", []a2ui.Component{a2ui.BarChart("c", "", points(64)...)}, "", 0, 0},
		{"chart 65 points", "s", []a2ui.Component{a2ui.BarChart("c", "", points(65)...)}, "chart points", 64, 65},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a2ui.New(tt.surface, tt.comps...)
			if tt.limit == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			var le *a2ui.LimitError
			if !errors.As(err, &le) || !errors.Is(err, a2ui.ErrLimit) {
				t.Fatalf("err = %v, want a *LimitError", err)
			}
			if le.Limit != tt.limit || le.Max != tt.max || le.Size != tt.size {
				t.Fatalf("LimitError = %+v, want %s %d/%d", le, tt.limit, tt.size, tt.max)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.limit) || !strings.Contains(msg, fmt.Sprint(tt.size)) {
				t.Fatalf("message %q does not name the limit and the size", msg)
			}
		})
	}
}

func TestInvalid(t *testing.T) {
	num := func(min, max, step float64, def any) a2ui.Field {
		f := a2ui.NumberField("n", "N", min, max, step)
		f.Default = def
		return f
	}
	withDefault := func(f a2ui.Field, def any) a2ui.Field { f.Default = def; return f }
	tests := []struct {
		name    string
		surface string
		comps   []a2ui.Component
		msg     string
	}{
		{"blank surface", "  ", components(1), "surface is blank"},
		{"no components", "s", nil, "no components"},
		{"empty id", "s", []a2ui.Component{a2ui.Text("", "x")}, "component id is empty"},
		{"bad id char", "s", []a2ui.Component{a2ui.Text("a b", "x")}, `"a b"`},
		{"duplicate id", "s", []a2ui.Component{a2ui.Text("a", "x"), a2ui.Markdown("a", "y")}, "already used by components[0]"},
		{"nil props", "s", []a2ui.Component{{ID: "a", Type: a2ui.TypeText}}, "no props"},
		{"props of another type", "s", []a2ui.Component{{ID: "a", Type: a2ui.TypeTable, Props: a2ui.TextProps{}}}, `props are for type "text"`},
		{"unknown tone", "s", []a2ui.Component{a2ui.TextWithTone("a", "x", "loud")}, `unknown tone "loud"`},
		{"table without columns", "s", []a2ui.Component{a2ui.Table("t", nil, nil)}, "no columns"},
		{"NaN cell", "s", []a2ui.Component{a2ui.Table("t", cols(1), [][]any{{math.NaN()}})}, "not a finite number"},
		{"chart negative", "s", []a2ui.Component{a2ui.BarChart("c", "", a2ui.Point{Label: "a", Value: -1})}, "outside [0, 1000000]"},
		{"chart over max", "s", []a2ui.Component{a2ui.BarChart("c", "", a2ui.Point{Label: "a", Value: 1e6 + 1})}, "outside"},
		{"chart NaN", "s", []a2ui.Component{a2ui.BarChart("c", "", a2ui.Point{Label: "a", Value: math.Inf(1)})}, "outside"},
		{"chart kind", "s", []a2ui.Component{a2ui.Chart("c", "radar", "")}, `unknown chart kind "radar"`},
		{"field type", "s", []a2ui.Component{a2ui.Form("f", "", "", a2ui.Field{ID: "x", Type: "date"})}, `unknown field type "date"`},
		{"duplicate field", "s", []a2ui.Component{a2ui.Form("f", "", "", a2ui.TextField("x", ""), a2ui.EmailField("x", ""))}, "already used by fields[0]"},
		{"text default type", "s", []a2ui.Component{a2ui.Form("f", "", "", withDefault(a2ui.TextField("x", ""), 3))}, "not a string"},
		{"number max < min", "s", []a2ui.Component{a2ui.Form("f", "", "", num(5, 1, 1, nil))}, "below min"},
		{"number range", "s", []a2ui.Component{a2ui.Form("f", "", "", num(-2e6, 1, 1, nil))}, "outside ±1000000"},
		{"number step 0", "s", []a2ui.Component{a2ui.Form("f", "", "", num(0, 1, 0, nil))}, "step 0"},
		{"number default out of range", "s", []a2ui.Component{a2ui.Form("f", "", "", num(0, 10, 1, 11))}, "outside [0, 10]"},
		{"number default type", "s", []a2ui.Component{a2ui.Form("f", "", "", num(0, 10, 1, "3"))}, "not a number"},
		{"select no options", "s", []a2ui.Component{a2ui.Form("f", "", "", a2ui.SelectField("s", ""))}, "no options"},
		{"select bad value", "s", []a2ui.Component{a2ui.Form("f", "", "", a2ui.SelectField("s", "", a2ui.Option{Label: "A", Value: "a b"}))}, "option 0 value"},
		{"select repeated value", "s", []a2ui.Component{a2ui.Form("f", "", "", a2ui.SelectField("s", "", a2ui.Option{Label: "A", Value: "a"}, a2ui.Option{Label: "B", Value: "a"}))}, "repeats"},
		{"select default", "s", []a2ui.Component{a2ui.Form("f", "", "", withDefault(a2ui.SelectField("s", "", a2ui.Option{Label: "A", Value: "a"}), "b"))}, "not an option value"},
		{"checkbox default", "s", []a2ui.Component{a2ui.Form("f", "", "", withDefault(a2ui.CheckboxField("c", ""), "yes"))}, "not a bool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a2ui.New(tt.surface, tt.comps...)
			if !errors.Is(err, a2ui.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err %q does not contain %q", err, tt.msg)
			}
		})
	}
	d := &a2ui.Document{V: 2, Surface: "s", Components: components(1)}
	if err := d.Validate(); !errors.Is(err, a2ui.ErrInvalid) {
		t.Fatalf("v=2: %v", err)
	}
}

func TestPatch(t *testing.T) {
	p, err := a2ui.NewPatch(
		a2ui.Add(a2ui.Pointer("components", "-"), a2ui.Text("n", "new")),
		a2ui.Replace(a2ui.Pointer("components", "0", "props", "value"), nil),
		a2ui.Remove("/components/1"),
		a2ui.Add(a2ui.Pointer("a/b", "c~d"), 1),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"ops":[` +
		`{"op":"add","path":"/components/-","value":{"id":"n","type":"text","props":{"value":"new"}}},` +
		`{"op":"replace","path":"/components/0/props/value","value":null},` +
		`{"op":"remove","path":"/components/1"},` +
		`{"op":"add","path":"/a~1b/c~0d","value":1}]}`
	if got := mustJSON(t, p); got != want {
		t.Fatalf("got\n  %s\nwant\n  %s", got, want)
	}

	doc, err := a2ui.New("s", a2ui.Text("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := a2ui.ReplaceRoot(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, root); got != `{"v":1,"ops":[{"op":"replace","path":"","value":{"v":1,"surface":"s","components":[{"id":"a","type":"text","props":{"value":"b"}}]}}]}` {
		t.Fatalf("replace root: %s", got)
	}
	if _, err := a2ui.ReplaceRoot(&a2ui.Document{V: 1, Surface: "s"}); !errors.Is(err, a2ui.ErrInvalid) {
		t.Fatalf("ReplaceRoot of an invalid document: %v", err)
	}

	many := make([]a2ui.Op, 257)
	for i := range many {
		many[i] = a2ui.Remove("/x")
	}
	tests := []struct {
		name string
		ops  []a2ui.Op
		want error
		msg  string
	}{
		{"no ops", nil, a2ui.ErrInvalid, "no ops"},
		{"256 ops", many[:256], nil, ""},
		{"257 ops", many, a2ui.ErrLimit, "patch ops is 257, over the limit of 256"},
		{"unknown op", []a2ui.Op{{Op: "move", Path: "/a"}}, a2ui.ErrInvalid, `unknown op "move"`},
		{"remove root", []a2ui.Op{a2ui.Remove("")}, a2ui.ErrInvalid, "remove of the root"},
		{"relative path", []a2ui.Op{a2ui.Add("a", 1)}, a2ui.ErrInvalid, "does not start with /"},
		{"bad escape", []a2ui.Op{a2ui.Add("/a~2", 1)}, a2ui.ErrInvalid, "bad escape"},
		{"trailing tilde", []a2ui.Op{a2ui.Add("/a~", 1)}, a2ui.ErrInvalid, "bad escape"},
		{"__proto__", []a2ui.Op{a2ui.Add("/__proto__/x", 1)}, a2ui.ErrInvalid, "forbidden token"},
		{"constructor", []a2ui.Op{a2ui.Replace("/a/constructor", 1)}, a2ui.ErrInvalid, "forbidden token"},
		{"path 512", []a2ui.Op{a2ui.Add("/"+strings.Repeat("a", 511), 1)}, nil, ""},
		{"path 513", []a2ui.Op{a2ui.Add("/"+strings.Repeat("a", 512), 1)}, a2ui.ErrLimit, "path length is 513"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a2ui.NewPatch(tt.ops...)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.want, tt.msg)
			}
		})
	}
}
