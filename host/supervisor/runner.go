package supervisor

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/palyra-go/palyra/host/internal/launch"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// cmdRunner is go-plugin's view of a sidecar started by the launcher. It
// exists because go-plugin honours UnixSocketConfig.TempDir — the directory
// of the supervisor's own GRPCBroker listener, which serves the capability
// broker — only for a client with a RunnerFunc; with it, every socket of a
// sidecar lives in the sidecar's private directory and nothing lands in
// $TMPDIR. Addresses need no translation: both ends share the file system.
//
// Its stdout and stderr are plain pipes, not exec's: the launcher reaps
// the child as soon as it exits, while go-plugin may still be reading, and
// exec would close its pipes on reaping. The read ends are closed by close,
// once go-plugin is done with them.
type cmdRunner struct {
	child *launch.Child
	cmd   launch.Cmd
	// clientKey is the supervisor's TLS key for this sidecar, passed in
	// sidecarplugin.ClientKeyEnv; stdout takes the sidecar's own key from
	// the first line of its output (sidecarplugin.KeyLineReader).
	clientKey ed25519.PublicKey
	stdout    *sidecarplugin.KeyLineReader

	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
	closeOnce        sync.Once
	// expected is set once the supervisor ends the process (endProc): its
	// exit, by Stop or by SIGKILL, is then no failure.
	expected atomic.Bool
}

var _ runner.Runner = (*cmdRunner)(nil)

// runnerFunc is the ClientConfig.RunnerFunc: spec carries the variables
// go-plugin sets for the plugin (SkipHostEnv: none of the host's), the only
// thing of spec the runner takes.
func (r *cmdRunner) runnerFunc(_ hclog.Logger, spec *exec.Cmd, _ string) (runner.Runner, error) {
	r.cmd.Env = append(slices.Clip(spec.Env), sidecarplugin.ClientKeyEnv+"="+sidecarplugin.EncodeKey(r.clientKey))
	var err error
	if r.stdoutR, r.stdoutW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("sidecar stdout: %w", err)
	}
	r.stdout = sidecarplugin.NewKeyLineReader(r.stdoutR)
	if r.stderrR, r.stderrW, err = os.Pipe(); err != nil {
		r.close()
		return nil, fmt.Errorf("sidecar stderr: %w", err)
	}
	r.cmd.Stdout, r.cmd.Stderr = r.stdoutW, r.stderrW
	return r, nil
}

// Start starts the process through the launcher.
func (r *cmdRunner) Start(context.Context) error {
	err := r.child.Start(r.cmd)
	// The child has its own copies of the write ends; without closing
	// ours, the readers would never see the end of the output.
	_ = r.stdoutW.Close()
	_ = r.stderrW.Close()
	return err
}

// close closes every end of the pipes the runner still holds.
func (r *cmdRunner) close() {
	r.closeOnce.Do(func() {
		for _, f := range []*os.File{r.stdoutR, r.stdoutW, r.stderrR, r.stderrW} {
			if f != nil {
				_ = f.Close()
			}
		}
	})
}

// Diagnose has nothing to add to go-plugin's own report.
func (r *cmdRunner) Diagnose(context.Context) string { return "" }

// Stdout is the process's stdout after its TLS key line, where go-plugin
// reads the handshake.
func (r *cmdRunner) Stdout() io.ReadCloser { return r.stdout }

// serverKey is the sidecar's announced TLS key, the pin of the supervisor's
// TLS config for it (sidecarplugin.PinnedConfig).
func (r *cmdRunner) serverKey() (ed25519.PublicKey, error) {
	if r.stdout == nil {
		return nil, errors.New("the sidecar was not started")
	}
	return r.stdout.Key()
}

// Stderr is the process's stderr, which go-plugin logs.
func (r *cmdRunner) Stderr() io.ReadCloser { return r.stderrR }

// Name is the sidecar's path.
func (r *cmdRunner) Name() string { return r.cmd.Path }

// expectExit records that the supervisor is ending the process.
func (r *cmdRunner) expectExit() { r.expected.Store(true) }

// Wait waits for the process to end. An exit the supervisor caused
// (expectExit: a stop, Close, an idle or retired sidecar) is reported as
// none, so that go-plugin logs it at info level rather than as an error
// ("signal: killed"); a sidecar that dies by itself is still an error.
func (r *cmdRunner) Wait(ctx context.Context) error {
	err := r.child.Wait(ctx)
	if err != nil && ctx.Err() == nil && r.expected.Load() {
		return nil
	}
	return err
}

// Kill kills the process group; a process already gone is not an error.
func (r *cmdRunner) Kill(context.Context) error { return r.child.Kill() }

// ID is the process id, "" before the start.
func (r *cmdRunner) ID() string {
	if pid := r.child.Pid(); pid != 0 {
		return strconv.Itoa(pid)
	}
	return ""
}

// PluginToHost returns the address unchanged.
func (r *cmdRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }

// HostToPlugin returns the address unchanged.
func (r *cmdRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }
