package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// checkGolden compares got with testdata/name, or rewrites that file when
// the -update flag is set.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("update golden file: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test -update and review the diff.\ngot:\n%s", name, got)
	}
}

func TestGoldenFiles(t *testing.T) {
	tests := []struct {
		golden string
		render func(r *Report, w io.Writer) error
	}{
		{"report.md.golden", (*Report).Markdown},
		{"report.json.golden", (*Report).JSON},
		{"ratios.svg.golden", (*Report).SVG},
		{"empty.md.golden", nil},
		{"empty.svg.golden", nil},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			r, render := fixture(), tt.render
			if render == nil { // a report with no rows at all
				r.Rows, r.Notes = nil, nil
				render = (*Report).Markdown
				if strings.HasSuffix(tt.golden, ".svg.golden") {
					render = (*Report).SVG
				}
			}
			var first, second bytes.Buffer
			if err := render(r, &first); err != nil {
				t.Fatalf("render: %v", err)
			}
			if err := render(r, &second); err != nil {
				t.Fatalf("render again: %v", err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Fatal("two renders of one report differ")
			}
			checkGolden(t, tt.golden, first.Bytes())
		})
	}
}

func TestMarkdownContent(t *testing.T) {
	var buf bytes.Buffer
	if err := fixture().Markdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"| A | Go-guest tool call vs in-process wasmtime-go | palyra: 41.2 µs / 77.9 µs | wasmtime-go: 98.1 µs / 130 µs | 0.42× | ≤ 0.6 × in-process wasmtime | ✓ |",
		"| B | Cold start vs wazero | palyra: 12,500 µs / 14,100 µs | wazero: 9,800 µs / 11,021 µs | 1.28× | ≤ 1.1× | ✗ |",
		"| D | Host calls per second | palyra: 5,210 calls/s | — | — | ≥ 4,000 calls/s | ✓ |",
		"| F | Extism plug-in call | palyra: 40 µs / 60 µs | — | — | ≤ 1× | — |",
		`Skill \<b>&"pipe\|'`,
		"- github.com/bytecodealliance/wasmtime-go/v25 v25.0.0",
		"- Command: `go run ./cmd/palyra-bench --quick --out /tmp/bench`",
		"- Duration: 1m23.3s",
		`- F: Extism peer failed: plug-in "echo" did not load`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// Every table line has the 7 columns: 8 unescaped pipes.
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		if n := strings.Count(line, "|") - strings.Count(line, `\|`); n != 8 {
			t.Errorf("table line has %d unescaped pipes, want 8: %s", n, line)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	orig := fixture()
	var buf bytes.Buffer
	if err := orig.JSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"op": "<="`)) {
		t.Error(`JSON lacks "op": "<=" (HTML escaping must be off)`)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if !reflect.DeepEqual(&back, orig) {
		t.Errorf("round trip changed the report:\ngot  %+v\nwant %+v", back, *orig)
	}

	// The computed fields are present: duration in seconds and goal_met
	// per row (true, false or null).
	var raw struct {
		DurationSeconds float64 `json:"duration_seconds"`
		Rows            []map[string]json.RawMessage
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.DurationSeconds != 83.25 {
		t.Errorf("duration_seconds = %v, want 83.25", raw.DurationSeconds)
	}
	wantMet := []string{"true", "false", "null", "true", "true", "false", "null", "null"}
	if len(raw.Rows) != len(wantMet) {
		t.Fatalf("%d rows, want %d", len(raw.Rows), len(wantMet))
	}
	for i, row := range raw.Rows {
		if got := string(row["goal_met"]); got != wantMet[i] {
			t.Errorf("row %d goal_met = %s, want %s", i, got, wantMet[i])
		}
	}
}

func TestJSONRecomputesStaleRatio(t *testing.T) {
	r := &Report{Rows: []Row{{Scenario: "A", Ours: Measurement{Median: 1}, Peer: &Measurement{Median: 4}, Ratio: 7}}}
	var buf bytes.Buffer
	if err := r.JSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Rows[0].Ratio; got != 0.25 {
		t.Errorf("ratio = %v, want 0.25 recomputed from the medians", got)
	}
	if r.Rows[0].Ratio != 7 {
		t.Error("JSON modified the report it rendered")
	}
}

func TestUnmarshalRejectsBadDuration(t *testing.T) {
	for _, in := range []string{`{"duration_seconds": 1e300}`, `{"rows": 5}`} {
		var r Report
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("Unmarshal(%s) succeeded, want an error", in)
		}
	}
}

func TestSVGIsWellFormedAndEscaped(t *testing.T) {
	var buf bytes.Buffer
	if err := fixture().SVG(&buf); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	var (
		root    *xml.StartElement
		title   string
		texts   []string
		rects   int
		inTitle bool
		inText  bool
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == nil {
				e := tok.Copy()
				root = &e
			}
			switch tok.Name.Local {
			case "title":
				inTitle = true
			case "text":
				inText = true
				texts = append(texts, "")
			case "rect":
				rects++
			}
		case xml.EndElement:
			switch tok.Name.Local {
			case "title":
				inTitle = false
			case "text":
				inText = false
			}
		case xml.CharData:
			if inTitle && title == "" {
				title = string(tok)
			}
			if inText {
				texts[len(texts)-1] += string(tok)
			}
		}
	}
	if root == nil || root.Name.Local != "svg" || root.Name.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element = %+v, want svg in the SVG namespace", root)
	}
	attrs := map[string]string{}
	for _, a := range root.Attr {
		attrs[a.Name.Local] = a.Value
	}
	if attrs["version"] != "1.1" || attrs["viewBox"] == "" {
		t.Errorf("root attributes %v lack version 1.1 or viewBox", attrs)
	}
	if !strings.Contains(title, "ratio ours/peer") {
		t.Errorf("first <title> = %q", title)
	}
	// One background rect plus one bar per row with a peer and a ratio.
	if rects != 1+4 {
		t.Errorf("%d rects, want 5", rects)
	}
	for _, want := range []string{
		"A: Go-guest tool call vs in-process wasmtime-go",
		"0.42×", "1.28×", "312×", "0.5×",
		`C: Skill <b>&"pipe|' (goal ≤ 3 ms ✓)`, // escaped on output, intact once parsed
		"D: Host calls per second — palyra: 5,210 calls/s (goal ≥ 4,000 calls/s) ✓",
		"E: Resident memory with 10 skills — 212 MiB (goal ≤ 200 MiB) ✗",
		"E: Sidecar binary size — 31.4 MiB",
		"F: Extism plug-in call — palyra: 40 µs / 60 µs (goal ≤ 1×) —",
	} {
		if !slices.Contains(texts, want) {
			t.Errorf("SVG has no text %q; texts: %q", want, texts)
		}
	}
	if bytes.Contains(buf.Bytes(), []byte(`<b>`)) {
		t.Error("raw <b> from a title reached the SVG unescaped")
	}
}
