package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSupervisorSideIsPureGo guards the design rule that only the sidecar
// links wasmtime: the CLI and every host package build without it (and so
// without cgo for the WASM engine).
func TestSupervisorSideIsPureGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "list", "-deps", "github.com/palyra-go/palyra/cmd/palyra", "github.com/palyra-go/palyra/host/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "wasmtime") || strings.HasPrefix(dep, "github.com/palyra-go/palyra/sidecar/runtime") {
			t.Errorf("the supervisor side depends on %s", dep)
		}
	}
}
