package a2ui_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
	sdk "github.com/palyra-go/palyra/sdk/go/a2ui"
)

// sdkRoundTrip checks that the JSON of an SDK document validates and that
// the canonical form of the result is byte for byte the SDK's.
func sdkRoundTrip(t *testing.T, d *sdk.Document) {
	t.Helper()
	in, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a2ui.Validate(in)
	if err != nil {
		t.Fatalf("Validate of an SDK document: %v\n%.400s", err, in)
	}
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(in) {
		t.Fatalf("canonical form differs from the SDK's\nsdk: %.600s\nour: %.600s", in, out)
	}
}

func sdkFields(n int) []sdk.Field {
	out := make([]sdk.Field, n)
	for i := range out {
		out[i] = sdk.TextField(fmt.Sprintf("f%d", i), "F")
	}
	return out
}

func sdkOptions(n int) []sdk.Option {
	out := make([]sdk.Option, n)
	for i := range out {
		out[i] = sdk.Option{Label: strings.Repeat("o", sdk.MaxOptionLabel), Value: fmt.Sprintf("v%d", i)}
	}
	return out
}

func sdkPoints(n int) []sdk.Point {
	out := make([]sdk.Point, n)
	for i := range out {
		out[i] = sdk.Point{Label: fmt.Sprint(i), Value: float64(i) * 15625.5}
	}
	return out
}

func withDefault(f sdk.Field, def any) sdk.Field { f.Default = def; return f }

