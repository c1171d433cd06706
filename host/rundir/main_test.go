package rundir_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/host/rundir"
)

// helperEnv makes the test binary, run as a child of a test, acquire an
// instance in the root it names, put a file in it, print "DIR <dir>" and
// block until it is killed: a real host instance, alive or dead.
const helperEnv = "RUNDIR_TEST_HOLD"

func TestMain(m *testing.M) {
	root := os.Getenv(helperEnv)
	if root == "" {
		goleak.VerifyTestMain(m)
		return
	}
	in, err := rundir.Acquire(root)
	if err == nil {
		err = os.WriteFile(in.Dir()+"/socket-stand-in", []byte("x"), 0o600)
	}
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("DIR", in.Dir())
	for {
		time.Sleep(time.Hour)
	}
}
