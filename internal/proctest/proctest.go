// Package proctest holds what tests that run real child processes share:
// a buffer safe to hand to exec.Cmd's Stdout and Stderr while the test reads
// it, and the /proc readings that check no process outlived its owner.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is a bytes.Buffer safe for one writer (a child's output) and
// concurrent readers.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stat returns the fields of /proc/<pid>/stat after "(comm)": state, ppid, ...
func stat(pid string) ([]string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// Children returns the pids of the live processes whose parent is pid.
func Children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := stat(e.Name()); ok && len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
				out = append(out, n)
			}
		}
	}
	return out
}

// Alive reports whether pid is a process that has not exited (a zombie
// counts as exited).
func Alive(pid int) bool {
	f, ok := stat(fmt.Sprint(pid))
	return ok && len(f) > 0 && f[0] != "Z"
}

// WaitGone fails the test for each pid still alive after within.
func WaitGone(t testing.TB, pids []int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, pid := range pids {
		for Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if Alive(pid) {
			t.Errorf("process %d outlived its owner", pid)
		}
	}
}
