package harden

import (
	"encoding/json"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// childEnv makes the test binary a child that runs Apply (see
// TestApplyInChild) instead of the tests.
const childEnv = "PALYRA_HARDEN_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(applyChild())
	}
	goleak.VerifyTestMain(m)
}

// applyChild runs Apply (Later: no Landlock or seccomp, which this
// report does not need) and prints its Report and every thread's
// credentials as JSON.
func applyChild() int {
	rep, err := Apply(Config{Later: true})
	out := struct {
		Report  Report
		Err     string
		Threads threadCreds
	}{Report: rep, Threads: readThreadCreds()}
	if err != nil {
		out.Err = err.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}
