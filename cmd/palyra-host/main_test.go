package main

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// bin holds palyra-host and palyra-sidecar, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "palyra-host-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	build := exec.Command(examplebuild.GoCommand(), "build", "-o", dir+"/",
		"github.com/palyra-go/palyra/cmd/palyra-host", "github.com/palyra-go/palyra/cmd/palyra-sidecar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building palyra-host and palyra-sidecar:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
