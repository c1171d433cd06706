package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine outlives the tests: every test
// closes its links (and so its embedded nats-servers) and hosts.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
