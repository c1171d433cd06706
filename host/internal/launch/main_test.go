package launch

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// helperEnv selects what the test binary does when it runs as a child of
// the tests (passed in Cmd.Env, the only way past the allowlist).
const helperEnv = "LAUNCH_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		goleak.VerifyTestMain(m)
	case "sleep":
		block()
	case "group":
		// Start a grandchild in this process group, report its pid, block.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=sleep")
		if err := cmd.Start(); err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Println("PID", cmd.Process.Pid)
		block()
	case "parent":
		// Launch a child the way the host does, report its pid, block: the
		// test SIGKILLs this process and checks that the child dies too.
		c, err := New("", "lt-")
		if err == nil {
			err = c.Start(Cmd{Path: os.Args[0], Env: []string{helperEnv + "=sleep"}})
		}
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Println("PID", c.Pid())
		block()
	default:
		fmt.Println("ERR unknown helper mode")
		os.Exit(2)
	}
}

// block blocks until the process is killed (a bare select{} would be
// reported as a deadlock by the runtime).
func block() {
	for {
		time.Sleep(time.Hour)
	}
}

// readPID reads the "PID n" line a helper prints.
func readPID(t *testing.T, sc *bufio.Scanner) int {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("helper ended without a pid: %v", sc.Err())
	}
	line := sc.Text()
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "PID "))
	if err != nil || !strings.HasPrefix(line, "PID ") {
		t.Fatalf("helper said %q", line)
	}
	return pid
}

// procState is a process's state letter ("" when it is gone).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// alive reports whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	st := procState(pid)
	return st != "" && st != "Z"
}

// waitGone waits up to 10 s for pid to die: a process that is not our
// child is reaped by someone else, whenever it gets to it.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%s (pid %d) still alive", what, pid)
			return
		}
	}
}

// started starts the test binary in helper mode in a new Child whose
// cleanup closes it and checks that its private directory is gone.
func started(t *testing.T, mode string, cmd Cmd) *Child {
	t.Helper()
	c, err := New(t.TempDir(), "lt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("private dir after Close: %v", err)
		}
	})
	cmd.Path = os.Args[0]
	cmd.Env = append(cmd.Env, helperEnv+"="+mode)
	if err := c.Start(cmd); err != nil {
		t.Fatal(err)
	}
	return c
}
