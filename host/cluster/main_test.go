package cluster

import (
	"os"
	"testing"

	"github.com/palyra-go/palyra/internal/testbin"
)

// bin holds the palyra-sidecar binary the nodes' hosts run.
var bin string

// TestMain builds the sidecar, runs the tests and fails on a leaked
// goroutine (testbin.Main runs goleak).
func TestMain(m *testing.M) { os.Exit(testbin.Main(m, &bin, "palyra-sidecar")) }
