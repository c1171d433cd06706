package supervisor

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
)

// TestHammer runs calls from many goroutines against real sidecars while
// other goroutines SIGKILL those sidecars, Stop them and Reset their crash
// history; bounded in time and count. It checks that every call ends with
// success or one of the codes these events explain, that the supervisor
// stays usable, and (with the cleanup of newSup, goleak and -race) that
// after Close no goroutine, child process or private directory is left and
// every pid the hammer saw is gone.
func TestHammer(t *testing.T) {
	const (
		callers        = 8
		callsPerCaller = 150
		runFor         = 3 * time.Second
	)
	s := newSup(t, Config{RestartBackoff: 5 * time.Millisecond, MaxRestartBackoff: 50 * time.Millisecond, HealthInterval: -1, IdleTimeout: -1})
	ctx := ctxT(t)
	targets := []Target{fixture(t, "hammer.a", "echo.wasm"), fixture(t, "hammer.b", "echo.wasm"), fixture(t, "hammer.c", "echo.wasm")}
	allowed := map[string]bool{
		"":                     true, // success
		"sidecar_crashed":      true, // killed during the call
		"sidecar_start_failed": true, // killed during its start
		"crashlooping":         true, // killed too often; Reset clears it
		"sidecar_stopping":     true, // stopped twice while the call was retried
	}

	var mu sync.Mutex
	pids := map[int]bool{}
	codes := map[string]int{}
	see := func(pid int) {
		if pid > 0 {
			mu.Lock()
			pids[pid] = true
			mu.Unlock()
		}
	}
	stop := make(chan struct{})
	deadline := time.AfterFunc(runFor, func() { close(stop) })
	defer deadline.Stop()
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}

	var callWG, chaosWG sync.WaitGroup
	for i := range callers {
		callWG.Add(1)
		go func() {
			defer callWG.Done()
			for n := 0; n < callsPerCaller && !stopped(); n++ {
				tg := targets[(i+n)%len(targets)]
				res, err := s.Call(ctx, tg, "t", []byte(`{"n":1}`), CallOptions{})
				if res != nil {
					see(res.PID)
				}
				code := errcode.Of(err)
				mu.Lock()
				codes[code]++
				mu.Unlock()
				if !allowed[code] {
					t.Errorf("call of %s: %v (code %s)", tg.SkillID, err, code)
				}
			}
		}()
	}
	chaos := func(every time.Duration, act func(tg Target)) {
		chaosWG.Add(1)
		go func() {
			defer chaosWG.Done()
			tk := time.NewTicker(every)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
				}
				act(targets[rand.IntN(len(targets))])
			}
		}()
	}
	kills := 0
	killed := map[int]bool{}
	kill := func(pid int) {
		see(pid)
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			mu.Lock()
			kills++
			killed[pid] = true
			mu.Unlock()
		}
	}
	// One killer aims at running sidecars, one at any sidecar child,
	// which may be starting.
	chaos(15*time.Millisecond, func(tg Target) {
		if pid := s.State(tg.SkillID, tg.Version).PID; pid > 0 {
			kill(pid)
		}
	})
	chaos(100*time.Millisecond, func(Target) {
		if pids := sidecarChildren(); len(pids) > 0 {
			kill(pids[rand.IntN(len(pids))])
		}
	})
	chaos(40*time.Millisecond, func(tg Target) { s.Stop(context.Background(), tg.SkillID, tg.Version) })
	chaos(25*time.Millisecond, func(tg Target) { s.Reset(tg.SkillID, "") })

	callWG.Wait()
	deadline.Stop()
	if !stopped() {
		close(stop)
	}
	chaosWG.Wait()

	// The supervisor still works once the chaos is over. Let it reap what
	// the killers hit (a pid gone from the process table was waited for);
	// a sidecar they hit just before they stopped may still not be known
	// dead when a call reaches it, so that call may fail as
	// sidecar_crashed, and the one after it must work.
	mu.Lock()
	for pid := range killed {
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	mu.Unlock()
	for _, tg := range targets {
		s.Reset(tg.SkillID, "")
		res, err := s.Call(ctx, tg, "t", []byte(`{}`), CallOptions{})
		if errors.Is(err, ErrSidecarCrashed) {
			t.Logf("call of %s right after the hammer: %v; calling again", tg.SkillID, err)
			res, err = s.Call(ctx, tg, "t", []byte(`{}`), CallOptions{})
		}
		if err != nil {
			t.Errorf("call of %s after the hammer: %v", tg.SkillID, err)
			continue
		}
		see(res.PID)
	}
	mu.Lock()
	t.Logf("codes %v, %d kills, %d sidecars", codes, kills, len(pids))
	if codes[""] == 0 || kills == 0 {
		t.Errorf("the hammer did not hammer: codes %v, %d kills", codes, kills)
	}
	seen := make([]int, 0, len(pids))
	for pid := range pids {
		seen = append(seen, pid)
	}
	mu.Unlock()

	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range seen {
		if alive(pid) {
			t.Errorf("sidecar pid %d alive after Close", pid)
		}
	}
	if left := sidecarChildren(); len(left) > 0 {
		t.Errorf("sidecar children left after Close: %v", left)
	}
}
