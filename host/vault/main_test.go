package vault_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind (the key command's
// output copiers included). The helper processes of TestMultiProcessSet run
// through it too, harmlessly.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
