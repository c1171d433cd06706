package supervisor

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// logBuffer is an io.Writer safe for the concurrent writes of a logger
// and the test's reads.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines returns the log lines that contain every one of words.
func (l *logBuffer) lines(words ...string) []string {
	var out []string
	for _, ln := range strings.Split(l.String(), "\n") {
		all := ln != ""
		for _, w := range words {
			all = all && strings.Contains(ln, w)
		}
		if all {
			out = append(out, ln)
		}
	}
	return out
}

// capture returns a logger at trace level writing to a logBuffer.
func capture() (hclog.Logger, *logBuffer) {
	buf := &logBuffer{}
	return hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Trace, Output: buf}), buf
}

// TestStopEndsTheVersionAtOnce checks that Stop returns only once the
// serving sidecar and the standby of the version are gone (no waiting for
// them afterwards), leaves the other versions' sidecars running, and logs
// no error.
func TestStopEndsTheVersionAtOnce(t *testing.T) {
	log, buf := capture()
	s := newSup(t, Config{Logger: log, HealthInterval: -1, IdleTimeout: -1})
	tg := fixture(t, "stop.a", "echo.wasm")
	other := fixture(t, "stop.b", "echo.wasm")
	serving := callInUse(t, s, tg)
	sb := waitStandby(t, s, tg, 0)
	otherPID := callServed(t, s, other)

	s.Stop(ctxT(t), tg.SkillID, tg.Version)
	for what, pid := range map[string]int{"serving sidecar": serving, "standby": sb} {
		if alive(pid) {
			t.Errorf("%s %d still alive when Stop returned", what, pid)
		}
	}
	if st := s.State(tg.SkillID, tg.Version); st.Status != StatusStopped || st.PID != 0 || st.StandbyPID != 0 {
		t.Errorf("state after Stop: %+v", st)
	}
	if !alive(otherPID) || s.State(other.SkillID, other.Version).PID != otherPID {
		t.Errorf("the other skill's sidecar %d was stopped too", otherPID)
	}
	if errs := buf.lines("[ERROR]"); len(errs) > 0 {
		t.Errorf("Stop logged errors:\n%s", strings.Join(errs, "\n"))
	}
	// Stopping a version that runs nothing, or that was never seen, is a
	// no-op.
	s.Stop(ctxT(t), tg.SkillID, tg.Version)
	s.Stop(ctxT(t), "stop.none", "1.0.0")
	// The next call starts a new sidecar.
	if pid := callServed(t, s, tg); pid == serving || pid == sb {
		t.Errorf("call after Stop served by pid %d (old %d, standby %d)", pid, serving, sb)
	}
}

// TestCloseLogsNoError checks that an orderly Close of a supervisor with
// serving, standby and spare sidecars logs no error (go-plugin reports the
// exits it did not cause at error level: "signal: killed"), while a
// sidecar that dies by itself still does.
func TestCloseLogsNoError(t *testing.T) {
	log, buf := capture()
	s, err := New(Config{SidecarPath: binPath, SocketDir: shortDir(t), Logger: log, HealthInterval: -1, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	a, b := fixture(t, "close.a", "echo.wasm"), fixture(t, "close.b", "echo.wasm")
	pids := []int{callInUse(t, s, a), callInUse(t, s, b)}
	pids = append(pids, waitStandby(t, s, a, 0), waitStandby(t, s, b, 0))
	for deadline := time.Now().Add(30 * time.Second); s.ReadySpares() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no spare sidecar within 30 s")
		}
	}

	// The control: a sidecar killed from outside is an error.
	victim := fixture(t, "close.victim", "echo.wasm")
	vpid := callServed(t, s, victim)
	if err := syscall.Kill(vpid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); len(buf.lines("[ERROR]", "plugin process exited", "id="+strconv.Itoa(vpid))) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the death of sidecar %d was not logged as an error:\n%s", vpid, buf)
		}
	}
	before := len(buf.lines("[ERROR]"))

	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("sidecar %d alive after Close", pid)
		}
	}
	if errs := buf.lines("[ERROR]"); len(errs) != before {
		t.Errorf("Close logged errors:\n%s", strings.Join(errs[before:], "\n"))
	}
	// Every sidecar's exit is still logged, below error level.
	for _, pid := range pids {
		if len(buf.lines("plugin process exited", "id="+strconv.Itoa(pid))) == 0 {
			t.Errorf("the exit of sidecar %d was not logged:\n%s", pid, buf)
		}
	}
}