// TestSDKDocuments: every kind of document the SDK builds, at its limits,
// validates here and comes back in the same canonical form.
func TestSDKDocuments(t *testing.T) {
	many := func(n int, c func(i int) sdk.Component) []sdk.Component {
		out := make([]sdk.Component, n)
		for i := range out {
			out[i] = c(i)
		}
		return out
	}
	cells := func(rows, cols int) [][]any {
		out := make([][]any, rows)
		for i := range out {
			out[i] = make([]any, cols)
			for j := range out[i] {
				out[i][j] = []any{"EU", 1.5, -2, true, nil, "<b>&"}[(i+j)%6]
			}
		}
		return out
	}
	cols := func(n int) []string { return strings.Split(strings.Repeat("c,", n)[:2*n-1], ",") }
	items := make([]any, sdk.MaxListItems)
	for i := range items {
		items[i] = []any{"item", 2, 0.25, false, nil, map[string]any{"k": []any{1, "x"}}}[i%6]
	}
	kitchen := sdk.Form("f", "Contact", "Send",
		func() sdk.Field {
			f := sdk.TextField("name", "Name")
			f.Placeholder, f.Required, f.Hint, f.Default = "Jane", true, "your name", "J"
			return f
		}(),
		withDefault(sdk.EmailField("email", "Email"), "not checked"),
		withDefault(sdk.NumberField("qty", "Quantity", -1e6, 1e6, 1e-6), 2.5),
		withDefault(sdk.NumberField("n", "N", 1, 1, 1e5), 1),
		withDefault(sdk.SelectField("size", "Size", sdk.Option{Label: "Small", Value: "s"}, sdk.Option{Label: "", Value: "l"}), "l"),
		withDefault(sdk.CheckboxField("ok", "Agree"), true),
		sdk.Field{ID: "bare", Type: sdk.FieldText},
	)
	tests := []struct {
		name    string
		surface string
		comps   []sdk.Component
	}{
		{"text", "s", []sdk.Component{sdk.Text("t", "hello")}},
		{"tones", "s", []sdk.Component{
			sdk.TextWithTone("a", "x", sdk.ToneNormal), sdk.TextWithTone("b", "x", sdk.ToneMuted),
			sdk.TextWithTone("c", "x", sdk.ToneSuccess), sdk.TextWithTone("d", "x", sdk.ToneCritical),
		}},
		{"markdown", "s", []sdk.Component{sdk.Markdown("m", "# H\n\n- [x](https://e.org) `c`")}},
		{"lists", "s", []sdk.Component{sdk.List("l", true, "a", 2), sdk.List("e", false), sdk.List("max", false, items...)}},
		{"tables", "s", []sdk.Component{sdk.Table("a", []string{"Region", "Sales"}, [][]any{{"EU", 1.5}}), sdk.Table("b", cols(1), nil), sdk.Table("c", cols(3), cells(4, 1))}},
		{"charts", "s", []sdk.Component{
			sdk.BarChart("bar", "Sales", sdk.Point{Label: "EU", Value: 3}), sdk.LineChart("line", "T"),
			sdk.PieChart("pie", "", sdk.Point{Label: "a", Value: 0}, sdk.Point{Label: "b", Value: 1e6}),
			sdk.Chart("none", "", "", sdk.Point{Label: "", Value: 0.5}),
		}},
		{"form of every field", "s", []sdk.Component{kitchen}},
		{"empty form", "s", []sdk.Component{sdk.Form("f", "", "")}},
		{"known good", "bootstrap", []sdk.Component{sdk.Text("welcome", "Palyra bootstrap")}},
		{"surface 128 UTF-16", strings.Repeat("😀", 64), []sdk.Component{sdk.Text("a", "b")}},
		{"components 128", "s", many(sdk.MaxComponents, func(i int) sdk.Component { return sdk.Text(fmt.Sprint("c:", i), "x") })},
		{"id 64", "s", []sdk.Component{sdk.Text(strings.Repeat("i", 64), "x"), sdk.Text("A-z_0:9", "y")}},
		{"text 512", "s", []sdk.Component{sdk.Text("t", strings.Repeat("é", 512))}},
		{"markdown 12000", "s", []sdk.Component{sdk.Markdown("m", strings.Repeat("x", 12000))}},
		{"table 16x256", "s", []sdk.Component{sdk.Table("t", cols(16), cells(256, 16))}},
		{"cell 512", "s", []sdk.Component{sdk.Table("t", cols(1), [][]any{{strings.Repeat("x", 512)}})}},
		{"form 32 fields", "s", []sdk.Component{sdk.Form("f", strings.Repeat("t", 512), strings.Repeat("x", 48), sdkFields(32)...)}},
		{"field edges", "s", []sdk.Component{sdk.Form("f", "", "", func() sdk.Field {
			f := sdk.TextField(strings.Repeat("x", 48), strings.Repeat("l", 64))
			f.Hint, f.Placeholder, f.Default = strings.Repeat("h", 128), strings.Repeat("p", 96), strings.Repeat("d", 512)
			return f
		}())}},
		{"select 64 options", "s", []sdk.Component{sdk.Form("f", "", "", sdk.SelectField("s", "S", sdkOptions(64)...))}},
		{"chart 64 points", "s", []sdk.Component{sdk.BarChart("c", strings.Repeat("t", 512), sdkPoints(64)...)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := sdk.New(tt.surface, tt.comps...)
			if err != nil {
				t.Fatalf("sdk.New: %v", err)
			}
			sdkRoundTrip(t, d)
		})
	}
}

// TestSDKAgreement builds random documents with the SDK's types, valid and
// not, near every limit, and checks that Validate accepts exactly those
// sdk.New accepts (within MaxDocumentBytes), with the same canonical form.
func TestSDKAgreement(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	g := gen{r}
	valid, invalid := 0, 0
	for n := 0; n < 1500; n++ {
		d := g.document()
		data, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		sdkErr := d.Validate()
		_, err = a2ui.Validate(data)
		if len(data) > a2ui.MaxDocumentBytes {
			if !errors.Is(err, a2ui.ErrLimit) {
				t.Fatalf("document of %d bytes: %v", len(data), err)
			}
			continue
		}
		if (sdkErr == nil) != (err == nil) {
			t.Fatalf("sdk: %v\nhost: %v\n%.2000s", sdkErr, err, data)
		}
		if sdkErr == nil {
			valid++
			sdkRoundTrip(t, d)
		} else {
			invalid++
		}
	}
	t.Logf("%d valid, %d invalid documents", valid, invalid)
	if valid < 300 || invalid < 300 {
		t.Fatalf("poor coverage: %d valid, %d invalid documents", valid, invalid)
	}
}

