package supervisor

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// standbyPID returns the pid of the standby of a skill version as States
// reports it, 0 when there is none.
func standbyPID(s *Supervisor, tg Target) int {
	for _, st := range s.States() {
		if st.SkillID == tg.SkillID && st.Version == tg.Version {
			return st.StandbyPID
		}
	}
	return 0
}

// waitStandby waits up to 30 s for a standby of tg other than not and
// returns its pid.
func waitStandby(t *testing.T, s *Supervisor, tg Target, not int) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if pid := standbyPID(s, tg); pid != 0 && pid != not {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no standby of %s within 30 s", tg.SkillID)
		}
	}
}

// callInUse calls tg twice, so that the second call, which finds its
// sidecar running, puts the version in use (it gets a standby), and
// returns the serving pid.
func callInUse(t *testing.T, s *Supervisor, tg Target) int {
	t.Helper()
	first := callServed(t, s, tg)
	if pid := callServed(t, s, tg); pid != first {
		t.Fatalf("the second call was served by pid %d, the first by %d", pid, first)
	}
	return first
}

// callServed calls tg until a call succeeds, allowing one sidecar_crashed
// (the call that finds the killed sidecar), and returns the serving pid.
func callServed(t *testing.T, s *Supervisor, tg Target) int {
	t.Helper()
	for attempt := 0; ; attempt++ {
		res, err := s.Call(ctxT(t), tg, "t", nil, CallOptions{})
		if err == nil {
			return res.PID
		}
		if attempt > 0 || !errors.Is(err, ErrSidecarCrashed) {
			t.Fatalf("call %d: %v", attempt+1, err)
		}
	}
}

// TestStandby checks the standby sidecar of a running skill version: made
// after the start, promoted when the serving sidecar is killed (the next
// call is served by the standby's pid, the kill counts as a crash and a
// restart), replaced by a new one; a changed module retires it; Stop and
// idleness end it; with Standby negative none is made.
func TestStandby(t *testing.T) {
	tg := fixture(t, "standby.a", "answer.wasm")
	tg.Entrypoint = "answer"

	t.Run("promoted on a crash and replaced", func(t *testing.T) {
		s := newSup(t, Config{HealthInterval: -1, IdleTimeout: -1, CrashLoopThreshold: 100})
		serving := callInUse(t, s, tg)
		for kill := 1; kill <= 3; kill++ {
			sb := waitStandby(t, s, tg, 0)
			if sb == serving {
				t.Fatalf("the standby is the serving sidecar %d", sb)
			}
			if err := syscall.Kill(serving, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitGone(t, serving, "killed sidecar")
			got := callServed(t, s, tg)
			if got != sb {
				t.Fatalf("kill %d: served by pid %d, want the standby %d", kill, got, sb)
			}
			if st := s.State(tg.SkillID, tg.Version); st.Crashes != kill || st.Restarts != kill || st.PID != sb {
				t.Fatalf("kill %d: %+v", kill, st)
			}
			if next := waitStandby(t, s, tg, sb); next == serving {
				t.Fatalf("kill %d: the killed sidecar is the new standby", kill)
			}
			serving = sb
		}
	})

	t.Run("a changed module retires it", func(t *testing.T) {
		s := newSup(t, Config{HealthInterval: -1, IdleTimeout: -1})
		callInUse(t, s, tg)
		old := waitStandby(t, s, tg, 0)
		tg2 := tg
		tg2.Limits.Fuel = 1 << 30 // another load key
		if got := callServed(t, s, tg2); got == old {
			t.Fatalf("the changed target was served by the old standby %d", got)
		}
		waitGone(t, old, "old standby")
		waitStandby(t, s, tg2, old)
	})

	t.Run("Stop ends it", func(t *testing.T) {
		s := newSup(t, Config{HealthInterval: -1, IdleTimeout: -1})
		serving := callInUse(t, s, tg)
		sb := waitStandby(t, s, tg, 0)
		s.Stop(context.Background(), tg.SkillID, tg.Version)
		waitGone(t, serving, "stopped sidecar")
		waitGone(t, sb, "standby of a stopped skill")
	})

	t.Run("idleness ends it", func(t *testing.T) {
		// Idleness is measured on the fake clock: nothing is idle until
		// the test moves it, after the standby is there.
		fc := newFakeClock()
		s := newSup(t, Config{Clock: fc, HealthInterval: -1, IdleTimeout: 40 * time.Millisecond})
		serving := callInUse(t, s, tg)
		sb := waitStandby(t, s, tg, 0)
		fc.Advance(time.Second)
		waitGone(t, serving, "idle sidecar")
		waitGone(t, sb, "standby of an idle skill")
	})

	t.Run("made once the version is quiet, or a second after the call", func(t *testing.T) {
		// Before, the standby and the spare were spawned as soon as the
		// sidecar was up, taking the CPU from the call that waited for it.
		// A long call does not hold them back for its whole length.
		s := newSup(t, Config{HealthInterval: -1, IdleTimeout: -1})
		sl := fixture(t, "standby.sleep", "sleep.wasm")
		sl.Limits.Timeout = 8 * time.Second
		done := make(chan error, 2)
		sleep := func() {
			_, err := s.Call(ctxT(t), sl, "t", nil, CallOptions{})
			done <- err
		}
		go sleep()
		for deadline := time.Now().Add(30 * time.Second); s.State(sl.SkillID, sl.Version).Status != StatusRunning; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the sleeping call's sidecar did not start within 30 s")
			}
		}
		time.Sleep(150 * time.Millisecond)
		if kids, spares, sb := sidecarChildren(), s.ReadySpares(), standbyPID(s, sl); len(kids) != 1 || spares != 0 || sb != 0 {
			t.Errorf("during the first call: sidecar children %v, %d spares, standby %d; want only the serving one", kids, spares, sb)
		}
		waitSpare(t, s)
		// A second call finds the sidecar running: the version is in use.
		go sleep()
		time.Sleep(150 * time.Millisecond)
		if sb := standbyPID(s, sl); sb != 0 {
			t.Errorf("a standby %d 150 ms into the second call, want it a second after the call", sb)
		}
		waitStandby(t, s, sl, 0)
		select {
		case err := <-done:
			t.Fatalf("the standby came only after a long call ended (%v)", err)
		default:
		}
		for range 2 {
			if err := <-done; !errors.Is(err, ErrTimeout) {
				t.Fatalf("a sleeping call: %v, want its timeout", err)
			}
		}
	})

	t.Run("only for a version in use", func(t *testing.T) {
		// A version called once gets none; called again, Start, or a
		// crash puts it in use; idleness and Stop take that back.
		fc := newFakeClock()
		s := newSup(t, Config{Clock: fc, HealthInterval: -1, IdleTimeout: 40 * time.Millisecond})
		noStandby := func(when string) {
			t.Helper()
			// whenQuiet refills the spares, then begins the standby: with
			// the spare there, a standby would have been begun (being
			// made, or ready) too.
			waitSpare(t, s)
			time.Sleep(50 * time.Millisecond)
			s.mu.Lock()
			sl := s.sidecars[skey{tg.SkillID, tg.Version}]
			begun := sl != nil && (sl.standby != nil || sl.standbyStarting)
			s.mu.Unlock()
			if begun {
				t.Fatalf("%s: a standby was begun, want none", when)
			}
		}
		serving := callServed(t, s, tg)
		noStandby("called once")
		if got := callServed(t, s, tg); got != serving {
			t.Fatalf("the second call was served by %d, the first by %d", got, serving)
		}
		sb := waitStandby(t, s, tg, 0)

		fc.Advance(time.Second) // idle: both end, and the version is no longer in use
		waitGone(t, serving, "idle sidecar")
		waitGone(t, sb, "standby of an idle skill")
		serving = callServed(t, s, tg)
		noStandby("called once after going idle")

		s.Stop(ctxT(t), tg.SkillID, tg.Version)
		if err := s.Start(ctxT(t), tg); err != nil {
			t.Fatal(err)
		}
		sb = waitStandby(t, s, tg, 0)
		s.Stop(ctxT(t), tg.SkillID, tg.Version)
		waitGone(t, sb, "standby of a stopped skill")

		serving = callServed(t, s, tg)
		noStandby("called once after Stop")
		if err := syscall.Kill(serving, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, serving, "killed sidecar")
		if got := callServed(t, s, tg); got == serving {
			t.Fatalf("served by the killed sidecar %d", got)
		}
		waitStandby(t, s, tg, 0)
	})

	t.Run("off", func(t *testing.T) {
		s := newSup(t, Config{Standby: -1, SpareSidecars: -1, HealthInterval: -1, IdleTimeout: -1})
		callServed(t, s, tg)
		if pid := standbyPID(s, tg); pid != 0 {
			t.Errorf("a standby %d with Standby -1", pid)
		}
		if kids := sidecarChildren(); len(kids) != 1 {
			t.Errorf("sidecar children %v, want the serving one", kids)
		}
	})
}
