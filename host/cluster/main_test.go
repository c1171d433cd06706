package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// sidecarPath is the palyra-sidecar binary the tests' hosts run, built
// once by TestMain.
var sidecarPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "palyra-cluster-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		sidecarPath = filepath.Join(dir, "palyra-sidecar")
		build := exec.Command(examplebuild.GoCommand(), "build", "-o", sidecarPath, "github.com/palyra-go/palyra/cmd/palyra-sidecar")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building palyra-sidecar:", err)
			return 1
		}
		return m.Run()
	}()
	os.RemoveAll(dir)
	if code != 0 {
		os.Exit(code)
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		os.Exit(1)
	}
}
