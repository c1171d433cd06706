package output

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
		err  bool
	}{
		{"", Text, false}, {"text", Text, false}, {"wide", Wide, false}, {"JSON", JSON, false},
		{" yaml ", YAML, false}, {"yml", "", true}, {"table", "", true},
	} {
		got, err := ParseFormat(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, error %t", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), "json, yaml") {
			t.Errorf("ParseFormat(%q) error %q does not list the formats", tc.in, err)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"acme.echo", "acme.echo"},
		{"", `""`},
		{"cli test", `"cli test"`},
		{`say "hi"`, `"say \"hi\""`},
		{"it's", `"it's"`},
		{"tab\there", `"tab\there"`},
		{"line\nbreak", `"line\nbreak"`},
		{`back\slash`, `"back\\slash"`},
		{"héllo", "héllo"},
		{"a=b,c", "a=b,c"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestQuoteLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"blocked (status_quarantined)", "blocked (status_quarantined)"},
		{"", `""`},
		{" padded", `" padded"`},
		{"trailing ", `"trailing "`},
		{`"quoted"`, `"\"quoted\""`},
		{"two\nlines", `"two\nlines"`},
		{"it's fine", "it's fine"},
	} {
		if got := QuoteLine(tc.in); got != tc.want {
			t.Errorf("QuoteLine(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestKV(t *testing.T) {
	got := KV("skill_id", "acme.echo", "reason", "cli test", "current", true, "count", 3, "note", "")
	want := `skill_id=acme.echo reason="cli test" current=true count=3 note=""`
	if got != want {
		t.Errorf("KV = %s\nwant %s", got, want)
	}
}

// TestTableAlignsAndHidesWideColumns: every column starts at the same
// offset on every line, cells are quoted, a wide column shows only when
// asked, and a short row is padded with empty (quoted) cells.
func TestTableAlignsAndHidesWideColumns(t *testing.T) {
	tb := NewTable(Column{Header: "skill"}, Column{Header: "reason"}, Column{Header: "sha256", Wide: true}, Column{Header: "tools"},
		Column{Header: "description", Wide: true})
	tb.Row("acme.echo", "cli test", "abc123", 2, "Echoes the input")
	tb.Row("acme.web-fetch", "", "def", 10, " padded")
	tb.Row("x")
	if tb.Len() != 3 {
		t.Fatalf("Len = %d", tb.Len())
	}
	narrow := tb.String(false)
	wantNarrow := "SKILL           REASON      TOOLS\n" +
		"acme.echo       \"cli test\"  2\n" +
		"acme.web-fetch  \"\"          10\n" +
		"x               \"\"          \"\"\n"
	if narrow != wantNarrow {
		t.Errorf("narrow table:\n%s\nwant:\n%s", narrow, wantNarrow)
	}
	// The last column shown keeps inner spaces unquoted (it runs to the
	// end of the line); it is quoted when empty or padded.
	wide := tb.String(true)
	wantWide := "SKILL           REASON      SHA256  TOOLS  DESCRIPTION\n" +
		"acme.echo       \"cli test\"  abc123  2      Echoes the input\n" +
		"acme.web-fetch  \"\"          def     10     \" padded\"\n" +
		"x               \"\"          \"\"      \"\"     \"\"\n"
	if wide != wantWide {
		t.Errorf("wide table:\n%s\nwant:\n%s", wide, wantWide)
	}
}

func TestBlock(t *testing.T) {
	bl := NewBlock()
	bl.Field("Skill", "acme.echo")
	bl.Field("Reason", "cli test")
	bl.Field("Empty", "")
	bl.Field("Publisher id", "acme")
	tb := NewTable(Column{Header: "tool"}, Column{Header: "description"}, Column{Header: "approval"})
	tb.Row("echo", "Echo the input back", "no")
	bl.Section("Tools", tb.String(false))
	bl.Section("Held back", "")
	bl.Field("After", "x")
	got := bl.String()
	want := "Skill:         acme.echo\n" +
		"Reason:        cli test\n" +
		"Empty:         \"\"\n" +
		"Publisher id:  acme\n" +
		"Tools:\n" +
		"  TOOL  DESCRIPTION            APPROVAL\n" +
		"  echo  \"Echo the input back\"  no\n" +
		"Held back: none\n" +
		"After:  x\n"
	if got != want {
		t.Errorf("block:\n%s\nwant:\n%s", got, want)
	}
}

// TestWriteValue: json and yaml carry the same fields, named by the json
// tags, and HTML characters are not escaped.
func TestWriteValue(t *testing.T) {
	type rec struct {
		SkillID string   `json:"skill_id"`
		Tools   []string `json:"tools"`
		Note    string   `json:"note,omitempty"`
		Link    string   `json:"link"`
	}
	v := rec{SkillID: "acme.echo", Tools: []string{"echo", "upper"}, Link: "a<b>&c"}
	var j strings.Builder
	if err := WriteValue(&j, JSON, v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), "\n  \"skill_id\": \"acme.echo\"") || !strings.Contains(j.String(), "a<b>&c") {
		t.Errorf("json not indented or HTML-escaped:\n%s", j.String())
	}
	var y strings.Builder
	if err := WriteValue(&y, YAML, v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(y.String(), "skill_id: acme.echo\n") || strings.Contains(y.String(), "SkillID") || strings.Contains(y.String(), "note") {
		t.Errorf("yaml does not use the json names:\n%s", y.String())
	}
	var fromJSON, fromYAML map[string]any
	if err := json.Unmarshal([]byte(j.String()), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(y.String()), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, fromJSON), mustJSON(t, fromYAML); a != b {
		t.Errorf("json and yaml differ:\n%s\n%s", a, b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
