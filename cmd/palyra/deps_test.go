package main

import (
	"os/exec"
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
	// go test puts its own GOROOT/bin first in PATH.
	out, err := exec.Command("go", "list", "-deps", "github.com/palyra-go/palyra/cmd/palyra", "github.com/palyra-go/palyra/host/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "wasmtime") || strings.HasPrefix(dep, "github.com/palyra-go/palyra/sidecar/internal/wasmrt") {
			t.Errorf("the supervisor side depends on %s", dep)
		}
	}
}

// TestSidecarLinksNoSchemaLibrary guards the other side: schemas are
// checked on the trusted side, and the schema library compiles its
// meta-schemas when its package is initialized (2.4 ms and 1.7 MB of
// allocations at every sidecar start), so palyra-sidecar must not link it.
func TestSidecarLinksNoSchemaLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/palyra-go/palyra/cmd/palyra-sidecar").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "jsonschema") || dep == "github.com/palyra-go/palyra/internal/toolschema" {
			t.Errorf("palyra-sidecar depends on %s", dep)
		}
	}
}
