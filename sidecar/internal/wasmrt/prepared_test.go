package wasmrt_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

func waitReady(t testing.TB, m *wasmrt.Module, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for m.ReadyInstances() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d prepared instances after 20 s, want %d", m.ReadyInstances(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPreparedInstances(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: 2})
	fresh := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{})
	waitReady(t, m, 1) // one instance after Load; more once calls miss

	res := mustInvoke(t, m, wasmrt.Invocation{})
	if !res.Stats.Prepared || string(res.Output) != "true" {
		t.Fatalf("prepared=%v output %s", res.Stats.Prepared, res.Output)
	}
	ref := mustInvoke(t, fresh, wasmrt.Invocation{})
	if ref.Stats.Prepared {
		t.Fatal("a module without preparation reported a prepared instance")
	}
	// _initialize's fuel is not charged to the call: same fuel either way.
	if res.Stats.FuelConsumed != ref.Stats.FuelConsumed || res.Stats.InitFuelConsumed != ref.Stats.InitFuelConsumed {
		t.Fatalf("prepared stats %+v, fresh %+v", res.Stats, ref.Stats)
	}
	// Logs of a prepared _initialize are delivered with the call.
	if len(res.Logs) != 1 || res.Logs[0].Message != "init" {
		t.Fatalf("logs %+v", res.Logs)
	}
	// Every instance serves one call: the pool refills.
	waitReady(t, m, 1)
}

func TestPreparedLimitsMustMatch(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "memory_grow", wasmrt.ModuleConfig{PreparedInstances: 1})
	waitReady(t, m, 1)
	small := wasmrt.Invocation{Limits: wasmrt.Limits{MemoryBytes: 1 << 20}}
	res := mustInvoke(t, m, small)
	if res.Stats.Prepared {
		t.Fatal("an instance prepared with 64 MiB served a call limited to 1 MiB")
	}
	if got := exitCodeOf(t, res); got != 16 {
		t.Fatalf("%d pages under a 1 MiB limit", got)
	}
	// The preparer follows the limits calls use now.
	waitReady(t, m, 1)
	res = mustInvoke(t, m, small)
	if !res.Stats.Prepared || exitCodeOf(t, res) != 16 {
		t.Fatalf("prepared=%v exit %d", res.Stats.Prepared, exitCodeOf(t, res))
	}
}

func TestPreparedDeadlineIsReset(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	// The preparation deadline (10 ms) passes long before the call.
	m := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: 1, InitTimeout: 10 * time.Millisecond})
	waitReady(t, m, 1)
	time.Sleep(50 * time.Millisecond)
	res := mustInvoke(t, m, wasmrt.Invocation{})
	if !res.Stats.Prepared {
		t.Fatal("not prepared")
	}
	// And a prepared instance's call still gets its own, short, deadline.
	loop := loadFixture(t, e, "loop", wasmrt.ModuleConfig{PreparedInstances: 1, Limits: wasmrt.Limits{Fuel: 1 << 62}})
	waitReady(t, loop, 1)
	res, err := invoke(t, loop, wasmrt.Invocation{Timeout: 20 * time.Millisecond})
	if !errors.Is(err, wasmrt.ErrTimeout) || !res.Stats.Prepared {
		t.Fatalf("err = %v prepared=%v", err, res.Stats.Prepared)
	}
	if res.Stats.WallTime > 5*time.Second {
		t.Fatalf("prepared call ran %v", res.Stats.WallTime)
	}
}

func TestPreparedInitFailure(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "init_trap", wasmrt.ModuleConfig{PreparedInstances: 2})
	for range 5 {
		res, err := invoke(t, m, wasmrt.Invocation{})
		var te *wasmrt.TrapError
		if !errors.As(err, &te) || te.Code != "unreachable" {
			t.Fatalf("err = %v", err)
		}
		if res.Stats.Prepared {
			t.Fatal("a failed preparation served a call")
		}
		if len(res.Logs) != 1 || res.Logs[0].Message != "starting" {
			t.Fatalf("logs of the failed _initialize: %+v", res.Logs)
		}
	}
	if m.ReadyInstances() != 0 {
		t.Fatal("a failed instance is in the pool")
	}
}

func TestPreparedConcurrentCalls(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: 2})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				res, err := m.Invoke(t.Context(), wasmrt.Invocation{})
				if err != nil || string(res.Output) != "true" {
					t.Errorf("err = %v output %s", err, res.Output)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Close while the preparer is busy refilling: it must stop (goleak).
	_ = m.Close()
}

// TestFirstCallWhilePreparing holds the preparer back (a hook blocks it
// before its first preparation) and checks that calls are served at once,
// each by a fresh instance, while no instance is prepared; released, the
// preparer fills the pool and the next call is served prepared.
func TestFirstCallWhilePreparing(t *testing.T) {
	for _, name := range []string{"reactor", "go_guest"} {
		t.Run(name, func(t *testing.T) {
			entered, release, restore := holdPreparer(64)
			e := newEngine(t, wasmrt.Config{})
			var m *wasmrt.Module
			inv := wasmrt.Invocation{}
			if name == "go_guest" {
				m = load(t, e, goGuest(t), wasmrt.ModuleConfig{PreparedInstances: 2})
				inv.Input = op("echo")
			} else {
				m = loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: 2})
			}
			defer restore()
			defer m.Close()
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			defer unblock() // before Close, which waits for the preparer
			<-entered       // the preparer is blocked before its first instance
			for i := range 3 {
				res := mustInvoke(t, m, inv)
				if res.Stats.Prepared {
					t.Fatalf("call %d served by a prepared instance while preparation is blocked", i+1)
				}
				if n := m.ReadyInstances(); n != 0 {
					t.Fatalf("call %d: %d ready instances while preparation is blocked", i+1, n)
				}
			}
			unblock()
			waitReady(t, m, 2)
			if res := mustInvoke(t, m, inv); !res.Stats.Prepared {
				t.Error("call after preparation not served prepared")
			}
		})
	}
}

// holdPreparer holds the preparer before each preparation until release
// is closed; entered (buffered buf) gets a token each time it is held.
// restore puts the hook back.
func holdPreparer(buf int) (entered chan struct{}, release chan struct{}, restore func()) {
	release = make(chan struct{})
	entered = make(chan struct{}, buf)
	restore = wasmrt.SetPrepareHook(func() {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
	})
	return entered, release, restore
}

// TestDeferRefill: a call with DeferRefill leaves the pool one short (the
// preparer is not woken) until its caller calls Refill, and Refill then
// brings the pool back; without DeferRefill the call wakes the preparer
// itself.
func TestDeferRefill(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: 1})
	waitReady(t, m, 1)

	res := mustInvoke(t, m, wasmrt.Invocation{DeferRefill: true})
	if !res.Stats.Prepared {
		t.Fatal("the first call did not get the prepared instance")
	}
	// Nothing woke the preparer: the pool stays empty.
	time.Sleep(100 * time.Millisecond)
	if n := m.ReadyInstances(); n != 0 {
		t.Fatalf("%d prepared instances before Refill, want 0", n)
	}
	m.Refill()
	waitReady(t, m, 1)

	// A call without DeferRefill refills by itself.
	if res := mustInvoke(t, m, wasmrt.Invocation{}); !res.Stats.Prepared {
		t.Fatal("the second call did not get the refilled instance")
	}
	waitReady(t, m, 1)

	// Refill on a module that keeps no prepared instances does nothing.
	fresh := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{})
	fresh.Refill()
	if n := fresh.ReadyInstances(); n != 0 {
		t.Fatalf("a module without preparation has %d prepared instances", n)
	}
}
