package statedir_test

import (
	"os"
	"testing"
)

// unsetenv removes key for the duration of the test (t.Setenv first, so the
// original value is restored afterwards).
func unsetenv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "")
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}
