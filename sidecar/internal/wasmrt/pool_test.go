package wasmrt_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// waitFor polls cond until it holds, failing after 20 s (a bound on a hang,
// not a timing assertion).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPoolSizing checks how the pool of prepared instances follows the
// calls: one instance after Load, one more per call that finds the pool
// empty (up to PreparedInstances), and back to IdlePreparedInstances after
// PrepareIdle without a call. Misses are made deterministic by holding the
// preparer in its hook before its first preparation.
func TestPoolSizing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cfg        wasmrt.ModuleConfig
		misses     int // calls made while preparation is held back
		wantGrown  int // target after the misses
		wantIdle   int // target and ready instances after PrepareIdle (-1: no idle check)
		nextServed bool
	}{
		{"no misses: one instance", wasmrt.ModuleConfig{PreparedInstances: 4, PrepareIdle: -1}, 0, 1, -1, true},
		{"each miss adds one", wasmrt.ModuleConfig{PreparedInstances: 4, PrepareIdle: -1}, 2, 3, -1, true},
		{"capped at PreparedInstances", wasmrt.ModuleConfig{PreparedInstances: 2, PrepareIdle: -1}, 5, 2, -1, true},
		{"idle keeps one", wasmrt.ModuleConfig{PreparedInstances: 4, PrepareIdle: 20 * time.Millisecond}, 3, 4, 1, true},
		{"idle keeps two", wasmrt.ModuleConfig{PreparedInstances: 4, IdlePreparedInstances: 2, PrepareIdle: 20 * time.Millisecond}, 3, 4, 2, true},
		{"idle keeps none", wasmrt.ModuleConfig{PreparedInstances: 3, IdlePreparedInstances: -1, PrepareIdle: 20 * time.Millisecond}, 2, 3, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entered, release, restore := holdPreparer(1)
			e := newEngine(t, wasmrt.Config{})
			m := loadFixture(t, e, "reactor", tc.cfg)
			defer restore()
			defer m.Close()
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			defer unblock()
			<-entered
			if got := m.PreparedTarget(); got != 1 {
				t.Fatalf("target %d after Load, want 1", got)
			}
			for range tc.misses {
				if res := mustInvoke(t, m, wasmrt.Invocation{}); res.Stats.Prepared {
					t.Fatal("a call was served prepared while preparation is held back")
				}
			}
			if got := m.PreparedTarget(); got != tc.wantGrown {
				t.Fatalf("target %d after %d misses, want %d", got, tc.misses, tc.wantGrown)
			}
			unblock()
			if tc.wantIdle < 0 {
				waitReady(t, m, tc.wantGrown)
			} else {
				waitFor(t, "pool shrunk to the idle target", func() bool {
					return m.PreparedTarget() == tc.wantIdle && m.ReadyInstances() == tc.wantIdle
				})
			}
			if n, target := m.ReadyInstances(), m.PreparedTarget(); n > target {
				t.Fatalf("%d ready instances over the target %d", n, target)
			}
			if res := mustInvoke(t, m, wasmrt.Invocation{}); res.Stats.Prepared != tc.nextServed {
				t.Fatalf("next call prepared=%v, want %v", res.Stats.Prepared, tc.nextServed)
			}
			if !tc.nextServed {
				// The miss brings preparation back.
				waitReady(t, m, 1)
			}
		})
	}
}

// TestPoolHammer runs calls from 8 goroutines in bursts and pauses against
// a pool that grows on misses and shrinks after 1 ms idle, with a store
// limit changing under it, then closes the module while the preparer may
// still be refilling or shrinking. Run it with -race.
func TestPoolHammer(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: 4, PrepareIdle: time.Millisecond})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				inv := wasmrt.Invocation{}
				if (g+i)%7 == 0 {
					inv.Limits.MemoryBytes = 1 << 20
				}
				res, err := m.Invoke(t.Context(), inv)
				if err != nil || string(res.Output) != "true" {
					t.Errorf("err = %v output %s", err, res.Output)
					return
				}
				if n := m.ReadyInstances(); n > 4 {
					t.Errorf("%d ready instances, capacity 4", n)
					return
				}
				if i%10 == 9 {
					time.Sleep(2 * time.Millisecond) // let the pool shrink
				}
			}
		}()
	}
	wg.Wait()
	if target := m.PreparedTarget(); target < 0 || target > 4 {
		t.Fatalf("target %d outside [0, 4]", target)
	}
	_ = m.Close()
}

