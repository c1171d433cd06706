package skill_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOutsideModule follows the package doc's "Using the SDK from your own
// module" in a temporary module outside the repository: go mod init, go mod
// edit -require/-replace to this checkout, a handler file with no build
// constraint and a skilltest test beside it. Plain go test must run that
// test and pass, and the same package must build as a wasip1 module.
func TestOutsideModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	dir := t.TempDir()
	// GOWORK=off: the module stands alone, as a skill author's does; the
	// proxy settings are the environment's.
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	gocmd := func(extra []string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(append([]string(nil), env...), extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd(nil, "mod", "init", "example.com/acme/shout")
	gocmd(nil, "mod", "edit", "-require=github.com/palyra-go/palyra@v0.0.0-00010101000000-000000000000",
		"-replace=github.com/palyra-go/palyra="+root)
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.go", `package main

import (
	"strings"

	"github.com/palyra-go/palyra/sdk/go/skill"
)

type In struct {
	Text string `+"`json:\"text\"`"+`
}

type Out struct {
	Text string `+"`json:\"text\"`"+`
}

func init() {
	skill.Handle("acme.shout", func(_ *skill.Context, in In) (Out, error) {
		if in.Text == "" {
			return Out{}, skill.NewError("empty_text", "text is empty")
		}
		return Out{Text: strings.ToUpper(in.Text) + "!"}, nil
	})
}

func main() {}
`)
	write("main_test.go", `package main

import (
	"testing"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

func TestShout(t *testing.T) {
	res := skilltest.Run(skill.DefaultMux, skilltest.Call{ToolID: "acme.shout", Input: In{Text: "hi"}})
	if res.Status != 0 || string(res.Output) != `+"`"+`{"text":"HI!"}`+"`"+` {
		t.Fatalf("status %d: %s", res.Status, res.Output)
	}
	res = skilltest.Run(skill.DefaultMux, skilltest.Call{ToolID: "acme.shout", Input: In{}})
	if res.ErrorCode() != "empty_text" {
		t.Fatalf("status %d: %s", res.Status, res.Output)
	}
}
`)
	if out := gocmd(nil, "test", "-count=1", "-v", "./..."); !strings.Contains(out, "--- PASS: TestShout") {
		t.Fatalf("go test did not run TestShout:\n%s", out)
	}
	gocmd([]string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-trimpath", "-buildmode=c-shared", "-o", "shout.wasm", ".")
	wasm, err := os.ReadFile(filepath.Join(dir, "shout.wasm"))
	if err != nil || !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		t.Fatalf("shout.wasm: %v (%d bytes)", err, len(wasm))
	}
	if !bytes.Contains(wasm, []byte("palyra_plugin_main")) {
		t.Error("shout.wasm does not export palyra_plugin_main")
	}
}
