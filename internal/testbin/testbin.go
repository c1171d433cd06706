// Package testbin runs the tests of a package that needs the project's
// commands as real binaries (palyra-host, palyra-sidecar): it builds them
// once into a temporary directory, runs the tests, removes the directory,
// and, when the tests passed, fails the run on a leaked goroutine
// (goleak; UpstreamLeaks aside), so a TestMain is one line.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// Module is the import path prefix of the project's commands.
const Module = "github.com/palyra-go/palyra/cmd/"

// Main builds the commands named (palyra-host, palyra-sidecar: the
// directories under cmd/) into a fresh directory, linked as the README
// builds them (buildinfo.SidecarLDFlags), runs m with dir set to
// it, and returns the exit code for os.Exit.
//
// A worker process of go test -fuzz (which runs only the fuzz function)
// reuses its parent's binaries, named by the environment variable
// EnvDir that Main sets for its children, instead of building them again.
func Main(m *testing.M, dir *string, commands ...string) int {
	if d := os.Getenv(EnvDir); d != "" && fuzzWorker() {
		*dir = d
		return m.Run()
	}
	d, err := os.MkdirTemp("", "palyra-testbin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(d)
	args := []string{"build", "-ldflags=" + buildinfo.SidecarLDFlags, "-o", d + string(filepath.Separator)}
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
	os.Setenv(EnvDir, d)
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(UpstreamLeaks...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// UpstreamLeaks are the goroutines a dependency leaks by a race of its
// own, which the goleak check after the tests ignores; each is a bug
// upstream that our code cannot close.
//
// nats.go v1.55.0 jetstream: ObjectStore.Put publishes its chunks
// through a JetStream context of its own whose first async publish starts
// resetPendingAcksOnReconnect; Put's deferred cleanup sets the
// publisher's status channel to nil. When the goroutine is scheduled only
// after that (a loaded machine: CI saw it once), it reads the nil channel
// and waits on it forever ("chan receive (nil chan)"). The goroutine
// holds no connection: a NATS connection the code fails to close still
// shows as its readLoop and flusher goroutines, which are not ignored.
var UpstreamLeaks = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
}

// EnvDir names the directory of the built binaries for the fuzz workers
// of a test process (set by Main; read only by a fuzz worker).
const EnvDir = "PALYRA_TESTBIN_DIR"

// fuzzWorker reports whether this process is a worker of go test -fuzz.
func fuzzWorker() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzzworker") {
			return true
		}
	}
	return false
}
