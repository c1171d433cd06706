package host_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// catchupState is a state directory shared by the hosts of one test, one
// after the other or side by side, as the daemon and the CLI share one.
type catchupState struct {
	t     *testing.T
	state string
	sock  string
}

func newCatchupState(t *testing.T) *catchupState {
	t.Helper()
	sock, err := os.MkdirTemp("", "hc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	return &catchupState{t: t, state: t.TempDir(), sock: sock}
}

// open opens a host on the state dir. With outcomes it dispatches hooks
// (as the daemon does) and sends every outcome there; without, it is the
// CLI working on the state dir while no daemon runs. The caller closes it.
func (c *catchupState) open(outcomes chan<- hooks.Outcome, retries int) *host.Host {
	c.t.Helper()
	cfg := host.Config{
		StateDir: c.state, SidecarPath: sidecarPath, Supervisor: supervisor.Config{SocketDir: c.sock},
		HookTimeout: hooks.MaxHookTimeout, HookRetries: retries, HookRetryBackoff: 10 * time.Millisecond,
	}
	if outcomes != nil {
		cfg.DispatchHooks = true
		cfg.OnHook = func(o hooks.Outcome) { outcomes <- o }
	}
	h, err := host.Open(context.Background(), cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	return h
}

func closeHost(t *testing.T, h *host.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// installEventLog installs the echo example (whose status the tests flip)
// and the event-log example, the hook skill: it records every event it is
// given, numbered in the order it got them, in its storage.
func installEventLog(t *testing.T, h *host.Host) {
	t.Helper()
	ctx := context.Background()
	echo, echoKey, err := buildEcho()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: echo, TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: echoKey}}}); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(examplebuild.MustDir(t, "event-log"), "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest = bytes.Replace(manifest, []byte("wall_clock_timeout_ms = 5000"), []byte("wall_clock_timeout_ms = 60000"), 1)
	module, err := os.ReadFile(examplebuild.MustBuild(t, "event-log"))
	if err != nil {
		t.Fatal(err)
	}
	key := testskill.Key(24)
	if _, err := h.Install(ctx, host.InstallRequest{
		Artifact:          testskill.Build(t, string(manifest), module, key),
		TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: hex.EncodeToString(key.Public().(ed25519.PublicKey))}},
	}); err != nil {
		t.Fatal(err)
	}
}

// flip disables then enables the echo skill n times in all (2 events per
// round, n events), as `palyra skills disable|enable` do, and returns the
// journal ids of the events.
func flip(t *testing.T, h *host.Host, n int) []int64 {
	t.Helper()
	ctx := host.WithPrincipal(context.Background(), "user:cli")
	var ids []int64
	for i := range n {
		var err error
		if i%2 == 0 {
			_, err = h.Disable(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "catch-up test"})
		} else {
			_, err = h.Enable(ctx, host.EnableRequest{SkillID: "palyra.echo", Reason: "catch-up test"})
		}
		if err != nil {
			t.Fatalf("status change %d: %v", i, err)
		}
		ids = append(ids, lastEvent(t, h, "palyra.echo"))
	}
	return ids
}

// lastEvent returns the id of skill's newest journal event.
func lastEvent(t *testing.T, h *host.Host, skill string) int64 {
	t.Helper()
	var last int64 = -1
	err := h.Events(context.Background(), host.EventsRequest{After: 0}, func(ev host.Event) error {
		if ev.SkillID == skill {
			last = ev.ID
		}
		return nil
	})
	if err != nil || last < 0 {
		t.Fatalf("events of %s: %v", skill, err)
	}
	return last
}

// recordedIDs returns the journal ids of the events the event-log skill
// recorded, in the order it recorded them, read from its storage.
func recordedIDs(t *testing.T, state string) []int64 {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, filepath.Join(state, "storage", "storage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, _, err := st.List(ctx, "palyra.event_log", "events/e-", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys) // e-000000000001, ...: recording order
	var ids []int64
	for _, k := range keys {
		v, _, err := st.Get(ctx, "palyra.event_log", k)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Payload struct{ ID int64 } }
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatalf("%s: %s: %v", k, v, err)
		}
		ids = append(ids, e.Payload.ID)
	}
	return ids
}

