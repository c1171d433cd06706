package wasmbin_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the fixtures in testdata/wasmbin")

// goldenDir holds fixtures other packages (host/audit) may use; they are
// written by this test with -update, from the builders in builder_test.go.
var goldenDir = filepath.Join("..", "..", "..", "testdata", "wasmbin")

func TestGoldenFixtures(t *testing.T) {
	fixtures := map[string][]byte{
		"full.wasm": fullModule(),
	}
	for name, want := range fixtures {
		path := filepath.Join(goldenDir, name)
		if *update {
			if err := os.MkdirAll(goldenDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestGoldenFixtures -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the builder's output (run go test -run TestGoldenFixtures -update)", path)
		}
		mustParse(t, got)
	}
}
