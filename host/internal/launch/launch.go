package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// outputDrainDelay bounds how long, after the child exits, a Child waits
// for the end of its output when Cmd.Stdout or Cmd.Stderr is not a file:
// a process that left the child's process group (setsid) and kept the
// pipe open would otherwise block the reaping, and Close, forever.
const outputDrainDelay = time.Second

var (
	errStarted = errors.New("launch: the child was started already")
	errClosed  = errors.New("launch: the child is closed")
)

// Cmd is what a Child runs.
type Cmd struct {
	// Path is the program; Args are its arguments (without the program
	// name).
	Path string
	Args []string
	// Env holds the variables the program itself sets for this child
	// (go-plugin's, for a serving sidecar). They come last (see the package
	// doc); they must never be copied from the host's environment.
	Env []string
	// Stdout and Stderr receive the child's output; nil discards it. An
	// *os.File is handed to the child as is; any other writer is fed by a
	// goroutine of os/exec that ends before the child counts as reaped,
	// at most a second after the child exits.
	Stdout, Stderr io.Writer
	// Credential, when set, is the user and groups the child runs as.
	Credential *syscall.Credential
}

// Child is one child process of the host with its private directory. Its
// methods are safe for concurrent use. The owner must call Close, which
// kills the child's process group if it still runs, waits until it is
// reaped and removes the private directory; a Child is then done.
type Child struct {
	dir  string
	done chan struct{} // closed once the child is reaped (or its start failed)

	mu      sync.Mutex
	started bool // Start succeeded
	ended   bool // the child exited (it may be a zombie still, never reaped)
	closed  bool
	pid     int

	waitErr error // the exit status, once done is closed

	closeOnce sync.Once
	closeErr  error
}

// New makes the private directory of a child (mode 0700, named
// prefix+random, in root; "" is os.TempDir()) and returns the Child, not
// started. The caller owns it and must Close it.
func New(root, prefix string) (*Child, error) {
	if root == "" {
		root = os.TempDir()
	}
	dir, err := os.MkdirTemp(root, prefix)
	if err != nil {
		return nil, fmt.Errorf("launch: private dir: %w", err)
	}
	// MkdirTemp makes 0700 already; say so whatever the umask did.
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("launch: private dir: %w", err)
	}
	return &Child{dir: dir, done: make(chan struct{})}, nil
}

// Dir is the child's private directory (its TMPDIR).
func (c *Child) Dir() string { return c.dir }

// Start starts cmd as the child: its own process group, Pdeathsig SIGKILL,
// stdin /dev/null, the environment of the package doc. It returns once the
// process runs (or failed to start); the child is reaped by a goroutine of
// the Child that holds the forking thread until then. A Child starts once.
func (c *Child) Start(cmd Cmd) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return errClosed
	case c.started:
		return errStarted
	}
	ec := exec.Command(cmd.Path, cmd.Args...)
	ec.Env = Environ(os.Environ(), c.dir, cmd.Env)
	ec.Stdout, ec.Stderr = cmd.Stdout, cmd.Stderr
	ec.WaitDelay = outputDrainDelay
	ec.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cmd.Credential}
	started := make(chan error, 1)
	go c.run(ec, started)
	if err := <-started; err != nil {
		return err // exec's error names the program already
	}
	c.started = true
	c.pid = ec.Process.Pid
	return nil
}

// run forks ec on this goroutine's own locked thread and keeps the thread
// until the child is reaped (see the package doc: Pdeathsig follows the
// forking thread).
func (c *Child) run(ec *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := ec.Start(); err != nil {
		started <- err
		return
	}
	started <- nil
	// Wait for the exit without reaping: until the mark below, the pid
	// (and so the process group) cannot be reused, so Kill may signal it.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, ec.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	c.waitErr = ec.Wait()
	close(c.done)
}

// Pid is the child's process id (also its process group id), 0 before
// Start.
func (c *Child) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pid
}

// Started reports whether Start succeeded.
func (c *Child) Started() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// Exited reports whether the started child has exited.
func (c *Child) Exited() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ended
}

// Done is closed once the started child is reaped. It is never closed for a
// child that was not started.
func (c *Child) Done() <-chan struct{} { return c.done }

// Wait waits until the started child is reaped and returns its exit status
// as exec.Cmd.Wait does (nil for exit status 0). ctx bounds the waiting
// only: when it ends first, Wait returns ctx.Err() and the child runs on.
func (c *Child) Wait(ctx context.Context) error {
	if !c.Started() {
		return errors.New("launch: the child was not started")
	}
	select {
	case <-c.done:
		return c.waitErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Kill sends SIGKILL to the child's whole process group. It does nothing
// for a child not started or already exited, and may be called any number
// of times.
func (c *Child) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.ended {
		return nil
	}
	// The child is not reaped (ended is set before it is), so its pid is
	// still its own and names its process group.
	if err := syscall.Kill(-c.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("launch: kill process group %d: %w", c.pid, err)
	}
	return nil
}

// Close kills the child's process group if the child still runs, waits
// until it is reaped, and removes its private directory. It is idempotent
// and blocking; later calls wait for the first and return its result. A
// Child cannot be started after Close.
func (c *Child) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		started := c.started
		c.mu.Unlock()
		var errs []error
		if started {
			errs = append(errs, c.Kill())
			<-c.done
		}
		if err := os.RemoveAll(c.dir); err != nil {
			errs = append(errs, fmt.Errorf("launch: remove private dir: %w", err))
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}
