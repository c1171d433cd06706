package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
)

func TestCallEchoAndSchemas(t *testing.T) {
	s := newSup(t, Config{})
	ctx := ctxT(t)
	tg := fixture(t, "test.echo", "echo.wasm")
	tg.Tools = []Tool{{ID: "test.echo", InputSchema: []byte(`{"type":"object","required":["msg"],"properties":{"msg":{"type":"string"}}}`)}}
	res, err := s.Call(ctx, tg, "test.echo", []byte(`{"msg":"hi"}`), CallOptions{})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	var doc struct {
		InvocationID string          `json:"invocation_id"`
		ToolID       string          `json:"tool_id"`
		Input        json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(res.Output, &doc); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	if doc.InvocationID != res.InvocationID || doc.ToolID != "test.echo" || string(doc.Input) != `{"msg":"hi"}` {
		t.Errorf("echoed %s (invocation %s)", res.Output, res.InvocationID)
	}
	if res.Stats.WallTime <= 0 || res.PID == 0 {
		t.Errorf("stats %+v pid %d", res.Stats, res.PID)
	}
	st := s.State("test.echo", "1.0.0")
	if st.Status != StatusRunning || st.PID != res.PID || st.Restarts != 0 {
		t.Errorf("state %+v", st)
	}
	// The supervisor checks the schemas, before the call and after it.
	_, err = s.Call(ctx, tg, "test.echo", []byte(`{"msg":1}`), CallOptions{})
	if !errors.Is(err, ErrInvalidInput) || errcode.Of(err) != "invalid_input" || !strings.Contains(err.Error(), "/msg") {
		t.Errorf("input schema violation: %v (code %s)", err, errcode.Of(err))
	}
	// The same sidecar serves the next call.
	res2, err := s.Call(ctx, tg, "test.echo", []byte(`{"msg":"again"}`), CallOptions{})
	if err != nil || res2.PID != res.PID {
		t.Errorf("second call: %v, pid %d want %d", err, res2.PID, res.PID)
	}
	strict := tg
	strict.Tools = []Tool{{ID: "test.echo", OutputSchema: []byte(`{"type":"object","required":["never"]}`)}}
	res0, err := s.Call(ctx, strict, "test.echo", []byte(`{"msg":"hi"}`), CallOptions{})
	if !errors.Is(err, ErrInvalidOutput) || errcode.Of(err) != "invalid_output" || (res0 != nil && res0.Output != nil) {
		t.Errorf("output schema violation: %v (code %s), result %+v", err, errcode.Of(err), res0)
	}
	broken := tg
	broken.Tools = []Tool{{ID: "test.echo", InputSchema: []byte(`{"type":3}`)}}
	if _, err := s.Call(ctx, broken, "test.echo", []byte(`{"msg":"hi"}`), CallOptions{}); !errors.Is(err, ErrInvalidToolSchema) || errcode.Of(err) != "invalid_tool_schema" {
		t.Errorf("schema that does not compile: %v (code %s)", err, errcode.Of(err))
	}
	// A changed module gets a fresh sidecar.
	tg2 := fixture(t, "test.echo", "answer.wasm")
	tg2.Entrypoint = "answer"
	res3, err := s.Call(ctx, tg2, "t", nil, CallOptions{})
	if err != nil || res3.PID == res.PID || !strings.Contains(string(res3.Output), "42") {
		t.Errorf("changed module: %v, pid %d (old %d), output %s", err, res3.PID, res.PID, res3.Output)
	}
	waitGone(t, res.PID, "old sidecar")
}

// TestCrashIsolation checks that the other skills see zero errors
// while one sidecar is killed mid-call.
func TestCrashIsolation(t *testing.T) {
	s := newSup(t, Config{RestartBackoff: 10 * time.Millisecond})
	ctx := ctxT(t)
	victim := fixture(t, "iso.victim", "sleep.wasm")
	victim.Limits.Timeout = 10 * time.Second
	others := []Target{fixture(t, "iso.b", "echo.wasm"), fixture(t, "iso.c", "echo.wasm"), fixture(t, "iso.d", "echo.wasm")}
	for _, o := range others {
		if _, err := s.Call(ctx, o, "t", []byte(`{}`), CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var otherErrs []error
	calls := 0
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := others[i%3]
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := s.Call(ctx, o, "t", []byte(`{"n":1}`), CallOptions{})
				mu.Lock()
				calls++
				if err != nil {
					otherErrs = append(otherErrs, err)
				}
				mu.Unlock()
			}
		}()
	}
	victimErrs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := s.Call(ctx, victim, "t", nil, CallOptions{})
			victimErrs <- err
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.State("iso.victim", "1.0.0").InFlight < 2 || s.State("iso.victim", "1.0.0").PID == 0 {
		if time.Now().After(deadline) {
			t.Fatal("victim calls never in flight")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	vpid := s.State("iso.victim", "1.0.0").PID
	syscall.Kill(vpid, syscall.SIGKILL)
	for range 2 {
		if err := <-victimErrs; errcode.Of(err) != "sidecar_crashed" {
			t.Errorf("victim: %v", err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	if len(otherErrs) > 0 || calls == 0 {
		t.Errorf("other skills: %d calls, errors %v", calls, otherErrs)
	}
	answer := fixture(t, "iso.victim", "echo.wasm")
	answer.Limits = victim.Limits
	if _, err := s.Call(ctx, answer, "t", []byte(`{}`), CallOptions{}); err != nil {
		t.Errorf("victim after restart: %v", err)
	}
}

func TestCrashLoop(t *testing.T) {
	s := newSup(t, Config{RestartBackoff: time.Millisecond, MaxRestartBackoff: 5 * time.Millisecond, CrashLoopThreshold: 3, CrashLoopWindow: time.Minute})
	ctx := ctxT(t)
	tg := fixture(t, "loop.crash", "sleep.wasm")
	tg.Limits.Timeout = 10 * time.Second
	var pids []int
	for i := range 3 {
		errc := make(chan error, 1)
		go func() {
			_, err := s.Call(ctx, tg, "t", nil, CallOptions{})
			errc <- err
		}()
		var pid int
		deadline := time.Now().Add(10 * time.Second)
		for {
			st := s.State("loop.crash", "1.0.0")
			if st.InFlight == 1 && st.PID != 0 {
				pid = st.PID
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: never running", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		pids = append(pids, pid)
		syscall.Kill(pid, syscall.SIGKILL)
		if err := <-errc; !errors.Is(err, ErrSidecarCrashed) {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	st := s.State("loop.crash", "1.0.0")
	if st.Status != StatusCrashLooping || st.Crashes != 3 {
		t.Errorf("state %+v", st)
	}
	start := time.Now()
	_, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	if !errors.Is(err, ErrCrashLooping) || errcode.Of(err) != "crashlooping" || time.Since(start) > time.Second {
		t.Errorf("call while crashlooping: %v after %v", err, time.Since(start))
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d alive", pid)
		}
	}
	s.Reset("loop.crash", "")
	tg2 := fixture(t, "loop.crash", "echo.wasm")
	if _, err := s.Call(ctx, tg2, "t", []byte(`{}`), CallOptions{}); err != nil {
		t.Errorf("after Reset: %v", err)
	}
	if st := s.State("loop.crash", "1.0.0"); st.Status != StatusRunning {
		t.Errorf("after Reset: %+v", st)
	}
}

func TestTimeoutInsideSidecar(t *testing.T) {
	s := newSup(t, Config{})
	ctx := ctxT(t)
	tg := fixture(t, "t.loop", "loop.wasm")
	tg.Limits = Limits{Fuel: 1 << 50, Timeout: 100 * time.Millisecond}
	res, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("loop: %v", err)
	}
	if res == nil || res.Stats.WallTime <= 0 {
		t.Errorf("no stats: %+v", res)
	}
	// The sidecar answered: it is still the same, running.
	if st := s.State("t.loop", "1.0.0"); st.Status != StatusRunning || st.Crashes != 0 {
		t.Errorf("state %+v", st)
	}
	// A context deadline shorter than the limit is the budget.
	tg2 := fixture(t, "t.sleep", "sleep.wasm")
	cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.Call(cctx, tg2, "t", nil, CallOptions{})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("ctx deadline: %v after %v", err, time.Since(start))
	}
}

func TestTimeoutKillsStuckSidecar(t *testing.T) {
	// No spare nor standby sidecar: the test checks that no sidecar child
	// is left.
	s := newSup(t, Config{CallGrace: 100 * time.Millisecond, SpareSidecars: -1, Standby: -1})
	// The sidecar is told 30 s more than the supervisor's budget, so it
	// does not answer in time: the supervisor kills it.
	s.cfg.sidecarTimeoutExtra = 30 * time.Second
	ctx := ctxT(t)
	tg := fixture(t, "t.stuck", "sleep.wasm")
	tg.Limits.Timeout = 200 * time.Millisecond
	start := time.Now()
	_, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("stuck call: %v", err)
	}
	if took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	st := s.State("t.stuck", "1.0.0")
	if st.Status != StatusStopped || st.Crashes != 0 || !strings.Contains(st.LastError, "killed") {
		t.Errorf("state %+v", st)
	}
	if left := sidecarChildren(); len(left) > 0 {
		t.Errorf("sidecar children left: %v", left)
	}
}

func TestOverloaded(t *testing.T) {
	s := newSup(t, Config{MaxConcurrentCalls: 1, QueueDepth: 1})
	ctx := ctxT(t)
	tg := fixture(t, "t.busy", "sleep.wasm")
	tg.Limits.Timeout = 10 * time.Second
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Call(cctx, tg, "t", nil, CallOptions{})
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.State("t.busy", "1.0.0")
		if st.InFlight == 1 && st.Queued == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never busy: %+v", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	if !errors.Is(err, ErrOverloaded) || errcode.Of(err) != "overloaded" {
		t.Errorf("third call: %v", err)
	}
	cancel()
	wg.Wait()
}

func TestIdleReaper(t *testing.T) {
	s := newSup(t, Config{IdleTimeout: 100 * time.Millisecond})
	ctx := ctxT(t)
	tg := fixture(t, "t.idle", "echo.wasm")
	res, err := s.Call(ctx, tg, "t", []byte(`{}`), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.State("t.idle", "1.0.0").Status != StatusStopped {
		if time.Now().After(deadline) {
			t.Fatalf("idle sidecar not stopped: %+v", s.State("t.idle", "1.0.0"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for alive(res.PID) {
		if time.Now().After(deadline) {
			t.Fatalf("idle pid %d alive", res.PID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.Call(ctx, tg, "t", []byte(`{}`), CallOptions{}); err != nil {
		t.Errorf("call after idle stop: %v", err)
	}
}

func TestCloseWithCallsInFlight(t *testing.T) {
	s := newSup(t, Config{})
	ctx := ctxT(t)
	tg := fixture(t, "t.close", "sleep.wasm")
	tg.Limits.Timeout = 10 * time.Second
	errc := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, tg, "t", nil, CallOptions{})
		errc <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for st := s.State("t.close", "1.0.0"); st.InFlight == 0 || st.PID == 0; st = s.State("t.close", "1.0.0") {
		if time.Now().After(deadline) {
			t.Fatal("never in flight")
		}
		time.Sleep(5 * time.Millisecond)
	}
	pid := s.State("t.close", "1.0.0").PID
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	s.Close(cctx)
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("in-flight call across Close: %v", err)
	}
	if alive(pid) {
		t.Errorf("pid %d alive after Close", pid)
	}
	if _, err := s.Call(ctx, tg, "t", nil, CallOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v", err)
	}
}

func TestStartFailure(t *testing.T) {
	s := newSup(t, Config{RestartBackoff: time.Millisecond})
	ctx := ctxT(t)
	tg := fixture(t, "t.bad", "echo.wasm")
	tg.ModuleSHA256 = strings.Repeat("0", 64)
	_, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	if errcode.Of(err) != "module_hash_mismatch" {
		t.Errorf("bad hash: %v (code %s)", err, errcode.Of(err))
	}
	if _, err := New(Config{SidecarPath: "/nonexistent/palyra-sidecar"}); errcode.Of(err) != "sidecar_not_found" {
		t.Errorf("New with a missing binary: %v", err)
	}
}

// TestSupervisorKilled runs a supervisor in a child process, SIGKILLs it
// and checks that its sidecars die with it (Pdeathsig).
func TestSupervisorKilled(t *testing.T) {
	tg := fixture(t, "x", "answer.wasm")
	sockDir := shortDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PALYRA_SUPERVISOR_HELPER=1", "PALYRA_SIDECAR_BIN="+binPath,
		"PALYRA_ANSWER_WASM="+tg.ModulePath, "PALYRA_SOCKET_DIR="+sockDir, "TMPDIR="+sockDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(stdout)
	ready := make(chan error, 1)
	go func() {
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "PID "):
				pid, _ := strconv.Atoi(strings.TrimPrefix(line, "PID "))
				pids = append(pids, pid)
			case line == "READY":
				ready <- nil
				return
			case strings.HasPrefix(line, "ERR"):
				ready <- errors.New(line)
				return
			}
		}
		ready <- errors.New("helper ended early")
	}()
	select {
	case err := <-ready:
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("helper not ready")
	}
	if len(pids) != 2 || !alive(pids[0]) || !alive(pids[1]) {
		t.Fatalf("sidecar pids %v", pids)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("sidecar pid %d alive 5 s after its supervisor was SIGKILLed", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestHealthCheckKillsUnresponsive stops (SIGSTOP) an idle sidecar: its
// health check times out, it is killed and counted as a crash, and the
// next call runs in a fresh one.
func TestHealthCheckKillsUnresponsive(t *testing.T) {
	// No spare nor standby: their starts would compete with the 200 ms
	// health checks of the one sidecar under test.
	s := newSup(t, Config{HealthInterval: 50 * time.Millisecond, HealthTimeout: 200 * time.Millisecond, RestartBackoff: time.Millisecond,
		SpareSidecars: -1, Standby: -1})
	ctx := ctxT(t)
	tg := fixture(t, "health.answer", "answer.wasm")
	tg.Entrypoint = "answer"
	res, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A healthy idle sidecar survives several checks.
	time.Sleep(300 * time.Millisecond)
	if st := s.State(tg.SkillID, tg.Version); st.PID != res.PID || st.Crashes != 0 {
		t.Fatalf("healthy sidecar disturbed: %+v", st)
	}
	if err := syscall.Kill(res.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.State(tg.SkillID, tg.Version)
		if st.Crashes == 1 && st.PID == 0 {
			if !strings.Contains(st.LastError, "health check") {
				t.Errorf("last error %q", st.LastError)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stopped sidecar was not killed: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitGone(t, res.PID, "stopped sidecar")
	res2, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	if err != nil || res2.PID == res.PID {
		t.Errorf("call after the kill: %v (pid %v)", err, res2)
	}
}

// TestStartEager starts a sidecar without a call; the first call uses it.
func TestStartEager(t *testing.T) {
	s := newSup(t, Config{HealthInterval: -1})
	ctx := ctxT(t)
	tg := fixture(t, "eager.answer", "answer.wasm")
	tg.Entrypoint = "answer"
	if err := s.Start(ctx, tg); err != nil {
		t.Fatal(err)
	}
	st := s.State(tg.SkillID, tg.Version)
	if st.Status != StatusRunning || st.PID == 0 {
		t.Fatalf("state after Start: %+v", st)
	}
	if err := s.Start(ctx, tg); err != nil || s.State(tg.SkillID, tg.Version).PID != st.PID {
		t.Errorf("second Start: %v", err)
	}
	res, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	if err != nil || res.PID != st.PID {
		t.Errorf("call: %v, pid %v want %d", err, res, st.PID)
	}
	if err := s.Start(ctx, Target{}); err == nil {
		t.Error("Start of an empty target succeeded")
	}
}
