package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// fixture is the tiny module under testdata/mod; its files say what each
// one contributes.
const fixture = "testdata/mod"

// TestCount checks every inclusion rule on the fixture: exported funcs,
// types, vars, consts and methods of exported types count; methods of
// unexported types, test files, *.pb.go, package main, internal/, cmd/,
// testdata/, node_modules/, "_" and "." directories and nested modules do
// not; a name declared under two build constraints counts once; a package
// with no counted file is not listed, one with no exported name is.
func TestCount(t *testing.T) {
	got, err := count(fixture)
	if err != nil {
		t.Fatal(err)
	}
	want := []pkgCount{
		{Path: "example.com/fixture", Names: 10},
		{Path: "example.com/fixture/alpha", Names: 2},
		{Path: "example.com/fixture/beta", Names: 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("count(%s) =\n %+v\nwant\n %+v", fixture, got, want)
	}
}

// TestExportedNames pins the names themselves, so a rule that counts one
// name too many and misses another cannot pass TestCount by accident.
func TestExportedNames(t *testing.T) {
	names := map[string]bool{}
	for _, f := range []string{"root.go", "tag_linux.go", "tag_other.go"} {
		parseInto(t, filepath.Join(fixture, f), names)
	}
	want := map[string]bool{
		"Exported": true, "Counter": true, "Counter.Inc": true, "Pair": true, "Pair.Key": true,
		"First": true, "Third": true, "Red": true, "Blue": true, "Tagged": true,
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v\nwant %v", keys(names), keys(want))
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderrIn string // a substring of stderr
	}{
		{"total", []string{fixture}, exitOK, "total 12 exported names in 3 public packages\n", ""},
		{"verbose", []string{"-v", fixture}, exitOK,
			"10\texample.com/fixture\n2\texample.com/fixture/alpha\n0\texample.com/fixture/beta\n" +
				"total 12 exported names in 3 public packages\n", ""},
		{"missing dir", []string{filepath.Join(t.TempDir(), "nope")}, exitError, "", "exportcount: "},
		{"two dirs", []string{fixture, fixture}, exitUsage, "", "usage: exportcount [-v] [dir]"},
		{"unknown flag", []string{"-x"}, exitUsage, "", "flag provided but not defined: -x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tt.args, &out, &errb)
			if code != tt.code || out.String() != tt.stdout || !strings.Contains(errb.String(), tt.stderrIn) {
				t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d, %q, stderr containing %q",
					tt.args, code, out.String(), errb.String(), tt.code, tt.stdout, tt.stderrIn)
			}
		})
	}
}

// TestRunErrors: a file that does not parse, and a go.mod without a module
// line, fail the count (exit 1) and name the file, rather than count less.
func TestRunErrors(t *testing.T) {
	tests := []struct {
		name, file, content, gomod string
	}{
		{"syntax error", "bad.go", "package bad\n\nfunc {\n", "module example.com/bad\n"},
		{"no module line", "ok.go", "package ok\n", "go 1.24\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "go.mod"), tt.gomod)
			write(t, filepath.Join(dir, "p", tt.file), tt.content)
			var out, errb bytes.Buffer
			if code := run([]string{dir}, &out, &errb); code != exitError || out.Len() != 0 {
				t.Fatalf("run = %d, stdout %q; want %d and no output", code, out.String(), exitError)
			}
			named := filepath.Join(dir, "p", tt.file)
			if tt.gomod == "go 1.24\n" {
				named = filepath.Join(dir, "go.mod")
			}
			if !strings.Contains(errb.String(), named) {
				t.Errorf("stderr %q does not name %s", errb.String(), named)
			}
		})
	}
}

// TestNoGoMod names packages by directory when there is no go.mod.
func TestNoGoMod(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a", "a.go"), "package a\n\nfunc A() {}\n")
	write(t, filepath.Join(dir, "b.go"), "package b\n\nvar B, C int\n")
	got, err := count(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []pkgCount{{Path: ".", Names: 2}, {Path: "a", Names: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("count = %+v, want %+v", got, want)
	}
}

func parseInto(t *testing.T, file string, into map[string]bool) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	exported(f, into)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
