package e2e_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/palyra-go/palyra/internal/testbin"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// bin holds palyra-host and palyra-sidecar, built once by TestMain;
// counterWasm and eventLogWasm are the kv-counter and event-log examples.
var bin, counterWasm, eventLogWasm string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "palyra-cluster-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for name, dst := range map[string]*string{"kv-counter": &counterWasm, "event-log": &eventLogWasm} {
		if *dst, err = examplebuild.Build(context.Background(), name, dir); err != nil {
			fmt.Fprintf(os.Stderr, "building the %s example: %v\n", name, err)
			return 1
		}
	}
	// testbin.Main runs goleak after the tests.
	return testbin.Main(m, &bin, "palyra-host", "palyra-sidecar")
}
