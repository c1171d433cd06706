package launch

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestEnviron(t *testing.T) {
	tests := []struct {
		name  string
		host  []string
		extra []string
		want  []string
	}{
		{
			name: "allowlist",
			host: []string{"PATH=/bin", "HOME=/root", "PALYRA_VAULT_KEY=k", "AWS_SECRET_ACCESS_KEY=s", "GOGC=150", "GOMAXPROCS=2",
				"GOMEMLIMIT=1GiB", "GODEBUG=x=1", "GOTRACEBACK=all", "TZ=UTC", "LANG=C", "PALYRA_SIDECAR_CPUPROFILE_DIR=/p", "PALYRA_SIDECAR=/bin/sc"},
			want: []string{"PATH=/bin", "GOGC=150", "GOMAXPROCS=2", "GOMEMLIMIT=1GiB", "GODEBUG=x=1", "GOTRACEBACK=all", "TZ=UTC",
				"PALYRA_SIDECAR_CPUPROFILE_DIR=/p", "TMPDIR=/priv"},
		},
		{
			name: "the host's TMPDIR never passes",
			host: []string{"TMPDIR=/tmp"},
			want: []string{"TMPDIR=/priv"},
		},
		{
			name:  "program-set variables come last and win",
			host:  []string{"PALYRA_SIDECAR_PLUGIN=forged", "GOGC=1"},
			extra: []string{"PLUGIN_UNIX_SOCKET_DIR=/priv/s", "PALYRA_SIDECAR_PLUGIN=cookie", "TMPDIR=/other"},
			want:  []string{"PALYRA_SIDECAR_PLUGIN=cookie", "GOGC=1", "TMPDIR=/other", "PLUGIN_UNIX_SOCKET_DIR=/priv/s"},
		},
		{
			name:  "malformed entries are dropped",
			host:  []string{"PATH", "=x", "GOGC=100"},
			extra: []string{"nonsense"},
			want:  []string{"GOGC=100", "TMPDIR=/priv"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Environ(tt.host, "/priv", tt.extra); !slices.Equal(got, tt.want) {
				t.Errorf("Environ = %q, want %q", got, tt.want)
			}
		})
	}
}

func randomHex(t *testing.T) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// TestChildEnvironment reads the environment of a live child: the host's
// secrets are not there, the allowlisted and program-set variables are,
// and TMPDIR is the private directory.
func TestChildEnvironment(t *testing.T) {
	vaultKey, awsKey := randomHex(t), randomHex(t)
	t.Setenv("PALYRA_VAULT_KEY", vaultKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsKey)
	t.Setenv("HOME", "/home/operator")
	t.Setenv("GOGC", "150")
	c := started(t, "sleep", Cmd{Env: []string{"PLUGIN_PROTOCOL_VERSIONS=1"}})
	// Start returns once the exec has begun; the kernel fills in the new
	// image's environment a moment later, so an early read is empty.
	var raw []byte
	for deadline := time.Now().Add(10 * time.Second); len(raw) == 0; time.Sleep(5 * time.Millisecond) {
		var err error
		if raw, err = os.ReadFile(fmt.Sprintf("/proc/%d/environ", c.Pid())); err != nil {
			t.Fatal(err)
		}
		if len(raw) == 0 && time.Now().After(deadline) {
			t.Fatal("the child's /proc environ stayed empty")
		}
	}
	if bytes.Contains(raw, []byte(vaultKey)) || bytes.Contains(raw, []byte(awsKey)) {
		t.Fatalf("a secret reached the child: %q", raw)
	}
	env := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	for _, want := range []string{"GOGC=150", "TMPDIR=" + c.Dir(), "PLUGIN_PROTOCOL_VERSIONS=1", helperEnv + "=sleep"} {
		if !slices.Contains(env, want) {
			t.Errorf("child environment lacks %s: %q", want, env)
		}
	}
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		t.Errorf("HOME reached the child: %q", env)
	}
	if fi, err := os.Stat(c.Dir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("private dir: %v %v", fi, err)
	}
}

// TestKillKillsProcessGroup checks that Kill ends the child and what it
// started, that the child is its own process group, and that Wait reports
// the kill.
func TestKillKillsProcessGroup(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := started(t, "group", Cmd{Stdout: w})
	w.Close()
	grandchild := readPID(t, bufio.NewScanner(r))
	if pgid, err := syscall.Getpgid(c.Pid()); err != nil || pgid != c.Pid() {
		t.Errorf("child pgid %d (%v), want its pid %d", pgid, err, c.Pid())
	}
	if pgid, err := syscall.Getpgid(grandchild); err != nil || pgid != c.Pid() {
		t.Errorf("grandchild pgid %d (%v), want %d", pgid, err, c.Pid())
	}
	if c.Exited() {
		t.Fatal("child exited before Kill")
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := c.Wait(t.Context()); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("Wait after Kill: %v", err)
	}
	if !c.Exited() {
		t.Error("Exited is false after Wait")
	}
	if err := c.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}
	waitGone(t, grandchild, "grandchild")
}

