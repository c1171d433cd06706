package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/proctest"
)

// devEnv prepares a dev run test: the sidecar, a short TMPDIR for the
// sockets, a state dir, and a profile file that allows inline modules.
func devEnv(t *testing.T) (bin, state, profile string) {
	t.Helper()
	bin = sidecarBinary(t)
	state = t.TempDir()
	profile = filepath.Join(t.TempDir(), "dev-policy.toml")
	if err := os.WriteFile(profile, []byte("[dev]\nallow_inline = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "pd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	t.Setenv(sidecarEnv, "")
	return bin, state, profile
}

// testModule copies testdata/wasm/<name>.wasm to path.
func testModule(t *testing.T, name, path string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// devSkillTOML is a project's skill.toml: tool acme.dev.t takes {"text":
// string} only.
const devSkillTOML = `manifest_version = 2
skill_id = "acme.dev"
name = "Dev"
version = "0.1.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.dev.t"
name = "t"
description = "test tool"
input_schema = { type = "object", required = ["text"], additionalProperties = false, properties = { text = { type = "string" } } }
output_schema = {}

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// echoInput is the input the echo module got (it copies its whole input
// document to its output).
func echoInput(t *testing.T, out []byte) string {
	t.Helper()
	var doc struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("echo output %q: %v", out, err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, doc.Input); err != nil {
		t.Fatalf("echo input %q: %v", doc.Input, err)
	}
	return buf.String()
}

func TestDevRun(t *testing.T) {
	bin, state, profile := devEnv(t)
	dir := t.TempDir()
	mod := filepath.Join(dir, "echo.wasm")
	testModule(t, "echo", mod)
	proj := filepath.Join(dir, "proj")
	os.Mkdir(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "skill.toml"), []byte(devSkillTOML), 0o644)
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "skill.toml"), []byte(devSkillTOML), 0o644)

	t.Run("refused without allow_inline", func(t *testing.T) {
		r := cli(t, state, "", "dev", "run", "--json", mod, "dev.t", "--sidecar", bin)
		if r.code == 0 || r.errorCode(t) != "inline_not_allowed" || !strings.Contains(r.stdout, "allow_inline = true") {
			t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("module with the default manifest", func(t *testing.T) {
		r := cli(t, state, "", "dev", "run", mod, "dev.t", "--input", `{"n":1}`, "--profile", profile, "--sidecar", bin)
		if r.code != 0 || echoInput(t, []byte(r.stdout)) != `{"n":1}` {
			t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
		}
		// Nothing was installed.
		var l struct{ Count int }
		cli(t, state, "", "skills", "list", "--json").decode(t, &l)
		if l.Count != 0 {
			t.Fatalf("dev run installed something: %+v", l)
		}
	})
	t.Run("project with its skill.toml, json", func(t *testing.T) {
		testModule(t, "echo", filepath.Join(proj, "dev.wasm"))
		var rep devRunReport
		cli(t, state, "", "dev", "run", "--json", proj, "acme.dev.t", "--input", `{"text":"hi"}`, "--profile", profile, "--sidecar", bin).decode(t, &rep)
		if echoInput(t, rep.Output) != `{"text":"hi"}` || rep.SkillID != "dev:acme.dev" || !strings.HasPrefix(rep.Version, "inline-") || rep.Module != filepath.Join(proj, "dev.wasm") {
			t.Fatalf("report %+v", rep)
		}
	})
	tests := []struct {
		name string
		args []string
		code string
	}{
		{"schema applies", []string{proj, "acme.dev.t", "--input", `{"text":1}`}, "invalid_input"},
		{"unknown tool", []string{proj, "acme.dev.nope"}, "unknown_tool"},
		{"tool id without publisher", []string{mod, "t"}, "bad_request"},
		{"project not built", []string{empty, "acme.dev.t", "--input", `{"text":"x"}`}, "io_error"},
		{"not a module", []string{filepath.Join(proj, "skill.toml"), "acme.dev.t"}, "usage"},
		{"no such path", []string{filepath.Join(dir, "nope.wasm"), "dev.t"}, "io_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, state, "", append([]string{"dev", "run", "--json", "--profile", profile, "--sidecar", bin}, tt.args...)...)
			if r.code == 0 || r.errorCode(t) != tt.code {
				t.Fatalf("exit %d, want code %s: %s %s", r.code, tt.code, r.stdout, r.stderr)
			}
			if tt.code == "io_error" && tt.args[0] == empty && !strings.Contains(r.stdout, "--watch") {
				t.Fatalf("the error does not say how to build: %s", r.stdout)
			}
		})
	}
	t.Run("wat", func(t *testing.T) {
		wat := filepath.Join(dir, "echo.wat")
		src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wat"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(wat, src, 0o644)
		os.Remove(mod)
		r := cli(t, state, "", "dev", "run", "--json", wat, "dev.t", "--input", "3", "--profile", profile, "--sidecar", bin)
		if _, err := exec.LookPath("wat2wasm"); err != nil {
			if r.code == 0 || r.errorCode(t) != "dev_build_failed" || !strings.Contains(r.stdout, "wat2wasm") {
				t.Fatalf("without wat2wasm: exit %d: %s %s", r.code, r.stdout, r.stderr)
			}
			return
		}
		var rep devRunReport
		r.decode(t, &rep)
		if echoInput(t, rep.Output) != "3" {
			t.Fatalf("report %+v", rep)
		}
	})
}

// watchRun runs palyra dev run --watch with args until the test stops it
// (stop cancels its context, as Ctrl-C does, and returns its exit code).
func watchRun(t *testing.T, state string, args ...string) (out, errb *proctest.Buffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errb = &proctest.Buffer{}, &proctest.Buffer{}
	done := make(chan int, 1)
	full := append([]string{"--state-dir", state, "dev", "run", "--watch", "--interval", "20ms"}, args...)
	go func() { done <- run(ctx, full, strings.NewReader(""), out, errb) }()
	stopped := false
	var code int
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			code = <-done
		}
		return code
	}
	t.Cleanup(func() { stop() })
	return out, errb, stop
}

// waitFor waits until cond holds, failing the test after a minute (a
// bound on a hang, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool, errb *proctest.Buffer) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; stderr:\n%s", what, errb)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDevRunWatch changes a project's module while dev run --watch runs:
// the new module runs, then Ctrl-C ends the watch with exit 0.
func TestDevRunWatch(t *testing.T) {
	bin, state, profile := devEnv(t)
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "skill.toml"), []byte(devSkillTOML), 0o644)
	mod := filepath.Join(proj, "dev.wasm")
	testModule(t, "echo", mod)
	out, errb, stop := watchRun(t, state, proj, "acme.dev.t", "--input", `{"text":"w"}`, "--profile", profile, "--sidecar", bin)
	waitFor(t, "the first run", func() bool { return strings.Contains(out.String(), `"input":{"text":"w"}`) }, errb)
	if strings.Contains(out.String(), "not_granted") {
		t.Fatalf("the first run ran the second module: %s", out)
	}
	// Another module: its storage call is not granted by the manifest.
	testModule(t, "capability", mod)
	// A later mtime, should the file system's clock be coarse.
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(mod, later, later)
	waitFor(t, "the run of the changed module", func() bool { return strings.Contains(out.String(), "not_granted") }, errb)
	if code := stop(); code != 0 {
		t.Fatalf("the watch ended with exit %d on Ctrl-C; stderr:\n%s", code, errb)
	}
	if !strings.Contains(errb.String(), "change in "+proj) {
		t.Fatalf("stderr does not report the change:\n%s", errb)
	}
}

// TestDevRunWatchGo watches a Go project: dev run builds it with GOOS=wasip1
// GOARCH=wasm, runs it, and builds and runs it again when main.go changes;
// a broken edit is reported and the watch goes on.
func TestDevRunWatchGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go module for wasip1")
	}
	bin, state, profile := devEnv(t)
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "skill.toml"), []byte(strings.Replace(devSkillTOML, "input_schema = { type = \"object\", required = [\"text\"], additionalProperties = false, properties = { text = { type = \"string\" } } }", "input_schema = {}", 1)), 0o644)
	os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module example.com/dev\n\ngo 1.24\n"), 0o644)
	src := func(answer string) []byte {
		return []byte(`package main

import "unsafe"

//go:wasmimport palyra:skills/host@1 output-write
func outputWrite(ptr unsafe.Pointer, n uint32) int32

//go:wasmexport palyra_plugin_main
func run() int32 {
	b := []byte(` + "`" + `{"answer":"` + answer + `"}` + "`" + `)
	outputWrite(unsafe.Pointer(&b[0]), uint32(len(b)))
	return 0
}

func main() {}
`)
	}
	main := filepath.Join(proj, "main.go")
	os.WriteFile(main, src("first"), 0o644)
	out, errb, stop := watchRun(t, state, proj, "acme.dev.t", "--profile", profile, "--sidecar", bin)
	waitFor(t, "the first build and run", func() bool { return strings.Contains(out.String(), `{"answer":"first"}`) }, errb)
	if !fileExists(filepath.Join(proj, "dev.wasm")) {
		t.Fatalf("the build wrote no dev.wasm (the last part of the skill id)")
	}
	os.WriteFile(main, []byte("package main\n\nthis does not compile\n"), 0o644)
	waitFor(t, "the failed build's report", func() bool { return strings.Contains(errb.String(), "dev_build_failed") }, errb)
	os.WriteFile(main, src("second"), 0o644)
	waitFor(t, "the rebuild and rerun", func() bool { return strings.Contains(out.String(), `{"answer":"second"}`) }, errb)
	if code := stop(); code != 0 {
		t.Fatalf("the watch ended with exit %d on Ctrl-C; stderr:\n%s", code, errb)
	}
}
