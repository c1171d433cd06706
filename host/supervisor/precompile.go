package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/palyra-go/palyra/host/internal/launch"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
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
// The child runs under the compile budget, Config.PrecompileCPUTime and
// PrecompileMemoryBytes (RLIMIT_CPU and RLIMIT_DATA, set by the child
// before it reads the module). A child killed at its CPU cap, or one whose
// allocation failed under its memory cap, fails with an error wrapping
// ErrCompileBudgetExceeded that names the cap ("CPU-time cap of 30 s",
// "memory cap of 469762048 bytes"). The error of another failure the
// sidecar reported is "<error_code>: <error>"; otherwise it names
// palyra-sidecar precompile and quotes at most 256 bytes of its stderr.
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
	if s.cfg.NoMemoryPool {
		args = append(args, "--"+sidecarplugin.FlagNoMemoryPool)
	}
	if sha != "" {
		args = append(args, "--sha256", sha)
	}
	b := s.compileBudget()
	if b.cpuSeconds > 0 {
		args = append(args, "--cpu-seconds", strconv.FormatUint(b.cpuSeconds, 10))
	}
	if b.memoryBytes > 0 {
		args = append(args, "--memory-bytes", strconv.FormatUint(b.memoryBytes, 10))
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
	var budgetErr error
	if runErr != nil {
		budgetErr = b.exceeded(runErr, res.Error, stderr.Bytes())
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("palyra-sidecar precompile: %w", ctx.Err())
	case closed && runErr != nil:
		return fmt.Errorf("%w: palyra-sidecar precompile of %s ended by Close", ErrClosed, modulePath)
	case budgetErr != nil:
		return fmt.Errorf("palyra-sidecar precompile of %s: %w", modulePath, budgetErr)
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

// compileBudget is the cap of one precompile child.
type compileBudget struct {
	cpuSeconds  uint64 // 0: none
	memoryBytes uint64 // 0: none
}

// compileBudget returns the caps of Config, the CPU time rounded up to
// whole seconds (RLIMIT_CPU's unit).
func (s *Supervisor) compileBudget() compileBudget {
	var b compileBudget
	if d := s.cfg.PrecompileCPUTime; d > 0 {
		b.cpuSeconds = uint64((d + time.Second - 1) / time.Second)
	}
	if m := s.cfg.PrecompileMemoryBytes; m > 0 {
		b.memoryBytes = uint64(m)
	}
	return b
}

// outOfMemory are what a compile that hit RLIMIT_DATA leaves in its
// output: Rust's allocation failure (wasmtime, which then aborts), the Go
// runtime's, and an mmap or allocation error reported as such.
var outOfMemory = []string{
	"memory allocation of",
	"out of memory",
	"cannot allocate memory",
	"failed to allocate",
}

// exceeded returns an error wrapping ErrCompileBudgetExceeded when the
// failed child runErr describes ran out of the budget: killed by SIGKILL
// or SIGXCPU after using its CPU time (nothing else of the supervisor's
// kills a child it did not end by ctx or Close, which the caller checked),
// or failed on an allocation with a memory cap set. It returns nil
// otherwise.
func (b compileBudget) exceeded(runErr error, reported string, stderr []byte) error {
	var ee *exec.ExitError
	if !errors.As(runErr, &ee) || ee.ProcessState == nil {
		return nil
	}
	ws, _ := ee.ProcessState.Sys().(syscall.WaitStatus)
	cpu := ee.ProcessState.UserTime() + ee.ProcessState.SystemTime()
	if b.cpuSeconds > 0 && ws.Signaled() && (ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGXCPU) &&
		cpu >= time.Duration(b.cpuSeconds)*time.Second-time.Second/2 {
		return fmt.Errorf("%w: compiling used %.1f s of CPU, over the CPU-time cap of %d s",
			ErrCompileBudgetExceeded, cpu.Seconds(), b.cpuSeconds)
	}
	if b.memoryBytes > 0 {
		out := strings.ToLower(reported + "\n" + string(stderr))
		for _, m := range outOfMemory {
			if strings.Contains(out, m) {
				return fmt.Errorf("%w: compiling ran out of the memory cap of %d bytes (%s)",
					ErrCompileBudgetExceeded, b.memoryBytes, byteSize(b.memoryBytes))
			}
		}
	}
	return nil
}

// byteSize renders n in MiB when it is a whole number of them.
func byteSize(n uint64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatUint(n>>20, 10) + " MiB"
	}
	return strconv.FormatUint(n, 10) + " bytes"
}