// await takes n outcomes of journal events; a failed one fails the test.
func await(t *testing.T, outcomes <-chan hooks.Outcome, n int) []hooks.Outcome {
	t.Helper()
	// A deadline only so that a lost outcome fails the test instead of
	// hanging it; nothing is asserted about time.
	deadline := time.After(3 * time.Minute)
	var out []hooks.Outcome
	for len(out) < n {
		select {
		case o := <-outcomes:
			if o.Failed() {
				t.Fatalf("hook failed: %+v", o)
			}
			out = append(out, o)
		case <-deadline:
			t.Fatalf("%d hook outcomes of %d arrived", len(out), n)
		}
	}
	return out
}

func eventIDs(os []hooks.Outcome) []int64 {
	var ids []int64
	for _, o := range os {
		ids = append(ids, o.EventID)
	}
	return ids
}

// TestHookCatchUp is point 10 of issue 24: lifecycle changes made while no
// host dispatches hooks (the CLI working on the state dir while the daemon
// is down) reach the hooks when a dispatching host starts, each once and
// in journal order; then the live events follow, those of another process
// too, without a gap or a duplicate at the hand-over. A new binding starts
// at the journal's head: the events before it are not replayed.
func TestHookCatchUp(t *testing.T) {
	ctx := context.Background()
	c := newCatchupState(t)

	// Setup, and history the binding must not see: echo flipped before
	// the binding exists.
	cli := c.open(nil, 0)
	installEventLog(t, cli)
	history := flip(t, cli, 2)
	for _, b := range []host.HookBinding{
		{HookID: "log.enabled", Event: hooks.EventSkillEnabled, PluginID: "palyra.event_log", Enabled: true},
		{HookID: "log.disabled", Event: hooks.EventSkillDisabled, PluginID: "palyra.event_log", Enabled: true},
	} {
		if _, err := cli.BindHook(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// While no daemon runs.
	backlog := flip(t, cli, 10)
	closeHost(t, cli)

	outcomes := make(chan hooks.Outcome, 64)
	d := c.open(outcomes, 0)
	got := await(t, outcomes, len(backlog))
	if ids := eventIDs(got); !slices.Equal(ids, backlog) {
		t.Fatalf("caught up events %v, want the backlog %v (history %v not replayed)", ids, backlog, history)
	}

	// Live: changes of another process (the CLI while the daemon runs)
	// and of the daemon's own host.
	cli = c.open(nil, 0)
	live := flip(t, cli, 3)
	closeHost(t, cli)
	live = append(live, flip(t, d, 1)...)
	got = await(t, outcomes, len(live))
	if ids := eventIDs(got); !slices.Equal(ids, live) {
		t.Fatalf("live events %v, want %v", ids, live)
	}
	closeHost(t, d)

	// What the hook skill itself recorded: every event once, in order.
	want := append(slices.Clone(backlog), live...)
	if rec := recordedIDs(t, c.state); !slices.Equal(rec, want) {
		t.Fatalf("the hook recorded %v, want %v", rec, want)
	}
	cs, err := hooks.OpenStore(c.state).Cursors()
	if err != nil {
		t.Fatal(err)
	}
	last := want[len(want)-1]
	for _, id := range []string{"log.enabled", "log.disabled"} {
		if cs[id].EventID != last {
			t.Errorf("cursor of %s at %d, want %d", id, cs[id].EventID, last)
		}
	}

	// A restart with nothing new delivers nothing again: the next event
	// is the first outcome.
	d = c.open(outcomes, 0)
	next := flip(t, d, 1)
	if ids := eventIDs(await(t, outcomes, 1)); !slices.Equal(ids, next) {
		t.Fatalf("after a restart the first outcome is of events %v, want %v", ids, next)
	}
	closeHost(t, d)
}

// TestHookCatchUpInterrupted stops the dispatching host in the middle of a
// catch-up, cutting the hook that runs, and starts another: every event
// reaches the hook at least once, in journal order (the one cut off may
// come twice).
func TestHookCatchUpInterrupted(t *testing.T) {
	ctx := context.Background()
	c := newCatchupState(t)
	cli := c.open(nil, 0)
	installEventLog(t, cli)
	if _, err := cli.BindHook(ctx, host.HookBinding{HookID: "log.all", Event: hooks.EventSkillDisabled, PluginID: "palyra.event_log", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.BindHook(ctx, host.HookBinding{HookID: "log.enabled", Event: hooks.EventSkillEnabled, PluginID: "palyra.event_log", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	backlog := flip(t, cli, 30)
	closeHost(t, cli)

	outcomes := make(chan hooks.Outcome, 64)
	d := c.open(outcomes, 0)
	first := await(t, outcomes, 5)
	// Close with an ended ctx: the hook running is cancelled, as when the
	// daemon is killed.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_ = d.Close(cctx) // reports the cancelled calls
	for len(outcomes) > 0 {
		<-outcomes
	}

	d = c.open(outcomes, 0)
	deadline := time.After(3 * time.Minute)
	for {
		rec := recordedIDs(t, c.state)
		if len(rec) > 0 && rec[len(rec)-1] == backlog[len(backlog)-1] {
			break
		}
		select {
		case <-outcomes:
		case <-deadline:
			t.Fatalf("after the restart the hook recorded %v", rec)
		}
	}
	closeHost(t, d)
	rec := recordedIDs(t, c.state)
	if !slices.IsSorted(rec) {
		t.Fatalf("recorded %v: not in journal order", rec)
	}
	if got := slices.Compact(slices.Clone(rec)); !slices.Equal(got, backlog) {
		t.Fatalf("recorded %v, want every event of %v at least once", rec, backlog)
	}
	if len(rec)-len(backlog) > 1 {
		t.Errorf("recorded %d events for %d: more than the one cut off came twice", len(rec), len(backlog))
	}
	t.Logf("first run delivered %d+ events; %d recorded for %d events", len(first), len(rec), len(backlog))
}

// TestHookGivesUp: a hook that keeps failing on a journal event is tried
// HookRetries times more, then the host journals skill.hook_gave_up and
// the binding's cursor moves on to the next event, which is tried in turn.
func TestHookGivesUp(t *testing.T) {
	ctx := context.Background()
	c := newCatchupState(t)
	cli := c.open(nil, 0)
	installEventLog(t, cli)
	// Bound to a skill that is not installed: every call fails (not_found).
	if _, err := cli.BindHook(ctx, host.HookBinding{HookID: "gone.enabled", Event: hooks.EventSkillEnabled, PluginID: "acme.gone", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	flip(t, cli, 4) // disabled, enabled, disabled, enabled
	enabled := []int64{lastEvent(t, cli, "palyra.echo")}
	closeHost(t, cli)

	outcomes := make(chan hooks.Outcome, 64)
	const retries = 2
	d := c.open(outcomes, retries)
	deadline := time.After(3 * time.Minute)
	var got []hooks.Outcome
	for len(got) < 2*(retries+1) {
		select {
		case o := <-outcomes:
			got = append(got, o)
		case <-deadline:
			t.Fatalf("outcomes %+v", got)
		}
	}
	for i, o := range got {
		attempt := i%(retries+1) + 1
		if !o.Failed() || o.Attempt != attempt || o.GaveUp != (attempt == retries+1) || o.HookID != "gone.enabled" {
			t.Fatalf("outcome %d: %+v, want failed try %d", i, o, attempt)
		}
	}
	if got[0].EventID >= got[len(got)-1].EventID || got[len(got)-1].EventID != enabled[0] {
		t.Fatalf("gave up on events %d and %d, want the two skill:enabled in order ending at %d", got[0].EventID, got[len(got)-1].EventID, enabled[0])
	}
	// Journaled, with the hook, the event and the tries.
	var gaveUp []host.Event
	if err := d.Events(ctx, host.EventsRequest{After: 0}, func(ev host.Event) error {
		if ev.Kind == "skill:hook_gave_up" {
			gaveUp = append(gaveUp, ev)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(gaveUp) != 2 || gaveUp[0].SkillID != "acme.gone" || gaveUp[0].Principal != host.PrincipalHooks ||
		gaveUp[0].Details["hook_id"] != "gone.enabled" || gaveUp[1].Details["event_id"] != float64(enabled[0]) ||
		gaveUp[0].Details["attempts"] != float64(retries+1) || !strings.Contains(gaveUp[0].Reason, "acme.gone") {
		t.Fatalf("journaled give-ups: %+v", gaveUp)
	}
	closeHost(t, d)
	cs, err := hooks.OpenStore(c.state).Cursors()
	if err != nil {
		t.Fatal(err)
	}
	if cs["gone.enabled"].EventID < enabled[0] {
		t.Fatalf("cursor at %d, want past %d", cs["gone.enabled"].EventID, enabled[0])
	}
}
