package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/cmd/palyra/internal/scaffold"
)

// goTool runs the go command of this test run (go test puts its GOROOT/bin
// first in PATH) in dir with extra environment, and fails t when it fails.
func goTool(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// TestSkillsNewEndToEnd makes a Go and a WAT project with skills new, builds
// each module as its README says, packages, installs and runs the tool, and
// checks the word counts: the scaffold works unchanged.
func TestSkillsNewEndToEnd(t *testing.T) {
	bin := sidecarBinary(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	state, work := t.TempDir(), t.TempDir()
	// Sockets in a short dir (Unix socket paths are limited to 108 bytes).
	tmp, err := os.MkdirTemp("", "pn")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)
	t.Setenv(sidecarEnv, "")

	keyFile := filepath.Join(work, "acme.key")
	var key keyReport
	cli(t, state, "", "keys", "generate", "--json", "--out", keyFile).decode(t, &key)

	tests := []struct {
		lang, id string
		build    func(t *testing.T, dir string)
	}{
		{scaffold.LangGo, "acme.wordcount", func(t *testing.T, dir string) {
			// The project's own test first: plain go test, natively.
			if out := goTool(t, dir, []string{"GOWORK=off"}, "test", "-count=1", "-v", "./..."); !strings.Contains(out, "--- PASS: TestCount") {
				t.Fatalf("go test ran no TestCount:\n%s", out)
			}
			goTool(t, dir, []string{"GOWORK=off", "GOOS=wasip1", "GOARCH=wasm"}, "build", "-trimpath", "-buildmode=c-shared", "-o", "wordcount.wasm", ".")
		}},
		{scaffold.LangWAT, "acme.text.wordcount", func(t *testing.T, dir string) {
			// WABT is not needed: the Makefile's fallback, the checkout's
			// own converter, turns module.wat into module.wasm.
			goTool(t, root, nil, "run", "./sidecar/internal/tools/wat2wasm", dir)
			// WABT's wat2wasm, the README's command, must take the same
			// text where it is installed.
			if wabt, err := exec.LookPath("wat2wasm"); err == nil {
				out, err := exec.CommandContext(t.Context(), wabt, filepath.Join(dir, "module.wat"), "-o", filepath.Join(t.TempDir(), "m.wasm")).CombinedOutput()
				if err != nil {
					t.Errorf("WABT wat2wasm: %v\n%s", err, out)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			dir := filepath.Join(work, tt.lang)
			var res scaffold.Result
			cli(t, state, "", "skills", "new", tt.id, "--lang", tt.lang, "--dir", dir, "--json").decode(t, &res)
			if res.Dir != dir || res.ToolID != tt.id+".count" {
				t.Fatalf("skills new: %+v", res)
			}
			if r := cli(t, state, "", "skills", "new", tt.id, "--lang", tt.lang, "--dir", dir, "--json"); r.errorCode(t) != "dir_not_empty" {
				t.Errorf("a second skills new into %s: %s", dir, r.stdout)
			}
			tt.build(t, dir)

			art := filepath.Join(work, tt.id+".palyra-skill")
			var built buildReport
			cli(t, state, "", "skills", "package", "build", "--json",
				"--dir", dir,
				"--signing-key", keyFile, "--output", art).decode(t, &built)
			if built.SkillID != tt.id || built.Publisher != "acme" || built.Version != "0.1.0" {
				t.Fatalf("package build: %+v", built)
			}
			// With the sidecar at hand the install compiles the module (under
			// the precompile budget), so the first call does not compile it
			// under the sidecar's start timeout on a loaded machine.
			t.Setenv(sidecarEnv, bin)
			if r := cli(t, state, "", "skills", "install", "--json", "--artifact", art, "--trusted-publisher", "acme="+key.PublicKeyHex); r.code != 0 {
				t.Fatalf("install: %s %s", r.stdout, r.stderr)
			}
			for _, c := range []struct {
				text  string
				words int
			}{
				{"hello palyra world", 3},
				{"", 0},
				{"  leading and trailing  ", 3},
				{"tabs\tand\nnew lines\r\nand \"quotes\" and \\ backslashes", 9},
			} {
				in, _ := json.Marshal(map[string]string{"text": c.text})
				var rep runReport
				cli(t, state, "", "skills", "run", "--json", "--sidecar", bin, tt.id, res.ToolID, "--input", string(in)).decode(t, &rep)
				var out struct {
					Words *int `json:"words"`
				}
				if err := json.Unmarshal(rep.Output, &out); err != nil || out.Words == nil || *out.Words != c.words {
					t.Errorf("%q: output %s (%v), want %d words", c.text, rep.Output, err, c.words)
				}
			}
			// The input schema is the manifest's: text is required.
			r := cli(t, state, "", "skills", "run", "--json", "--sidecar", bin, tt.id, res.ToolID, "--input", `{"txt":"x"}`)
			if got := r.errorCode(t); got != "invalid_input" {
				t.Errorf("input without text: code %q: %s", got, r.stdout)
			}
		})
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
}

func TestSkillsNewRefuses(t *testing.T) {
	state := t.TempDir()
	tests := []struct {
		name string
		args []string
		code string
	}{
		{"bad id", []string{"Acme.Word"}, "invalid_skill_id"},
		{"no publisher", []string{"wordcount"}, "invalid_skill_id"},
		{"unknown lang", []string{"acme.wc", "--lang", "rust"}, "unknown_lang"},
		{"sdk not a checkout", []string{"acme.wc", "--sdk", t.TempDir()}, "sdk_not_found"},
		{"no id", []string{}, "usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			args := append([]string{"skills", "new", "--json", "--dir", dir}, tt.args...)
			r := cli(t, state, "", args...)
			if got := r.errorCode(t); got != tt.code {
				t.Errorf("code %q, want %q: %s", got, tt.code, r.stdout)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a refused skills new left %s (%v)", dir, err)
			}
		})
	}
}