// TestStartFailure checks that a child that cannot start leaves nothing:
// its private directory goes on Close, and it cannot be started later.
func TestStartFailure(t *testing.T) {
	tests := []struct {
		name  string
		start bool
	}{
		{"start fails", true},
		{"never started", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(t.TempDir(), "lt-")
			if err != nil {
				t.Fatal(err)
			}
			if tt.start {
				if err := c.Start(Cmd{Path: "/nonexistent/palyra-sidecar"}); err == nil {
					t.Fatal("Start of a missing program succeeded")
				}
			}
			if c.Started() || c.Pid() != 0 || c.Exited() {
				t.Errorf("started %v pid %d exited %v", c.Started(), c.Pid(), c.Exited())
			}
			if err := c.Kill(); err != nil {
				t.Errorf("Kill: %v", err)
			}
			if err := c.Wait(t.Context()); err == nil {
				t.Error("Wait of a child never started succeeded")
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("private dir after Close: %v", err)
			}
			if err := c.Start(Cmd{Path: os.Args[0]}); !errors.Is(err, errClosed) {
				t.Errorf("Start after Close: %v", err)
			}
		})
	}
}

func TestStartTwice(t *testing.T) {
	c := started(t, "sleep", Cmd{})
	if err := c.Start(Cmd{Path: os.Args[0]}); !errors.Is(err, errStarted) {
		t.Errorf("second Start: %v", err)
	}
}

// TestChildSurvivesThreadExits starts a child from a goroutine that then
// exits locked to its thread (which ends the thread), and ends many more
// threads of the host: the child must live on. Pdeathsig follows the
// forking thread, and the launcher forks on a thread of its own that it
// holds until the child is reaped, so no goroutine can end it.
func TestChildSurvivesThreadExits(t *testing.T) {
	c, err := New(t.TempDir(), "lt-")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tids := make(chan int, 65)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		tids <- syscall.Gettid()
		errc <- c.Start(Cmd{Path: os.Args[0], Env: []string{helperEnv + "=sleep"}})
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range cap(tids) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tids <- syscall.Gettid()
		}()
	}
	wg.Wait()
	close(tids)
	// The kernel sends Pdeathsig as a thread exits, before the thread
	// leaves /proc.
	for tid := range tids {
		if tid == os.Getpid() {
			continue // the main thread is never ended, only wedged
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread %d did not end", tid)
			}
		}
	}
	if !alive(c.Pid()) || c.Exited() {
		t.Fatalf("the child died when threads of the host ended (state %q)", procState(c.Pid()))
	}
}

// TestChildDiesWithParent SIGKILLs a process that launched a child: the
// child must die too (Pdeathsig).
func TestChildDiesWithParent(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=parent", "TMPDIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	child := readPID(t, bufio.NewScanner(out))
	if !alive(child) {
		t.Fatalf("child %d not alive", child)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitGone(t, child, "child of a SIGKILLed parent")
}

func TestCapture(t *testing.T) {
	tests := []struct {
		name    string
		max     int
		writes  []string
		want    string
		dropped int64
	}{
		{"under the cap", 10, []string{"abc", "de"}, "abcde", 0},
		{"exactly the cap", 5, []string{"abcde"}, "abcde", 0},
		{"over the cap in one write", 4, []string{"abcdefg"}, "abcd", 3},
		{"over the cap across writes", 4, []string{"ab", "cde", "fg"}, "abcd", 3},
		{"zero cap", 0, []string{"abc"}, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Capture{Max: tt.max}
			for _, w := range tt.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := string(c.Bytes()); got != tt.want || c.Dropped() != tt.dropped {
				t.Errorf("kept %q dropped %d, want %q and %d", got, c.Dropped(), tt.want, tt.dropped)
			}
		})
	}
}

// TestCaptureFromChild checks that a child's output reaches a writer that
// is not a file, complete once the child is reaped.
func TestCaptureFromChild(t *testing.T) {
	c, err := New(t.TempDir(), "lt-")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := &Capture{Max: 1 << 20}
	if err := c.Start(Cmd{Path: "/bin/sh", Args: []string{"-c", `echo "tmp=$TMPDIR"`}, Stdout: out}); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out.Bytes())), "tmp="+c.Dir(); got != want {
		t.Errorf("child said %q, want %q", got, want)
	}
}

// TestEscapedOutputHolder checks that a process that leaves the child's
// process group (setsid) with the child's output pipe cannot block the
// reaping of the child nor Close.
func TestEscapedOutputHolder(t *testing.T) {
	c, err := New(t.TempDir(), "lt-")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := &Capture{Max: 1 << 10}
	// The background setsid is no group leader, so it execs sleep itself:
	// $! is the escaped process.
	if err := c.Start(Cmd{Path: "/bin/sh", Args: []string{"-c", "setsid sleep 60 </dev/null & echo $!"}, Stdout: out}); err != nil {
		t.Fatal(err)
	}
	err = c.Wait(t.Context())
	var escaped int
	if _, serr := fmt.Sscan(string(out.Bytes()), &escaped); serr != nil || escaped <= 0 {
		t.Fatalf("shell said %q (%v)", out.Bytes(), serr)
	}
	defer waitGone(t, escaped, "escaped process")
	defer syscall.Kill(escaped, syscall.SIGKILL)
	if !errors.Is(err, exec.ErrWaitDelay) {
		t.Errorf("Wait = %v, want exec.ErrWaitDelay", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
