package cluster

import (
	"os"
	"testing"

	"github.com/palyra-go/palyra/internal/testbin"
)

// binDir holds palyra-sidecar, built once for the package's tests that
// run skills on real hosts.
var binDir string

// TestMain builds the sidecar, runs the tests and fails the run when a
// goroutine outlives them (testbin.Main runs goleak): every test closes
// its links (and so its embedded nats-servers) and hosts.
func TestMain(m *testing.M) {
	os.Exit(testbin.Main(m, &binDir, "palyra-sidecar"))
}
