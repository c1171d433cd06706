package host_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/fsutil"
	"github.com/palyra-go/palyra/internal/testskill"
)

// hookStates returns the enabled state of every binding by hook id.
func hookStates(t *testing.T, h *host.Host) map[string]bool {
	t.Helper()
	bs, err := h.Hooks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, b := range bs {
		out[b.HookID] = b.Enabled
	}
	return out
}

func installVersion(t *testing.T, h *host.Host, id, version string) {
	t.Helper()
	pub := hex.EncodeToString(testskill.Key(7).Public().(ed25519.PublicKey))
	if _, err := h.Install(context.Background(), host.InstallRequest{Artifact: watArtifact(t, id, version, "echo", ""),
		TrustedPublishers: []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}}}); err != nil {
		t.Fatal(err)
	}
}

// TestRemoveReferencedByHook: only a remove that leaves no version of a
// skill an enabled binding runs is refused; force disables the bindings.
func TestRemoveReferencedByHook(t *testing.T) {
	h, _ := openHostWith(t, supervisor.Config{})
	ctx := host.WithPrincipal(context.Background(), "user:ops")
	installVersion(t, h, "acme.rv", "1.0.0")
	installVersion(t, h, "acme.rv", "1.1.0")
	for _, b := range []host.HookBinding{
		{HookID: "rv.gate", Event: "run:before_tool", PluginID: "acme.rv", Enabled: true},
		{HookID: "rv.note", Event: "skill:removed", PluginID: "acme.rv", Enabled: true},
		{HookID: "rv.off", Event: "skill:removed", PluginID: "acme.rv", Enabled: false},
	} {
		if _, err := h.BindHook(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	// One of two versions: another is left, so nothing blocks.
	r, err := h.Remove(ctx, host.RemoveRequest{SkillID: "acme.rv", Version: "1.0.0"})
	if err != nil || r.Current != "1.1.0" || len(r.DisabledHooks) != 0 {
		t.Fatalf("remove 1.0.0: %+v %v", r, err)
	}
	// The last version: refused, naming the enabled bindings only.
	_, err = h.Remove(ctx, host.RemoveRequest{SkillID: "acme.rv", Version: "1.1.0"})
	if !errors.Is(err, host.ErrSkillReferencedByHook) || errcode.Of(err) != "skill_referenced_by_hook" ||
		!strings.Contains(err.Error(), "hook rv.gate (run:before_tool), hook rv.note (skill:removed)") || strings.Contains(err.Error(), "rv.off") ||
		!strings.Contains(err.Error(), "acme.rv 1.1.0 (its last version)") {
		t.Fatalf("remove the last version: %v", err)
	}
	if _, err := h.Info(ctx, host.SkillRef{SkillID: "acme.rv"}); err != nil {
		t.Fatalf("the refused remove removed: %v", err)
	}
	// Forced: the last version goes, the two bindings are disabled by the
	// caller.
	r, err = h.Remove(ctx, host.RemoveRequest{SkillID: "acme.rv", Version: "1.1.0", Force: true})
	if err != nil || len(r.Versions) != 1 || r.Current != "" || len(r.DisabledHooks) != 2 ||
		r.DisabledHooks[0].HookID != "rv.gate" || r.DisabledHooks[1].HookID != "rv.note" || r.DisabledHooks[0].Operator.UpdatedBy != "user:ops" {
		t.Fatalf("remove --force: %+v %v", r, err)
	}
	if got := hookStates(t, h); got["rv.gate"] || got["rv.note"] || got["rv.off"] || len(got) != 3 {
		t.Fatalf("bindings after the forced remove: %v", got)
	}
}

// TestForcedRemoveFailures: a forced remove whose disabling fails removes
// nothing; one whose removal fails leaves the bindings as they were.
func TestForcedRemoveFailures(t *testing.T) {
	h, state := openHostWith(t, supervisor.Config{})
	ctx := host.WithPrincipal(context.Background(), "user:ops")
	installVersion(t, h, "acme.rf", "1.0.0")
	if _, err := h.BindHook(ctx, host.HookBinding{HookID: "rf.gate", Event: "run:before_tool", PluginID: "acme.rf", Enabled: true}); err != nil {
		t.Fatal(err)
	}

	t.Run("disabling fails", func(t *testing.T) {
		// A principal too long to be recorded as the binding's updated_by
		// makes the bindings file invalid: the write is refused.
		long := host.WithPrincipal(context.Background(), strings.Repeat("p", 5000))
		_, err := h.Remove(long, host.RemoveRequest{SkillID: "acme.rf", Force: true})
		if err == nil || !strings.Contains(err.Error(), "nothing was removed") {
			t.Fatalf("remove: %v", err)
		}
		if _, err := h.Info(ctx, host.SkillRef{SkillID: "acme.rf"}); err != nil {
			t.Fatalf("removed although disabling failed: %v", err)
		}
		if got := hookStates(t, h); !got["rf.gate"] {
			t.Fatalf("bindings: %v", got)
		}
	})

	t.Run("removal fails", func(t *testing.T) {
		// Another operation holds the skill's lock: the removal cannot
		// start before the caller gives up.
		lf, err := fsutil.LockExclusive(context.Background(), filepath.Join(state, "skills", "acme.rf", ".lock"), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer lf.Close()
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err = h.Remove(short, host.RemoveRequest{SkillID: "acme.rf", Force: true})
		if errcode.Of(err) != "install_locked" && errcode.Of(err) != "skill_locked" {
			t.Fatalf("remove: %v (code %s)", err, errcode.Of(err))
		}
		if got := hookStates(t, h); !got["rf.gate"] {
			t.Fatalf("the binding stays disabled after a failed removal: %v", got)
		}
		if _, err := h.Info(ctx, host.SkillRef{SkillID: "acme.rf"}); err != nil {
			t.Fatal(err)
		}
	})

	// And once nothing is in the way, the forced remove completes.
	r, err := h.Remove(ctx, host.RemoveRequest{SkillID: "acme.rf", Force: true})
	if err != nil || len(r.DisabledHooks) != 1 {
		t.Fatalf("remove: %+v %v", r, err)
	}
}
