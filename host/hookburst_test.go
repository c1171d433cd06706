package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/host/supervisor"
)

// TestHookBurstEventLog is point 8 of issue 19 end to end: a real host with
// DispatchHooks, the event-log example in a real sidecar bound to
// skill:enabled and skill:disabled, and a burst of 200 lifecycle events
// (the echo skill disabled and enabled 100 times, as fast as the host
// journals them). Every event is recorded, under sequence numbers 1..200
// given in journal order, and the counter ends at 200: none lost to hooks
// of one skill running concurrently.
//
// Under the race detector every capability call of the hook (five or so
// SQLite transactions in the host, whose pure-Go SQLite the detector slows
// many times) costs seconds on a loaded machine, so the burst is 20 there:
// that run looks for data races, the full one counts.
func TestHookBurstEventLog(t *testing.T) {
	burst := 200
	if raceBuild {
		burst = 20
	}
	ctx := context.Background()
	state := t.TempDir()
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	outcomes := make(chan hooks.Outcome, burst+16)
	// The longest time limits there are: this test is about losing
	// nothing, on a machine that may be slow, not about time.
	h, err := host.Open(ctx, host.Config{
		StateDir:      state,
		SidecarPath:   sidecarPath,
		DispatchHooks: true,
		HookTimeout:   hooks.MaxHookTimeout,
		OnHook:        func(o hooks.Outcome) { outcomes <- o },
		Supervisor:    supervisor.Config{SocketDir: sock},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Bounded, so that a failed run does not wait for every queued
		// hook: Close then cancels them and says so.
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	// The echo example, whose status the burst flips, and event-log.
	installEventLog(t, h)
	for _, b := range []host.HookBinding{
		{HookID: "log.enabled", Event: hooks.EventSkillEnabled, PluginID: "palyra.event_log", Enabled: true},
		{HookID: "log.disabled", Event: hooks.EventSkillDisabled, PluginID: "palyra.event_log", Enabled: true},
	} {
		if _, err := h.BindHook(ctx, b); err != nil {
			t.Fatal(err)
		}
	}

	for i := range burst {
		var err error
		if i%2 == 0 {
			_, err = h.Disable(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "burst"})
		} else {
			_, err = h.Enable(ctx, host.EnableRequest{SkillID: "palyra.echo", Reason: "burst"})
		}
		if err != nil {
			t.Fatalf("status change %d: %v", i, err)
		}
	}

	// recorded[n-1] is the journal id of the event recorded as number n.
	recorded := make([]int64, burst)
	durations := make([]time.Duration, 0, burst)
	// A deadline only so that a lost outcome fails the test instead of
	// hanging it; nothing is asserted about time.
	deadline := time.After(5 * time.Minute)
	for i := range burst {
		var o hooks.Outcome
		select {
		case o = <-outcomes:
		case <-deadline:
			t.Fatalf("%d hook outcomes of %d arrived", i, burst)
		}
		if o.Failed() || o.Decision != hooks.DecisionContinue {
			t.Fatalf("outcome %d: %+v", i, o)
		}
		var out struct{ Recorded int }
		var in struct{ Payload struct{ ID int64 } }
		if err := json.Unmarshal(o.Output, &out); err != nil || json.Unmarshal(o.Payload, &in) != nil {
			t.Fatalf("outcome %d: output %s, input %s", i, o.Output, o.Payload)
		}
		if out.Recorded < 1 || out.Recorded > burst || recorded[out.Recorded-1] != 0 {
			t.Fatalf("outcome %d recorded as %d, out of range or twice", i, out.Recorded)
		}
		recorded[out.Recorded-1] = in.Payload.ID
		durations = append(durations, o.Duration)
	}
	for n := 1; n < burst; n++ {
		if recorded[n] <= recorded[n-1] {
			t.Fatalf("number %d holds journal event %d, number %d event %d: not in journal order", n, recorded[n-1], n+1, recorded[n])
		}
	}

	// What the skill stored, read from the storage database itself.
	st, err := storage.Open(ctx, filepath.Join(state, "storage", "storage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, _, err := st.Get(ctx, "palyra.event_log", "events/seq"); err != nil || string(v) != fmt.Sprint(burst) {
		t.Fatalf("events/seq = %q, %v; want %d", v, err, burst)
	}
	slices.Sort(durations)
	t.Logf("%d events of a burst of %d recorded, in journal order; hook call median %v, max %v",
		burst, burst, durations[len(durations)/2], durations[len(durations)-1])
}
