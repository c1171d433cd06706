package supervisor

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// sparePIDs returns the pids of s's spare sidecars.
func sparePIDs(s *Supervisor) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, p := range s.spares {
		out = append(out, p.pid)
	}
	return out
}

// waitSpare waits up to 30 s for s to hold a spare sidecar and returns its
// pid.
func waitSpare(t *testing.T, s *Supervisor) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if pids := sparePIDs(s); len(pids) > 0 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no spare sidecar within 30 s")
		}
	}
}

// TestSpareSidecar checks the pool of spare sidecars: none before the first
// successful start, one after it; the next start of another skill version
// takes it (the call is served by the spare's pid) and the pool is filled
// again; a spare killed while waiting is not used (the call is served by a
// new sidecar); with SpareSidecars negative none is ever started. newSup's
// cleanup checks that Close ends the spares. Standbys are off: they would
// take the spares.
func TestSpareSidecar(t *testing.T) {
	ctx := ctxT(t)
	a := fixture(t, "spare.a", "answer.wasm")
	a.Entrypoint = "answer"
	b, c := a, a
	b.SkillID, c.SkillID = "spare.b", "spare.c"

	t.Run("taken and refilled", func(t *testing.T) {
		s := newSup(t, Config{Standby: -1, HealthInterval: -1, IdleTimeout: -1})
		if pids := sparePIDs(s); len(pids) != 0 {
			t.Fatalf("spares before any start: %v", pids)
		}
		if _, err := s.Call(ctx, a, "t", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
		spare := waitSpare(t, s)
		if n := s.ReadySpares(); n != 1 {
			t.Fatalf("ReadySpares() = %d with one spare waiting", n)
		}
		res, err := s.Call(ctx, b, "t", nil, CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.PID != spare {
			t.Errorf("skill b served by pid %d, want the spare %d", res.PID, spare)
		}
		if next := waitSpare(t, s); next == spare {
			t.Errorf("the pool holds the taken spare %d again", next)
		}
	})

	t.Run("a dead spare is not used", func(t *testing.T) {
		s := newSup(t, Config{Standby: -1, HealthInterval: -1, IdleTimeout: -1})
		if _, err := s.Call(ctx, a, "t", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
		spare := waitSpare(t, s)
		if err := syscall.Kill(spare, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, spare, "killed spare")
		res, err := s.Call(ctx, c, "t", nil, CallOptions{})
		if err != nil {
			t.Fatalf("call after the spare died: %v", err)
		}
		if res.PID == spare || res.PID == 0 {
			t.Errorf("served by pid %d (the dead spare was %d)", res.PID, spare)
		}
		if st := s.State(c.SkillID, c.Version); st.Crashes != 0 {
			t.Errorf("a dead spare counted as a crash: %+v", st)
		}
	})

	// go-plugin keeps a broker announcement that no Dial took for 5 s
	// only: a spare that waited longer for its skill must still reach the
	// broker at LoadSkill (it is announced then, not at the spare's start).
	t.Run("a spare that waited longer than a broker announcement lives", func(t *testing.T) {
		if testing.Short() {
			t.Skip("waits 6 s")
		}
		br := brokerFunc(func(context.Context, sidecarplugin.CapabilityRequest) ([]byte, error) { return []byte("{}"), nil })
		s := newSup(t, Config{Standby: -1, HealthInterval: -1, IdleTimeout: -1, Broker: br})
		if _, err := s.Call(ctx, a, "t", nil, CallOptions{}); err != nil {
			t.Fatal(err)
		}
		spare := waitSpare(t, s)
		time.Sleep(6 * time.Second)
		res, err := s.Call(ctx, b, "t", nil, CallOptions{})
		if err != nil {
			t.Fatalf("call on the spare after 6 s: %v", err)
		}
		if res.PID != spare {
			t.Errorf("skill b served by pid %d, want the spare %d", res.PID, spare)
		}
	})

	t.Run("disabled", func(t *testing.T) {
		s := newSup(t, Config{SpareSidecars: -1, Standby: -1, HealthInterval: -1, IdleTimeout: -1})
		for _, tg := range []Target{a, b} {
			if _, err := s.Call(ctx, tg, "t", nil, CallOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if pids := sparePIDs(s); len(pids) != 0 {
			t.Errorf("spares with SpareSidecars -1: %v", pids)
		}
		if kids := sidecarChildren(); len(kids) != 2 {
			t.Errorf("sidecar children %v, want the 2 serving ones", kids)
		}
	})
}

// brokerFunc is a Broker made of a function.
type brokerFunc func(context.Context, sidecarplugin.CapabilityRequest) ([]byte, error)

func (f brokerFunc) Call(ctx context.Context, req sidecarplugin.CapabilityRequest) ([]byte, error) {
	return f(ctx, req)
}

// TestBoundBrokerLateBinding checks the broker of a sidecar started before
// it has a skill: it refuses every capability call until bound, then only
// those of its skill; a second binding does not move it; with no broker
// none is served.
func TestBoundBrokerLateBinding(t *testing.T) {
	ctx := context.Background()
	inner := brokerFunc(func(_ context.Context, req sidecarplugin.CapabilityRequest) ([]byte, error) {
		return []byte("ok:" + req.SkillID), nil
	})
	bb := newBoundBroker(inner)
	denied := func(skill string) bool {
		_, err := bb.Call(ctx, sidecarplugin.CapabilityRequest{SkillID: skill})
		var ce *sidecarplugin.CapabilityError
		return errors.As(err, &ce) && ce.Code == sidecarplugin.CodeDenied
	}
	if !denied("acme.a") {
		t.Error("an unbound broker let a call through")
	}
	bb.bind("acme.a")
	bb.bind("acme.b")
	if out, err := bb.Call(ctx, sidecarplugin.CapabilityRequest{SkillID: "acme.a"}); err != nil || string(out) != "ok:acme.a" {
		t.Errorf("bound skill: %q, %v", out, err)
	}
	if !denied("acme.b") {
		t.Error("a second binding moved the broker")
	}
	none := newBoundBroker(nil)
	none.bind("acme.a")
	if none != nil || none.plugin() != nil {
		t.Error("no broker: a broker is served")
	}
}
