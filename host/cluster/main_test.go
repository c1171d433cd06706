package cluster

import (
	"os"
	"testing"

	"github.com/palyra-go/palyra/internal/testbin"
)

// bin holds the palyra-sidecar binary the tests' hosts run skills with.
var bin string

// TestMain builds palyra-sidecar, runs the tests and fails the run on a
// leaked goroutine (testbin.Main runs goleak).
func TestMain(m *testing.M) { os.Exit(testbin.Main(m, &bin, "palyra-sidecar")) }
