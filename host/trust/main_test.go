package trust_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind. The helper process
// (TestHelperProcess) runs through the same TestMain, which is harmless: it
// starts no goroutine of its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
