package wasmrt_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// TestFixturesUpToDate checks that every committed testdata/wasm/*.wasm is
// exactly wasmtime's translation of the .wat beside it. Regenerate with
// `go run ./sidecar/internal/tools/wat2wasm testdata/wasm`.
func TestFixturesUpToDate(t *testing.T) {
	wats, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "wasm", "*.wat"))
	if err != nil {
		t.Fatal(err)
	}
	if len(wats) < 20 {
		t.Fatalf("found %d .wat fixtures, want at least 20", len(wats))
	}
	for _, wat := range wats {
		src, err := os.ReadFile(wat)
		if err != nil {
			t.Fatal(err)
		}
		want, err := wasmrt.Wat2Wasm(string(src))
		if err != nil {
			t.Errorf("%s: %v", wat, err)
			continue
		}
		got, err := os.ReadFile(strings.TrimSuffix(wat, ".wat") + ".wasm")
		if err != nil {
			t.Errorf("%s: %v (run go run ./sidecar/internal/tools/wat2wasm testdata/wasm)", wat, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: committed .wasm differs from Wat2Wasm of the .wat (run go run ./sidecar/internal/tools/wat2wasm testdata/wasm)", wat)
		}
	}
}

func TestWat2WasmRejectsBadText(t *testing.T) {
	if _, err := wasmrt.Wat2Wasm("(module (func (export"); err == nil {
		t.Fatal("Wat2Wasm accepted malformed text")
	}
}
