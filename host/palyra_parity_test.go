package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/supervisor"
)

// TestPalyraHookSkillVector is the hook sequence of Palyra's daemon
// admin-surface test (facts §11), run on the signed hook-skill vector
// derived from Palyra's examples (a Palyra-ABI module whose run export
// returns 7): a binding to skill:enabled is accepted; removing the hook
// skill it runs is refused (skill_referenced_by_hook, HTTP 412); enabling
// a skill dispatches the hook, whose outcome carries exit code 7; a
// quarantined hook skill's hook fails at the call gate; then the binding
// and the hook skill are removed. docs/palyra-parity.md cites
// it.
func TestPalyraHookSkillVector(t *testing.T) {
	ctx := host.WithPrincipal(context.Background(), "user:ops")
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	outcomes := make(chan hooks.Outcome, 16)
	h, err := host.Open(ctx, host.Config{
		StateDir:      t.TempDir(),
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
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	vector, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", "derived", "acme.hook_skill-1.0.0.palyra-skill"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.Install(ctx, host.InstallRequest{Artifact: vector, AllowTOFU: true})
	if err != nil || r.Status != "active" {
		t.Fatalf("install the hook skill: %+v %v", r, err)
	}
	echo, echoKey, err := buildEcho()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: echo, TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: echoKey}}}); err != nil {
		t.Fatal(err)
	}
	// Palyra's binding names the plugin only; its v1 manifest has no
	// operator.plugin.default_tool_id, so the binding names the tool.
	b, err := h.BindHook(ctx, host.HookBinding{HookID: "acme.on_enabled", Event: "skill:enabled", PluginID: "acme.hook_skill", ToolID: "acme.hook_run", Enabled: true})
	if err != nil || !b.Enabled || b.Event != hooks.EventSkillEnabled {
		t.Fatalf("bind: %+v %v", b, err)
	}

	if _, err := h.Remove(ctx, host.RemoveRequest{SkillID: "acme.hook_skill"}); !errors.Is(err, host.ErrSkillReferencedByHook) || errcode.Of(err) != "skill_referenced_by_hook" {
		t.Fatalf("remove the referenced hook skill: %v", err)
	}

	if _, err := h.Disable(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "pause"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "palyra.echo", Reason: "back"}); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-outcomes:
		if o.HookID != "acme.on_enabled" || o.Event != hooks.EventSkillEnabled || o.Failed() ||
			o.ExitCode != 7 || o.Decision != hooks.DecisionAnnotate {
			t.Fatalf("outcome: %+v", o)
		}
		if ev := host.HookOutcomeEvent(o); ev.Kind != host.EventHookDispatched || ev.Details["exit_code"] != int32(7) {
			t.Fatalf("event: %+v", ev)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no hook outcome")
	}

	// A hook skill runs through the call gate (Palyra's hooks run skills
	// that have no status row): quarantined, its hook fails with the gate's
	// code and decides nothing.
	if _, err := h.Quarantine(ctx, host.StatusRequest{SkillID: "acme.hook_skill", Reason: "hold"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Disable(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "pause"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "palyra.echo", Reason: "back"}); err != nil {
		t.Fatal(err)
	}
	select {
	case o := <-outcomes:
		if !o.Failed() || o.Code != "skill_quarantined" || o.Decision != "" {
			t.Fatalf("outcome of a quarantined hook skill: %+v", o)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("no hook outcome")
	}

	if err := h.RemoveHook(ctx, "acme.on_enabled"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Remove(ctx, host.RemoveRequest{SkillID: "acme.hook_skill"}); err != nil {
		t.Fatalf("remove the hook skill once unbound: %v", err)
	}
}

// TestPalyraGateChecksTheCurrentVersion is §10 item 6 of the facts:
// Palyra's gate, given no version, judges the most recently changed status
// of any version while its runner executes the current one. Here a call
// without a version runs the current version under that version's status:
// a status change of another version neither blocks nor unblocks it.
func TestPalyraGateChecksTheCurrentVersion(t *testing.T) {
	h, _ := openHostWith(t, supervisor.Config{})
	ctx := context.Background()
	installVersion(t, h, "acme.gv", "1.0.0")
	installVersion(t, h, "acme.gv", "1.1.0")
	call := func() (*host.CallResult, error) {
		return h.Call(ctx, host.CallRequest{SkillID: "acme.gv", ToolID: "acme.gv.t", Input: json.RawMessage(`{}`)})
	}
	steps := []struct {
		name    string
		change  func() error
		version string // the version that runs, "" for refused
		code    string
	}{
		{"an older version quarantined last", func() error {
			_, err := h.Quarantine(ctx, host.StatusRequest{SkillID: "acme.gv", Version: "1.0.0", Reason: "old"})
			return err
		}, "1.1.0", ""},
		{"the current version quarantined", func() error {
			_, err := h.Quarantine(ctx, host.StatusRequest{SkillID: "acme.gv", Version: "1.1.0", Reason: "bad"})
			return err
		}, "", "skill_quarantined"},
		{"an older version enabled last", func() error {
			_, err := h.Enable(ctx, host.EnableRequest{SkillID: "acme.gv", Version: "1.0.0", Reason: "ok", Override: true})
			return err
		}, "", "skill_quarantined"},
	}
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		res, err := call()
		if s.version == "" {
			if errcode.Of(err) != s.code {
				t.Fatalf("%s: call %+v, %v; want %s", s.name, res, err, s.code)
			}
			continue
		}
		if err != nil || res.Version != s.version {
			t.Fatalf("%s: call %+v, %v; want version %s to run", s.name, res, err, s.version)
		}
	}
}

// TestPalyraRefusedCallJournaled: a call the gate refuses for a reason an
// operator acts on (here: the version is quarantined) is journaled with
// the caller's principal and the code, as Palyra journals its denials;
// a loop of the same refusal writes one event a minute, not one per call,
// and the next one counts those it did not write.
func TestPalyraRefusedCallJournaled(t *testing.T) {
	h := openHost(t)
	ctx := host.WithPrincipal(context.Background(), "user:alice")
	if _, err := h.Quarantine(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	refused := func() []host.Event {
		var out []host.Event
		if err := h.Events(ctx, host.EventsRequest{After: 0}, func(e host.Event) error {
			if e.SkillID == "palyra.echo" && e.Kind == "skill:call_refused" {
				out = append(out, e)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for range 3 {
		if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"x"}`)}); errcode.Of(err) != "skill_quarantined" {
			t.Fatalf("call: %v", err)
		}
	}
	evs := refused()
	if len(evs) != 1 {
		t.Fatalf("call_refused events after three refused calls: %+v; want one (coalesced)", evs)
	}
	e := evs[0]
	if e.Principal != "user:alice" || e.Version != "0.1.0" || !strings.HasPrefix(e.Reason, "skill_quarantined: ") ||
		e.Details["code"] != "skill_quarantined" || e.Details["tool_id"] != "palyra.echo" {
		t.Fatalf("the refusal's event %+v", e)
	}
}