// gen makes random SDK values, at and around the limits.
type gen struct{ r *rand.Rand }

// size returns 0, 1, limit, limit+1 or a random size up to limit.
func (g gen) size(limit int) int {
	if g.rare() {
		return limit + 1
	}
	switch g.r.IntN(8) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return limit
	}
	return g.r.IntN(min(limit, 8) + 1)
}

// rare is true now and then: the chance of each invalid choice.
func (g gen) rare() bool { return g.r.IntN(40) == 0 }

// str returns a string of about n UTF-16 code units, some of them surrogate
// pairs.
func (g gen) str(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch g.r.IntN(20) {
		case 0:
			b.WriteString("😀")
			i++
		case 1:
			b.WriteString("é")
		case 2:
			b.WriteString("<\"\\")
			i += 2
		default:
			b.WriteByte('a' + byte(g.r.IntN(26)))
		}
	}
	return b.String()
}

func (g gen) id(limit int) string {
	if g.rare() {
		return g.pick("", "a b", "dup", strings.Repeat("i", limit+1)).(string)
	}
	if g.r.IntN(8) == 0 {
		return strings.Repeat("i", limit)
	}
	return fmt.Sprintf("id-%d:_%d", g.r.IntN(1000), g.r.IntN(1000))
}

// maybe returns one of good, or now and then one of bad.
func (g gen) maybe(good []any, bad ...any) any {
	if g.rare() {
		return g.pick(bad...)
	}
	return g.pick(good...)
}

func (g gen) pick(vs ...any) any { return vs[g.r.IntN(len(vs))] }

func (g gen) value() any {
	return g.pick("x", g.str(g.size(sdk.MaxString)), 2, 0.5, -3.25, true, nil, []any{"n", 1}, map[string]any{"k": "v"})
}

func (g gen) document() *sdk.Document {
	n := g.r.IntN(4)
	if g.r.IntN(20) == 0 {
		n = sdk.MaxComponents + g.r.IntN(2)
	}
	comps := make([]sdk.Component, n)
	for i := range comps {
		if n > 4 {
			comps[i] = sdk.Text(fmt.Sprint("c", i), "x")
			continue
		}
		comps[i] = g.component()
	}
	surface := g.maybe([]any{"s", strings.Repeat("s", sdk.MaxSurface), strings.Repeat("😀", 64)}, " ", strings.Repeat("s", sdk.MaxSurface+1), strings.Repeat("😀", 65)).(string)
	return &sdk.Document{V: sdk.Version, Surface: surface, Components: comps}
}

func (g gen) component() sdk.Component {
	id := g.id(sdk.MaxComponentID)
	switch g.r.IntN(6) {
	case 0:
		return sdk.TextWithTone(id, g.str(g.size(sdk.MaxString)), sdk.Tone(g.maybe([]any{"", "normal", "muted", "success", "critical"}, "loud").(string)))
	case 1:
		return sdk.Markdown(id, g.str(g.size(sdk.MaxMarkdown)))
	case 2:
		items := make([]any, g.size(sdk.MaxListItems))
		for i := range items {
			items[i] = g.value()
		}
		return sdk.List(id, g.r.IntN(2) == 0, items...)
	case 3:
		cols := make([]string, g.size(sdk.MaxTableColumns))
		for i := range cols {
			cols[i] = g.str(g.size(sdk.MaxString))
		}
		rows := make([][]any, g.size(sdk.MaxTableRows))
		for i := range rows {
			rows[i] = make([]any, g.r.IntN(len(cols)+2))
			for j := range rows[i] {
				rows[i][j] = g.value()
			}
		}
		return sdk.Table(id, cols, rows)
	case 4:
		fields := make([]sdk.Field, g.size(sdk.MaxFormFields))
		for i := range fields {
			fields[i] = g.field()
		}
		return sdk.Form(id, g.str(g.size(sdk.MaxString)), g.str(g.size(sdk.MaxSubmitLabel)), fields...)
	default:
		pts := make([]sdk.Point, g.size(sdk.MaxChartPoints))
		for i := range pts {
			pts[i] = sdk.Point{Label: g.str(g.size(sdk.MaxString)), Value: g.maybe([]any{0.0, 1.0, 0.5, 1e6}, 1e6+1, -1.0).(float64)}
		}
		return sdk.Chart(id, sdk.ChartKind(g.maybe([]any{"", "bar", "line", "pie"}, "radar").(string)), g.str(g.size(sdk.MaxString)), pts...)
	}
}

