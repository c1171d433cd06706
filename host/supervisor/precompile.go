package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/palyra-go/palyra/host/internal/launch"
)

// maxPrecompileOutput caps what the supervisor keeps of a precompile
// child's stdout (one JSON object) and of its stderr: the child compiles an
// untrusted module, so its output is bounded like any other message of a
// sidecar.
const maxPrecompileOutput = 64 << 10

// maxPrecompileStderr is how much of a failed child's stderr an error
// quotes.
const maxPrecompileStderr = 256

// Precompile compiles the module at modulePath into Config.CacheDir, so
// that the first call of its skill loads it from the cache. The compiler
// runs in a child, `palyra-sidecar precompile --wasm modulePath --cache-dir
// CacheDir [--sha256 sha]`, started by the launcher like every sidecar
// (allowlisted environment, own process group, Pdeathsig, private TMPDIR
// removed after), so that compiling an untrusted module happens outside
// the host process. ctx and Config.PrecompileTimeout bound it; when either
// ends, or Close is called, the child's process group is killed.
//
// The error of a failure the sidecar reported is "<error_code>: <error>";
// otherwise it names palyra-sidecar precompile and quotes at most 256
// bytes of its stderr.
func (s *Supervisor) Precompile(ctx context.Context, modulePath, sha string) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.calls.Done()
	if s.cfg.CacheDir == "" {
		return errors.New("palyra-sidecar precompile: the supervisor has no Config.CacheDir to compile into")
	}
	if err := os.MkdirAll(s.cfg.CacheDir, 0o700); err != nil {
		return fmt.Errorf("palyra-sidecar precompile: cache dir: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.PrecompileTimeout)
	defer cancel()
	child, err := launch.New(s.cfg.SocketDir, "pc-")
	if err != nil {
		return fmt.Errorf("palyra-sidecar precompile: %w", err)
	}
	defer func() {
		if err := child.Close(); err != nil {
			s.log.Warn("cleaning up after palyra-sidecar precompile failed", "error", err)
		}
	}()
	cred, err := s.credential(child.Dir())
	if err != nil {
		return fmt.Errorf("palyra-sidecar precompile: %w", err)
	}
	args := append([]string{"precompile", "--wasm", modulePath, "--cache-dir", s.cfg.CacheDir}, s.hardenArgs(child.Dir())...)
	if sha != "" {
		args = append(args, "--sha256", sha)
	}
	stdout := &launch.Capture{Max: maxPrecompileOutput}
	stderr := &launch.Capture{Max: maxPrecompileOutput}
	closed := false
	runErr := child.Start(launch.Cmd{Path: s.cfg.SidecarPath, Args: args, Stdout: stdout, Stderr: stderr, Credential: cred})
	if runErr == nil {
		select {
		case <-child.Done():
		case <-ctx.Done():
		case <-s.stop:
			closed = true
		}
		if err := child.Kill(); err != nil {
			s.log.Warn("killing palyra-sidecar precompile failed", "pid", child.Pid(), "error", err)
		}
		runErr = child.Wait(context.Background())
	}
	var res struct {
		ErrorCode string `json:"error_code"`
		Error     string `json:"error"`
	}
	jerr := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res)
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("palyra-sidecar precompile: %w", ctx.Err())
	case closed && runErr != nil:
		return fmt.Errorf("%w: palyra-sidecar precompile of %s ended by Close", ErrClosed, modulePath)
	case runErr != nil && jerr == nil && res.Error != "":
		return fmt.Errorf("%s: %s", res.ErrorCode, res.Error)
	case runErr != nil:
		msg := strings.TrimSpace(string(stderr.Bytes()))
		if len(msg) > maxPrecompileStderr {
			msg = msg[:maxPrecompileStderr]
		}
		return fmt.Errorf("palyra-sidecar precompile: %v: %s", runErr, msg)
	case jerr != nil:
		return fmt.Errorf("palyra-sidecar precompile: bad output: %v", jerr)
	}
	return nil
}
