package install

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		// A child process of the crash and concurrency tests: it runs
		// TestHelperProcess only and exits from there (or is killed).
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}
