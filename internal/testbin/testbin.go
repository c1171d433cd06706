// Package testbin runs the tests of a package that needs the project's
// commands as real binaries (palyra-host, palyra-sidecar): it builds them
// once into a temporary directory, runs the tests, removes the directory,
// and, when the tests passed, fails the run on a leaked goroutine
// (goleak), so a TestMain is one line.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// Module is the import path prefix of the project's commands.
const Module = "github.com/palyra-go/palyra/cmd/"

// Main builds the commands named (palyra-host, palyra-sidecar: the
// directories under cmd/) into a fresh directory, runs m with dir set to
// it, and returns the exit code for os.Exit.
func Main(m *testing.M, dir *string, commands ...string) int {
	d, err := os.MkdirTemp("", "palyra-testbin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(d)
	args := []string{"build", "-o", d + string(filepath.Separator)}
	for _, c := range commands {
		args = append(args, Module+c)
	}
	build := exec.Command(examplebuild.GoCommand(), args...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building %v: %v\n", commands, err)
		return 1
	}
	*dir = d
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}
