package wasmbin_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind, and removes the
// Go-built wasm modules shared by the tests and benchmarks.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if goBuildDir != "" {
			os.RemoveAll(goBuildDir)
		}
	}))
}
