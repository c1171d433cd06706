package hooks

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: every worker and
// every hook call of a Dispatcher must be gone once Close returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
