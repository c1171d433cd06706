package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// cmdRunner runs a sidecar as a plain child process for go-plugin. It
// exists because go-plugin honours UnixSocketConfig.TempDir — the directory
// of the supervisor's own GRPCBroker listener, which serves the capability
// broker — only for a client with a RunnerFunc; with it, every socket of a
// sidecar lives in the sidecar's private directory and nothing lands in
// $TMPDIR. Addresses need no translation: both ends share the file system.
type cmdRunner struct {
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr io.ReadCloser
}

var _ runner.Runner = (*cmdRunner)(nil)

func newCmdRunner(_ hclog.Logger, cmd *exec.Cmd) (runner.Runner, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("sidecar stdout: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("sidecar stderr: %w", err)
	}
	return &cmdRunner{cmd: cmd, stdout: stdout, stderr: stderr}, nil
}

// Start starts the process.
func (r *cmdRunner) Start(context.Context) error { return r.cmd.Start() }

// Diagnose has nothing to add to go-plugin's own report.
func (r *cmdRunner) Diagnose(context.Context) string { return "" }

// Stdout is the process's stdout, where go-plugin reads the handshake.
func (r *cmdRunner) Stdout() io.ReadCloser { return r.stdout }

// Stderr is the process's stderr, which go-plugin logs.
func (r *cmdRunner) Stderr() io.ReadCloser { return r.stderr }

// Name is the sidecar's path.
func (r *cmdRunner) Name() string { return r.cmd.Path }

// Wait waits for the process to end.
func (r *cmdRunner) Wait(context.Context) error { return r.cmd.Wait() }

// Kill kills the process; a process already gone is not an error.
func (r *cmdRunner) Kill(context.Context) error {
	if r.cmd.Process == nil {
		return nil
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// ID is the process id.
func (r *cmdRunner) ID() string {
	if r.cmd.Process == nil {
		return ""
	}
	return strconv.Itoa(r.cmd.Process.Pid)
}

// PluginToHost returns the address unchanged.
func (r *cmdRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }

// HostToPlugin returns the address unchanged.
func (r *cmdRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }
