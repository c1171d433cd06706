package supervisor

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeClock is a Clock that moves only when the test advances it. Every
// NewTimer is reported on made, so a test knows when a start waits for its
// backoff, and for how long.
type fakeClock struct {
	made chan time.Duration

	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

func newFakeClock() *fakeClock {
	return &fakeClock{made: make(chan time.Duration, 64), now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

type fakeTimer struct {
	c    chan time.Time
	at   time.Time
	fc   *fakeClock
	done bool // fired or stopped
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	t := &fakeTimer{c: make(chan time.Time, 1), at: f.now.Add(d), fc: f}
	f.timers = append(f.timers, t)
	f.mu.Unlock()
	f.made <- d
	return t
}

// Advance moves the clock by d and fires the timers due.
func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	keep := f.timers[:0]
	for _, t := range f.timers {
		if !t.done && !t.at.After(f.now) {
			t.done = true
			t.c <- f.now
		} else if !t.done {
			keep = append(keep, t)
		}
	}
	f.timers = keep
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.fc.mu.Lock()
	defer t.fc.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// failingTarget is a target whose sidecar is the fake one, which fails
// every start without a handshake: each call is a crash, and a cheap one.
func failingTarget(t *testing.T, skillID string) Target {
	t.Helper()
	return Target{SkillID: skillID, Version: "1", ModulePath: filepath.Join(t.TempDir(), "m.wasm"), ModuleSHA256: "00"}
}

// waitTimer returns the duration of the next timer made on fc.
func waitTimer(t *testing.T, fc *fakeClock) time.Duration {
	t.Helper()
	select {
	case d := <-fc.made:
		return d
	case <-time.After(30 * time.Second):
		t.Fatal("no start waited for a backoff")
		return 0
	}
}

// TestBackoffGrowsAndCaps drives restart backoff with a fake clock: the
// start after a first crash waits for nothing (it makes no timer); from the
// second consecutive crash each failed start doubles the wait before the
// next one (from RestartBackoff), up to MaxRestartBackoff, and the next
// start waits for exactly that on the clock.
func TestBackoffGrowsAndCaps(t *testing.T) {
	fc := newFakeClock()
	s := newSup(t, Config{SidecarPath: fakePath, Clock: fc, RestartBackoff: 100 * time.Millisecond, MaxRestartBackoff: 800 * time.Millisecond,
		CrashLoopThreshold: 100, HealthInterval: -1, IdleTimeout: -1})
	ctx := ctxT(t)
	tg := failingTarget(t, "backoff.grow")
	// waits[i] is what start i+1 waits for after i consecutive crashes.
	waits := []time.Duration{0, 0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 800 * time.Millisecond}
	for i, want := range waits {
		errc := make(chan error, 1)
		go func() {
			_, err := s.Call(ctx, tg, "t", nil, CallOptions{})
			errc <- err
		}()
		var err error
		if want > 0 {
			if got := waitTimer(t, fc); got != want {
				t.Errorf("start %d waited %v, want %v", i+1, got, want)
			}
			if st := s.State(tg.SkillID, tg.Version); st.Status != StatusStarting || st.Crashes != i {
				t.Errorf("start %d while waiting: %+v", i+1, st)
			}
			fc.Advance(want)
			err = <-errc
		} else {
			// No wait: the start must not make a timer (it would block on
			// the fake clock, which does not move here).
			select {
			case d := <-fc.made:
				t.Fatalf("start %d (after %d crashes) waited %v on the clock, want no wait", i+1, i, d)
			case err = <-errc:
			}
		}
		if !errors.Is(err, ErrSidecarStart) {
			t.Fatalf("start %d: %v", i+1, err)
		}
		if st := s.State(tg.SkillID, tg.Version); st.Crashes != i+1 || st.Status != StatusStopped {
			t.Fatalf("after start %d: %+v", i+1, st)
		}
	}
	select {
	case d := <-fc.made:
		t.Errorf("an extra timer of %v", d)
	default:
	}
}

// TestCrashLoopWindow drives crash-loop marking with a fake clock: a skill
// version is crashlooping once CrashLoopThreshold crashes fall within
// CrashLoopWindow, and crashes older than the window no longer count.
func TestCrashLoopWindow(t *testing.T) {
	const window = time.Minute
	tests := []struct {
		name string
		// gaps are the clock's moves before each crash.
		gaps    []time.Duration
		looping []bool
	}{
		{"three crashes within the window", []time.Duration{0, 10 * time.Second, 10 * time.Second}, []bool{false, false, true}},
		{"the window slides past the first crash", []time.Duration{0, 40 * time.Second, 40 * time.Second, 10 * time.Second}, []bool{false, false, false, true}},
		{"crashes spread wider than the window", []time.Duration{0, 31 * time.Second, 31 * time.Second, 31 * time.Second, 31 * time.Second}, []bool{false, false, false, false, false}},
		{"a crash exactly one window old is out", []time.Duration{0, 30 * time.Second, 30 * time.Second}, []bool{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := newFakeClock()
			s := newSup(t, Config{SidecarPath: fakePath, Clock: fc, RestartBackoff: time.Millisecond, MaxRestartBackoff: time.Millisecond,
				CrashLoopThreshold: 3, CrashLoopWindow: window, HealthInterval: -1, IdleTimeout: -1})
			ctx := ctxT(t)
			tg := failingTarget(t, "loop.window")
			for i, gap := range tt.gaps {
				fc.Advance(gap) // every gap is past the 1 ms backoff: no start waits
				if _, err := s.Call(ctx, tg, "t", nil, CallOptions{}); !errors.Is(err, ErrSidecarStart) {
					t.Fatalf("crash %d: %v", i+1, err)
				}
				st := s.State(tg.SkillID, tg.Version)
				if got := st.Status == StatusCrashLooping; got != tt.looping[i] {
					t.Fatalf("after crash %d: %+v, want crashlooping %v", i+1, st, tt.looping[i])
				}
			}
			if !tt.looping[len(tt.looping)-1] {
				return
			}
			// Crashlooping: refused at once, with no start (no new crash).
			if _, err := s.Call(ctx, tg, "t", nil, CallOptions{}); !errors.Is(err, ErrCrashLooping) {
				t.Errorf("call while crashlooping: %v", err)
			}
			if err := s.Start(ctx, tg); !errors.Is(err, ErrCrashLooping) {
				t.Errorf("Start while crashlooping: %v", err)
			}
			if st := s.State(tg.SkillID, tg.Version); st.Crashes != len(tt.gaps) {
				t.Errorf("crashes after refusals: %+v", st)
			}
			// Reset clears the history: the next call starts again.
			s.Reset(tg.SkillID, "")
			if _, err := s.Call(ctx, tg, "t", nil, CallOptions{}); !errors.Is(err, ErrSidecarStart) {
				t.Errorf("call after Reset: %v", err)
			}
			if st := s.State(tg.SkillID, tg.Version); st.Status != StatusStopped || st.Crashes != len(tt.gaps)+1 {
				t.Errorf("after Reset and a crash: %+v", st)
			}
		})
	}
}

// TestBackoffWaitEndsWithClose checks that a start waiting for its backoff
// gives up when the supervisor closes, without the clock moving.
func TestBackoffWaitEndsWithClose(t *testing.T) {
	fc := newFakeClock()
	s := newSup(t, Config{SidecarPath: fakePath, Clock: fc, RestartBackoff: time.Hour, HealthInterval: -1, IdleTimeout: -1})
	ctx := ctxT(t)
	tg := failingTarget(t, "backoff.close")
	// Two consecutive crashes: the first restart is immediate, the next
	// one waits.
	for range 2 {
		if _, err := s.Call(ctx, tg, "t", nil, CallOptions{}); !errors.Is(err, ErrSidecarStart) {
			t.Fatal(err)
		}
	}
	errc := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, tg, "t", nil, CallOptions{})
		errc <- err
	}()
	if d := waitTimer(t, fc); d != time.Hour {
		t.Errorf("waited %v", d)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("waiting call across Close: %v", err)
	}
}

// TestKilledSidecarRestartsAtOnce kills a working sidecar several times
// with a fake clock that never moves: each time the next call starts a new
// sidecar without waiting on the clock (no timer is made) and is served by
// it, because a good call resets the count of consecutive crashes and the
// first restart after a crash is immediate.
func TestKilledSidecarRestartsAtOnce(t *testing.T) {
	fc := newFakeClock()
	s := newSup(t, Config{Clock: fc, RestartBackoff: time.Hour, MaxRestartBackoff: time.Hour,
		CrashLoopThreshold: 100, HealthInterval: -1, IdleTimeout: -1})
	ctx := ctxT(t)
	tg := fixture(t, "restart.atonce", "answer.wasm")
	tg.Entrypoint = "answer"
	res, err := s.Call(ctx, tg, "t", nil, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for kill := 1; kill <= 3; kill++ {
		old := res.PID
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, old, "killed sidecar")
		// The first call may still find the dead sidecar and fail with
		// sidecar_crashed; the one after it is served by a new sidecar.
		res = nil
		for attempt := 0; res == nil && attempt < 2; attempt++ {
			type outcome struct {
				res *Result
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				r, err := s.Call(ctx, tg, "t", nil, CallOptions{})
				done <- outcome{r, err}
			}()
			select {
			case d := <-fc.made:
				t.Fatalf("kill %d: the restart waited %v on the clock", kill, d)
			case o := <-done:
				switch {
				case o.err == nil:
					res = o.res
				case errors.Is(o.err, ErrSidecarCrashed) && attempt == 0:
				default:
					t.Fatalf("kill %d, call %d: %v", kill, attempt+1, o.err)
				}
			}
		}
		if res == nil {
			t.Fatalf("kill %d: no call served", kill)
		}
		if res.PID == old || res.PID == 0 {
			t.Fatalf("kill %d: served by pid %d (killed %d)", kill, res.PID, old)
		}
		if st := s.State(tg.SkillID, tg.Version); st.Crashes != kill || st.Restarts != kill || st.Status != StatusRunning {
			t.Fatalf("kill %d: %+v", kill, st)
		}
	}
}