func (g gen) field() sdk.Field {
	f := sdk.Field{
		ID:       g.id(sdk.MaxFieldID),
		Label:    g.str(g.size(sdk.MaxFieldLabel)),
		Type:     sdk.FieldType(g.maybe([]any{"text", "email", "number", "select", "checkbox"}, "date").(string)),
		Required: g.r.IntN(2) == 0,
	}
	if g.r.IntN(3) == 0 {
		f.Hint = g.str(g.size(sdk.MaxFieldHint))
	}
	if g.r.IntN(3) == 0 {
		f.Placeholder = g.str(g.size(sdk.MaxPlaceholder))
	}
	f.Min = g.maybe([]any{0.0, 1.0, -1e6, 5.0}, 1e6+1, -1e6-1, 11.0).(float64)
	f.Max = g.maybe([]any{10.0, 100.0, 1e6}, 1e6+1, 0.0).(float64)
	f.Step = g.maybe([]any{1.0, 0.5, 1e-6, 1e5}, 1e-7, 1e5+1, 0.0).(float64)
	if f.Type == sdk.FieldSelect || g.rare() {
		n := g.size(sdk.MaxSelectOptions)
		if n == 0 && !g.rare() {
			n = 1
		}
		for i := range n {
			f.Options = append(f.Options, sdk.Option{Label: g.str(g.size(sdk.MaxOptionLabel)), Value: g.maybe([]any{fmt.Sprint("v", i)}, "v0", "a b", "", strings.Repeat("v", 65)).(string)})
		}
	}
	if g.r.IntN(2) == 0 {
		switch f.Type {
		case sdk.FieldText, sdk.FieldEmail:
			f.Default = g.str(g.size(sdk.MaxString))
		case sdk.FieldNumber:
			f.Default = g.pick(f.Min, f.Max, 5)
		case sdk.FieldSelect:
			f.Default = "v0"
		default:
			f.Default = g.r.IntN(2) == 0
		}
		if g.rare() {
			f.Default = g.pick("x", 3, 1e6+1, true, nil)
		}
	}
	return f
}

