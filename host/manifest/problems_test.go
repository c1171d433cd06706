package manifest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

// problemsBase is a valid manifest the cases below break in several places
// at once.
const problemsBase = `manifest_version = 2
skill_id = "acme.wordcount"
name = "Word count"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.count"
name = "count"
description = "Counts words."
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// wantProblem is one expected entry of Problems.List.
type wantProblem struct {
	path string
	line int // 0: no line (a key missing from the root table)
	err  error
}

// TestParseReportsEveryProblem: a manifest with several problems is
// refused with all of them in one error, each naming its field and line,
// parse problems first and each group in document order; the error still
// errors.Is the sentinels and errors.As its first *FieldError; a rule
// problem that only echoes a parse problem on the same field is not listed.
func TestParseReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []wantProblem
	}{
		{
			name: "rules only",
			doc: strings.NewReplacer(
				`skill_id = "acme.wordcount"`, `skill_id = "Acme Wordcount"`,
				`version = "1.0.0"`, `version = "1.0"`,
			).Replace(problemsBase) + `
[[entrypoints.tools]]
id = "acme.count"
name = "count2"
description = "Counts again."
input_schema = { type = "objekt" }
output_schema = { type = "object" }

[capabilities]
http_egress_allowlist = ["https://example.com/x"]

