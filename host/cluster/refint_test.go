package cluster

import (
	"context"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
)

// TestRemoveReferencedByHookOnEveryNode: in a cluster, the remove op of a
// skill an enabled binding runs is refused by every node alike (the origin
// gets skill_referenced_by_hook naming the binding, every node keeps the
// skill and the binding), and a forced one removes the skill and disables
// the binding on every node.
func TestRemoveReferencedByHookOnEveryNode(t *testing.T) {
	ctx := host.WithPrincipal(context.Background(), "alice")
	ms := startCluster(t, 2)
	const id = "acme.hooked"
	if _, err := ms[0].node.Install(ctx, host.InstallRequest{Artifact: skillArtifact(t, id, "1.0.0"), TrustedPublishers: testPublisher()}); err != nil {
		t.Fatal(err)
	}
	if _, err := ms[1].node.BindHook(ctx, host.HookBinding{HookID: "gate", Event: "skill:enabled", PluginID: id, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	hookEnabled := func(m *member) (present, enabled bool) {
		hs, err := m.node.Hooks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if h.HookID == "gate" {
				return true, h.Enabled
			}
		}
		return false, false
	}
	for _, m := range ms {
		eventually(t, m.cfg.NodeName+" has the binding and the skill", func() bool {
			p, e := hookEnabled(m)
			return p && e && status(t, m, id) == "active"
		})
	}

	_, err := ms[0].node.Remove(ctx, host.RemoveRequest{SkillID: id})
	if errcode.Of(err) != "skill_referenced_by_hook" || !strings.Contains(err.Error(), "hook gate (skill:enabled)") {
		t.Fatalf("remove: %v", err)
	}
	// n1 applied the refused op the same way: the forced remove, with n1 as
	// its origin (whose answer is n1's own outcome), finds the skill still
	// there and the binding still enabled.
	r, err := ms[1].node.Remove(ctx, host.RemoveRequest{SkillID: id, Force: true})
	if err != nil || len(r.DisabledHooks) != 1 || r.DisabledHooks[0].HookID != "gate" || r.DisabledHooks[0].Enabled {
		t.Fatalf("remove force: %+v %v", r, err)
	}
	for _, m := range ms {
		eventually(t, m.cfg.NodeName+" removed the skill and disabled the binding", func() bool {
			p, e := hookEnabled(m)
			return p && !e && len(versions(t, m, id)) == 0
		})
	}
}