// TestSDKPatches: the SDK's patches, valid and not, parse here exactly
// when sdk.NewPatch accepts them, and apply as expected.
func TestSDKPatches(t *testing.T) {
	many := make([]sdk.Op, 257)
	for i := range many {
		many[i] = sdk.Remove("/x")
	}
	tests := []struct {
		name string
		ops  []sdk.Op
	}{
		{"mixed", []sdk.Op{
			sdk.Add(sdk.Pointer("components", "-"), sdk.Text("n", "new")),
			sdk.Replace(sdk.Pointer("components", "0", "props", "value"), nil),
			sdk.Remove("/components/1"),
			sdk.Add(sdk.Pointer("a/b", "c~d"), 1),
		}},
		{"no ops", nil},
		{"256 ops", many[:256]},
		{"257 ops", many},
		{"unknown op", []sdk.Op{{Op: "move", Path: "/a"}}},
		{"remove root", []sdk.Op{sdk.Remove("")}},
		{"relative path", []sdk.Op{sdk.Add("a", 1)}},
		{"bad escape", []sdk.Op{sdk.Add("/a~2", 1)}},
		{"trailing tilde", []sdk.Op{sdk.Add("/a~", 1)}},
		{"__proto__", []sdk.Op{sdk.Add("/__proto__/x", 1)}},
		{"escaped prototype", []sdk.Op{sdk.Add(sdk.Pointer("a", "prototype"), 1)}},
		{"constructor", []sdk.Op{sdk.Replace("/a/constructor", 1)}},
		{"path 512", []sdk.Op{sdk.Add("/"+strings.Repeat("a", 511), 1)}},
		{"path 513", []sdk.Op{sdk.Add("/"+strings.Repeat("a", 512), 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sdkErr := sdk.NewPatch(tt.ops...)
			data, err := json.Marshal(sdk.Patch{V: sdk.Version, Ops: tt.ops})
			if err != nil {
				t.Fatal(err)
			}
			_, err = a2ui.ParsePatch(data)
			if (sdkErr == nil) != (err == nil) {
				t.Fatalf("sdk: %v, host: %v\n%.300s", sdkErr, err, data)
			}
			if err != nil && !errors.Is(err, a2ui.ErrInvalidPatch) {
				t.Fatalf("error %v does not wrap ErrInvalidPatch", err)
			}
		})
	}

	// The SDK's replace-root patch turns any document into its argument.
	want, err := sdk.New("after", sdk.Markdown("m", "*new*"), sdk.BarChart("c", "", sdk.Point{Label: "a", Value: 1}))
	if err != nil {
		t.Fatal(err)
	}
	root, err := sdk.ReplaceRoot(want)
	if err != nil {
		t.Fatal(err)
	}
	pdata, _ := json.Marshal(root)
	p, err := a2ui.ParsePatch(pdata)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := a2ui.Apply([]byte(`{"v":1,"surface":"before","components":[]}`), p)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Fatalf("replace root: %s, want %s", gotJSON, wantJSON)
	}

	// An SDK patch that appends a component and edits another.
	base, _ := json.Marshal(want)
	p2, _ := sdk.NewPatch(
		sdk.Add(sdk.Pointer("components", "-"), sdk.Text("note", "preliminary")),
		sdk.Replace(sdk.Pointer("components", "0", "props", "value"), "*newer*"),
	)
	pdata, _ = json.Marshal(p2)
	p, err = a2ui.ParsePatch(pdata)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err = a2ui.Apply(base, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Components) != 3 || got.Components[2].ID != "note" || got.Components[0].Props.(*a2ui.MarkdownProps).Value != "*newer*" {
		t.Fatalf("patched document: %+v", got)
	}
}

// TestSDKUpdate: an SDK update is an output IsUpdate spots and ParseUpdate
// reads, and its patch applies to the SDK document it was made for.
func TestSDKUpdate(t *testing.T) {
	d, err := sdk.New("report", sdk.Text("title", "T"), sdk.Table("table", []string{"Label", "Value"}, [][]any{{"a", 1}}))
	if err != nil {
		t.Fatal(err)
	}
	u, err := sdk.NewUpdate("report",
		sdk.Add(sdk.Pointer("components", "1", "props", "rows", "-"), []any{"b", 2}),
		sdk.Replace(sdk.Pointer("components", "0", "props", "value"), "T2"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	if !a2ui.IsUpdate(out) {
		t.Fatalf("IsUpdate(%s) = false", out)
	}
	pu, err := a2ui.ParseUpdate(out)
	if err != nil {
		t.Fatal(err)
	}
	base, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := a2ui.Apply(base, pu.Patch)
	if err != nil {
		t.Fatal(err)
	}
	if tp := got.Components[1].Props.(*a2ui.TableProps); len(tp.Rows) != 2 || got.Components[0].Props.(*a2ui.TextProps).Value != "T2" {
		t.Fatalf("patched document %+v", got)
	}
	if _, err := sdk.NewUpdate(" "); !errors.Is(err, sdk.ErrInvalid) {
		t.Fatalf("NewUpdate of a blank surface: %v", err)
	}
	if _, err := sdk.NewUpdate("s"); !errors.Is(err, sdk.ErrInvalid) {
		t.Fatalf("NewUpdate without ops: %v", err)
	}
}
