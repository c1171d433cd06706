package host_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// TestHookBurstEventLog is point 8 of issue 19 end to end: a real host with
// DispatchHooks, the event-log example in a real sidecar bound to
// skill:enabled and skill:disabled, and a burst of 200 lifecycle events
// (the echo skill disabled and enabled 100 times, as fast as the host
// journals them). Every event is recorded, under sequence numbers 1..200
// given in journal order, and the counter ends at 200: none lost to hooks
// of one skill running concurrently.
func TestHookBurstEventLog(t *testing.T) {
	const burst = 200
	ctx := context.Background()
	state := t.TempDir()
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	outcomes := make(chan hooks.Outcome, burst+16)
	h, err := host.Open(ctx, host.Config{
		StateDir:      state,
		SidecarPath:   sidecarPath,
		DispatchHooks: true,
		OnHook:        func(o hooks.Outcome) { outcomes <- o },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	// The echo example, whose status the burst flips, and event-log.
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
	module, err := os.ReadFile(examplebuild.MustBuild(t, "event-log"))
	if err != nil {
		t.Fatal(err)
	}
	key := testskill.Key(19)
	if _, err := h.Install(ctx, host.InstallRequest{
		Artifact:          testskill.Build(t, string(manifest), module, key),
		TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: hex.EncodeToString(key.Public().(ed25519.PublicKey))}},
	}); err != nil {
		t.Fatal(err)
	}
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
	if v, _, err := st.Get(ctx, "palyra.event_log", "events/seq"); err != nil || string(v) != "200" {
		t.Fatalf("events/seq = %q, %v; want 200", v, err)
	}
	t.Logf("%d events of a burst of %d recorded, in journal order", burst, burst)
}
