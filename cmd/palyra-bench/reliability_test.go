package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bytecodealliance/wasmtime-go/v25"
)

// TestRelRowCheck: a case that held counts in Held, one that did not is
// named in Failures (the first 8 only); an unavailable row holds.
func TestRelRowCheck(t *testing.T) {
	var r relRow
	r.check(true, "fine")
	for i := range 10 {
		r.check(false, "case %d", i)
	}
	if r.Tried != 11 || r.Held != 1 || r.holds() {
		t.Errorf("row %+v: tried 11, held 1, not holding expected", r)
	}
	if len(r.Failures) != 8 || r.Failures[0] != "case 0" {
		t.Errorf("failures %q", r.Failures)
	}
	if !(relRow{Unavailable: true}).holds() || !(relRow{Tried: 2, Held: 2}).holds() {
		t.Error("an unavailable or all-held row must hold")
	}
}

func TestCounts(t *testing.T) {
	for _, c := range []struct {
		in   map[string]int
		want string
	}{
		{nil, "none"},
		{map[string]int{"b": 1, "a": 1, "c": 5}, "c×5, a×1, b×1"},
	} {
		if got := counts(c.in); got != c.want {
			t.Errorf("counts(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRelReportRender: the Markdown marks held, failed and unavailable
// rows, escapes cells and names the failures; the JSON reads back.
func TestRelReportRender(t *testing.T) {
	rep := &relReport{Command: "go run ./cmd/palyra-bench --reliability", Rows: []relRow{
		{Scenario: "R1", Title: "kills", Tried: 2, Held: 2, Figures: []string{"a|b"}},
		{Scenario: "R2", Title: "daemon", Tried: 3, Held: 2, Failures: []string{"left 16 entries"}},
		{Scenario: "R8", Title: "probes", Unavailable: true, Figures: []string{"not available in this build"}},
	}}
	var md bytes.Buffer
	if err := rep.markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| R1 | kills | 2 | 2 | a\\|b | ✓ |",
		"| R2 | daemon | 3 | 2 | did not hold: left 16 entries | ✗ |",
		"| R8 | probes | — | — | not available in this build | — |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md.String())
		}
	}
	var js bytes.Buffer
	if err := rep.json(&js); err != nil {
		t.Fatal(err)
	}
	var back relReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Rows) != 3 || !back.Rows[2].Unavailable {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
}

// TestCraftedModules: the modules R3 writes by hand are valid wasm, so
// their refusals are about what they hold, not about a broken encoding.
func TestCraftedModules(t *testing.T) {
	echo, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	engine := wasmtime.NewEngine()
	for name, m := range map[string][]byte{
		"compile bomb (10 functions)": compileBomb(10),
		"custom section":              withCustomSection(echo, 1000),
		"foreign import":              foreignImportModule,
	} {
		if err := wasmtime.ModuleValidate(engine, m); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestWriteZipKeepsHostileNames: crafted entries reach the archive as
// written (archive/zip neither cleans nor refuses them).
func TestWriteZipKeepsHostileNames(t *testing.T) {
	b, err := writeZip([]zipEntry{
		{name: "../../evil.txt", data: []byte("x")},
		{name: "skill.toml", data: []byte("a")},
		{name: "skill.toml", data: []byte("b")},
	})
	if err != nil {
		t.Fatal(err)
	}
	es, err := readZip(b)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.name)
	}
	if !slices.Equal(names, []string{"../../evil.txt", "skill.toml", "skill.toml"}) {
		t.Errorf("names %q", names)
	}
}

// TestProcessAlive: this process is alive; an exited, reaped child is
// not.
func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	if processAlive(cmd.Process.Pid) {
		t.Errorf("reaped child %d is alive", cmd.Process.Pid)
	}
}

// TestLeftovers: everything under tmp counts, and in the state dir only
// sockets and what is under a run-like directory.
func TestLeftovers(t *testing.T) {
	root := t.TempDir()
	tmp, state := filepath.Join(root, "t"), filepath.Join(root, "s")
	for _, d := range []string{filepath.Join(tmp, "sc-1"), filepath.Join(state, "run", "x"), filepath.Join(state, "skills")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(state, "skills", "keep.toml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sockPath := filepath.Join(state, "skills", "s.sock")
	ln, err := net.Listen("unix", sockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got, err := leftovers(tmp, state)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(tmp, "sc-1"), filepath.Join(state, "run", "x"), sockPath}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("leftovers = %q, want %q", got, want)
	}
}

// TestReliabilityQuick runs the whole suite in quick mode against the real
// binaries and checks the report's shape: every scenario has its rows,
// every row tried cases (R8 excepted), held ≤ tried, and the exit error
// is errNotHeld exactly when a row did not hold. It also requires the
// scenarios the project already holds on (R4, R6, R7 and R1's other-skill
// failures) to hold.
func TestReliabilityQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs every scenario (about two minutes)")
	}
	o, err := parseFlags([]string{"--reliability", "--quick", "--json"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out, progress bytes.Buffer
	runErr := run(ctx, o, &out, &progress)
	if runErr != nil && !errors.Is(runErr, errNotHeld) {
		t.Fatalf("run: %v\n%s", runErr, progress.String())
	}
	var rep relReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out.String())
	}
	seen := map[string]bool{}
	for _, r := range rep.Rows {
		seen[r.Scenario] = true
		if r.Unavailable {
			continue
		}
		if r.Tried == 0 || r.Held > r.Tried || len(r.Figures) == 0 {
			t.Errorf("row %s %q: tried %d, held %d, figures %q", r.Scenario, r.Title, r.Tried, r.Held, r.Figures)
		}
		switch r.Scenario {
		case "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8":
			if !r.holds() {
				t.Errorf("%s %q did not hold: %q", r.Scenario, r.Title, r.Failures)
			}
		}
	}
	for _, s := range relScenarios {
		if !seen[s.id] {
			t.Errorf("no row for %s", s.id)
		}
	}
	if (runErr == nil) != rep.AllHeld {
		t.Errorf("run error %v with all_held %v", runErr, rep.AllHeld)
	}
	t.Logf("report:\n%s", out.String())
}