[capabilities.quotas]
fuel_budget = 0
`,
			want: []wantProblem{
				{"skill_id", 2, manifest.ErrValidation},
				{"version", 4, manifest.ErrValidation},
				{"entrypoints.tools[1].id", 19, manifest.ErrValidation},
				{"entrypoints.tools[1].input_schema", 22, manifest.ErrValidation},
				{"capabilities.http_egress_allowlist[0]", 26, manifest.ErrValidation},
				{"capabilities.quotas.fuel_budget", 29, manifest.ErrValidation},
			},
		},
		{
			name: "parse problems before rules",
			doc: strings.NewReplacer(
				`name = "Word count"`+"\n", "",
				`publisher = "acme"`, `publisher = "ACME"`+"\ncolour = \"red\"",
				`description = "Counts words."`, `description = 7`,
			).Replace(problemsBase),
			want: []wantProblem{
				{"colour", 5, manifest.ErrParse},
				{"entrypoints.tools[0].description", 10, manifest.ErrParse},
				{"name", 0, manifest.ErrParse},
				{"publisher", 4, manifest.ErrValidation},
			},
		},
		{
			name: "first round of a new author",
			doc:  `skill_id = "acme.wordcount"` + "\n",
			want: []wantProblem{
				{"name", 0, manifest.ErrParse},
				{"version", 0, manifest.ErrParse},
				{"publisher", 0, manifest.ErrParse},
				{"entrypoints", 0, manifest.ErrParse},
				{"compat", 0, manifest.ErrParse},
			},
		},
		{
			name: "a missing schema is not also a broken rule",
			doc: strings.NewReplacer(
				"output_schema = { type = \"object\" }\n", "",
				`version = "1.0.0"`, `version = "1"`,
			).Replace(problemsBase),
			want: []wantProblem{
				{"entrypoints.tools[0].output_schema", 7, manifest.ErrParse},
				{"version", 4, manifest.ErrValidation},
			},
		},
		{
			name: "echoes dropped",
			// The wrong type leaves the tools unset, and the duplicate compat
			// key leaves min_palyra_version unset: the rules "at least one
			// tool" and "min_palyra_version must be a version" are echoes.
			doc: strings.NewReplacer(
				"[[entrypoints.tools]]", "[entrypoints]\ntools = 3\n[[unused]]",
				`min_palyra_version = "0.1.0"`, `min_palyra_version = "0.1.0"`+"\nmin_runtime_version = \"0.1.0\"",
			).Replace(problemsBase),
			want: []wantProblem{
				{"entrypoints.tools", 8, manifest.ErrParse},
				{"unused", 9, manifest.ErrParse},
				{"compat.min_runtime_version", 19, manifest.ErrParse},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Parse([]byte(tt.doc))
			if err == nil {
				t.Fatalf("Parse accepted it: %#v", m)
			}
			var p *manifest.Problems
			if !errors.As(err, &p) {
				t.Fatalf("error %v (%T) is not a *manifest.Problems", err, err)
			}
			var got []string
			for _, fe := range p.List {
				got = append(got, fmt.Sprintf("%s@%d:%s", fe.Path, fe.Line, errcode.Of(fe)))
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, fmt.Sprintf("%s@%d:%s", w.path, w.line, errcode.Of(w.err)))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("problems\n got: %v\nwant: %v\n(error: %v)", got, want, err)
			}
			if p.More != 0 {
				t.Errorf("More = %d, want 0", p.More)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w.err) {
					t.Errorf("error does not wrap %v", w.err)
				}
			}
			if fe := fieldError(t, err); fe != p.List[0] {
				t.Errorf("errors.As found %v, want the first problem %v", fe, p.List[0])
			}
			if got, want := errcode.Of(err), errcode.Of(tt.want[0].err); got != want {
				t.Errorf("errcode.Of = %q, want %q", got, want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, fmt.Sprintf("manifest: %d problems: ", len(tt.want))) {
				t.Errorf("message %q does not count the problems", msg)
			}
			for _, fe := range p.List {
				if !strings.Contains(msg, fe.Item()) {
					t.Errorf("message %q lacks %q", msg, fe.Item())
				}
			}
			raw, jerr := json.Marshal(p.Details())
			if jerr != nil {
				t.Fatal(jerr)
			}
			var d struct {
				Problems []manifest.ProblemDetail `json:"problems"`
			}
			if jerr := json.Unmarshal(raw, &d); jerr != nil || len(d.Problems) != len(tt.want) {
				t.Fatalf("Details = %s (%v), want %d problems", raw, jerr, len(tt.want))
			}
			for i, w := range tt.want {
				if d.Problems[i].Path != w.path || d.Problems[i].Line != w.line || d.Problems[i].Code != errcode.Of(w.err) || d.Problems[i].Reason == "" {
					t.Errorf("Details problem %d = %+v, want path %s line %d", i, d.Problems[i], w.path, w.line)
				}
			}
		})
	}
}

// TestParseOneProblemIsAFieldError: with a single problem Parse returns the
// *FieldError itself, as before there were lists, so its message is
// unchanged.
func TestParseOneProblemIsAFieldError(t *testing.T) {
	_, err := manifest.Parse([]byte(strings.Replace(problemsBase, `version = "1.0.0"`, `version = "1.0"`, 1)))
	var fe *manifest.FieldError
	if !errors.As(err, &fe) || error(fe) != err {
		t.Fatalf("err = %v (%T), want a bare *manifest.FieldError", err, err)
	}
	if fe.Path != "version" || fe.Line != 4 {
		t.Errorf("problem at %s line %d, want version line 4", fe.Path, fe.Line)
	}
}

// TestParseProblemsBounded: a manifest with more problems than MaxProblems
// lists MaxProblems of them and counts the rest.
func TestParseProblemsBounded(t *testing.T) {
	const extra = 20
	var b strings.Builder
	b.WriteString(problemsBase)
	for i := 0; i < manifest.MaxProblems+extra-1; i++ {
		fmt.Fprintf(&b, "\n[[entrypoints.tools]]\nid = \"Bad Tool %d\"\nname = \"t\"\ndescription = \"d\"\ninput_schema = {}\noutput_schema = {}\n", i)
	}
	_, err := manifest.Parse([]byte(b.String()))
	var p *manifest.Problems
	if !errors.As(err, &p) {
		t.Fatalf("err = %v (%T), want *manifest.Problems", err, err)
	}
	if len(p.List) != manifest.MaxProblems || p.More != extra-1 {
		t.Fatalf("listed %d, more %d; want %d and %d", len(p.List), p.More, manifest.MaxProblems, extra-1)
	}
	if p.List[0].Path != "entrypoints.tools[1].id" {
		t.Errorf("first problem at %s, want entrypoints.tools[1].id", p.List[0].Path)
	}
	if !strings.HasSuffix(err.Error(), fmt.Sprintf("; and %d more", extra-1)) {
		t.Errorf("message does not end with the count of the rest: ...%s", err.Error()[len(err.Error())-40:])
	}
}
