package wasmbin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

// The Go toolchain's own wasip1 output is a differential check on the
// parser: a real, large module written by a compiler we did not write.
// Both programs are built once, into goBuildDir, which TestMain removes.

var goBuildDir string

const commandSrc = `package main

import "fmt"

func main() { fmt.Println("hello from wasip1") }
`

// reactorSrc is a guest shaped like a Palyra-Go skill: a c-shared
// (reactor) module importing from palyra:skills/host@1 and exporting
// palyra_plugin_main.
const reactorSrc = `package main

//go:wasmimport palyra:skills/host@1 input-len
func inputLen() int32

//go:wasmexport palyra_plugin_main
func pluginMain() int32 { return inputLen() }

func main() {}
`

type goWasm struct {
	once sync.Once
	path string
	err  error
	skip string
}

var goCommand, goReactor goWasm

// build compiles src for wasip1 once and returns the module bytes; it
// skips the test when no go binary is found and fails it when the build
// fails.
func (g *goWasm) build(tb testing.TB, name, src string, extra ...string) []byte {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds a Go program for wasip1; skipped in -short mode")
	}
	g.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			g.skip = "no go binary: " + err.Error()
			return
		}
		if goBuildDir == "" {
			if goBuildDir, err = os.MkdirTemp("", "wasmbin-gobuild-"); err != nil {
				g.err = err
				return
			}
		}
		dir := filepath.Join(goBuildDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			g.err = err
			return
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			g.err = err
			return
		}
		g.path = filepath.Join(dir, name+".wasm")
		args := append([]string{"build", "-trimpath", "-o", g.path}, extra...)
		cmd := exec.Command(goBin, append(args, "main.go")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GO111MODULE=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			g.err = err
			g.skip = ""
			g.path = string(out)
		}
	})
	if g.skip != "" {
		tb.Skip(g.skip)
	}
	if g.err != nil {
		tb.Fatalf("go build %s: %v\n%s", name, g.err, g.path)
	}
	data, err := os.ReadFile(g.path)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func TestGoWasip1Command(t *testing.T) {
	data := goCommand.build(t, "command", commandSrc)
	m := mustParse(t, data)

	wasi := 0
	for _, im := range m.Imports {
		if im.Module == "wasi_snapshot_preview1" && im.Kind == wasmbin.KindFunc {
			wasi++
		}
	}
	if wasi == 0 {
		t.Errorf("no function imports from wasi_snapshot_preview1 in %d imports", len(m.Imports))
	}
	if ft, ok := m.ExportedFunc("_start"); !ok || ft.String() != "() -> ()" {
		t.Errorf("_start: %s, %v", ft, ok)
	}
	mem, ok := m.ExportedMemory("memory")
	if !ok || mem.Is64 || mem.Shared {
		t.Errorf("memory: %+v, %v", mem, ok)
	}
	if len(m.Functions) < 1000 || m.CodeBodies != len(m.Functions) {
		t.Errorf("%d functions, %d bodies", len(m.Functions), m.CodeBodies)
	}
	if len(m.DataSegments) == 0 || m.DataBytes == 0 {
		t.Errorf("no data: %d segments, %d bytes", len(m.DataSegments), m.DataBytes)
	}
	t.Logf("%d bytes: %d types, %d imports, %d functions, %d exports, %d data segments (%d bytes), %d custom sections",
		len(data), len(m.Types), len(m.Imports), len(m.Functions), len(m.Exports), len(m.DataSegments), m.DataBytes, len(m.CustomSections))
}

func TestGoWasip1Reactor(t *testing.T) {
	data := goReactor.build(t, "reactor", reactorSrc, "-buildmode=c-shared")
	m := mustParse(t, data)

	var found bool
	for i, im := range m.ImportedFuncs() {
		if im.Module == "palyra:skills/host@1" && im.Name == "input-len" {
			found = true
			if ft, _ := m.FuncType(uint32(i)); ft.String() != "() -> (i32)" {
				t.Errorf("input-len has type %s", ft)
			}
		}
	}
	if !found {
		t.Errorf("no import palyra:skills/host@1 input-len in %+v", m.Imports)
	}
	if ft, ok := m.ExportedFunc("palyra_plugin_main"); !ok || ft.String() != "() -> (i32)" {
		t.Errorf("palyra_plugin_main: %s, %v", ft, ok)
	}
	if _, ok := m.ExportedFunc("_initialize"); !ok {
		t.Error("no _initialize export")
	}
	if _, ok := m.ExportedFunc("_start"); ok {
		t.Error("a reactor exports _start")
	}
	if _, ok := m.ExportedMemory("memory"); !ok {
		t.Error("no memory export")
	}
}

func BenchmarkParseGoModule(b *testing.B) {
	data := goCommand.build(b, "command", commandSrc)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wasmbin.Parse(data, wasmbin.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseFullModule(b *testing.B) {
	data := fullModule()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wasmbin.Parse(data, wasmbin.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