// TestPoolFollowsCallRate: calls that would wake the preparer more often
// than once a millisecond grow the pool (the call rate's share of its
// target), so that one wake serves a batch of calls: a call that leaves
// the pool above a quarter of its target does not wake the preparer, the
// call that brings it there does, and the wake refills the whole batch.
// Calls that come slowly shrink the rate's share back to nothing. Each
// call of the first part waits for a prepared instance, so none misses
// and the growth is the rate's alone; nothing is timed.
func TestPoolFollowsCallRate(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: 8, PrepareIdle: -1})
	deadline := time.Now().Add(20 * time.Second)
	for m.PreparedTarget() < 4 {
		for m.ReadyInstances() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("after 20 s: target %d, no instance prepared", m.PreparedTarget())
			}
			runtime.Gosched()
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s of calls back to back: target %d, want 4 or more", m.PreparedTarget())
		}
		if res := mustInvoke(t, m, wasmrt.Invocation{}); !res.Stats.Prepared {
			t.Fatal("a call found a prepared instance ready and was not served it")
		}
	}
	if want, batch := wasmrt.PoolShares(m); want != 1 || batch < 3 {
		t.Fatalf("calls' share %d, rate's %d; want 1 and 3 or more", want, batch)
	}
	// The pool is refilled only once it is down to a quarter of its
	// target: call until a call wakes the preparer, which then fills it.
	wakes := wasmrt.RefillWakes(m)
	for wasmrt.RefillWakes(m) == wakes && !wasmrt.RefillPending(m) {
		mustInvoke(t, m, wasmrt.Invocation{})
	}
	full := func() bool { return !wasmrt.RefillPending(m) && m.ReadyInstances() == m.PreparedTarget() }
	waitFor(t, "the pool refilled to its target", full)
	target := m.PreparedTarget()

	// Down to the low-water mark, a call leaves the preparer asleep.
	low := target / 4
	wakes = wasmrt.RefillWakes(m)
	for ready := target - 1; ready > low; ready-- {
		if res := mustInvoke(t, m, wasmrt.Invocation{}); !res.Stats.Prepared {
			t.Fatal("a call above the low-water mark was not served a prepared instance")
		}
		if wasmrt.RefillPending(m) || wasmrt.RefillWakes(m) != wakes {
			t.Fatalf("a call that left %d of %d prepared instances woke the preparer", ready, target)
		}
		if n := m.ReadyInstances(); n != ready {
			t.Fatalf("%d prepared instances after a call, want %d (no refill yet)", n, ready)
		}
	}
	// The call that reaches it wakes the preparer, which refills the batch.
	mustInvoke(t, m, wasmrt.Invocation{})
	waitFor(t, "the preparer woken at the low-water mark", func() bool { return wasmrt.RefillWakes(m) > wakes })
	waitFor(t, "the batch refilled", full)

	// Slow calls: each wake comes over 4 ms after the previous one and
	// takes one off the rate's share.
	waitFor(t, "the call rate's share back to 0 under slow calls", func() bool {
		mustInvoke(t, m, wasmrt.Invocation{})
		time.Sleep(10 * time.Millisecond)
		_, batch := wasmrt.PoolShares(m)
		return batch == 0
	})
	if want, _ := wasmrt.PoolShares(m); m.PreparedTarget() != want {
		t.Fatalf("target %d, want the calls' share %d alone", m.PreparedTarget(), want)
	}
}
