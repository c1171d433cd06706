package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/testregistry"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/internal/testskill"
)

// publishSkill writes id at version (echo.wasm, the given quotas) into the
// registry directory dir and signs its index again as acme.
func publishSkill(t *testing.T, dir, id, version, quotas string) {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	art := testskill.Build(t, testskill.OneToolManifest(id, version, quotas), wasm, testKey)
	testregistry.Publish(t, dir, fmt.Sprintf("%s-%s%s", id, version, registry.ArtifactExt), art, testKey, "acme")
}

// currentVersion is the current version of id on m's host ("" when none).
func currentVersion(ctx context.Context, m *member, id string) string {
	l, err := m.host.List(ctx, host.ListRequest{SkillID: id, CurrentOnly: true})
	if err != nil || len(l.Entries) != 1 {
		return ""
	}
	return l.Entries[0].Version
}

// TestOutdatedAndUpdateOnANode follows a skill installed from a registry
// on one node with Outdated and Update asked of another: the update goes
// through the ops stream, so every node installs the new version, and the
// source recorded on every node is the registry.
func TestOutdatedAndUpdateOnANode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ms := startCluster(t, 2)
	reg := t.TempDir()
	const id = "acme.upd"
	publishSkill(t, reg, id, "1.0.0", "wall_clock_timeout_ms = 2000")
	res, err := ms[0].node.Install(ctx, host.InstallRequest{From: &host.SourceRef{RegistryDir: reg, SkillID: id}, AllowTOFU: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Source.Kind != inventory.SourceLocalRegistry {
		t.Fatalf("install: source %+v", res.Source)
	}
	for _, m := range ms {
		eventually(t, m.cfg.NodeName+" installed 1.0.0", func() bool { return currentVersion(ctx, m, id) == "1.0.0" })
	}
	// The version is listed once the install's transaction commits; its
	// TOFU pin is saved just after. Outdated on n1 needs that pin, so wait
	// for every node to have applied the whole op.
	installed := streamLast(t, ms[0].link)
	for _, m := range ms {
		eventually(t, m.cfg.NodeName+" applied the install", func() bool { return m.node.Applied() >= installed })
	}

	publishSkill(t, reg, id, "1.1.0", "wall_clock_timeout_ms = 4000")
	rep, err := ms[1].node.Outdated(ctx, host.OutdatedRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skills) != 1 || !rep.Skills[0].Outdated || rep.Skills[0].LatestVersion != "1.1.0" || rep.Skills[0].Source.Kind != inventory.SourceLocalRegistry {
		t.Fatalf("outdated on %s: %+v", ms[1].cfg.NodeName, rep.Skills)
	}
	before := streamLast(t, ms[0].link)
	if up, err := ms[1].node.Update(ctx, host.UpdateRequest{SkillID: id}); errcode.Of(err) != "capability_escalation" || up == nil || len(up.CapabilityDiff) == 0 {
		t.Fatalf("update without accepting: %+v, %v", up, err)
	}
	if after := streamLast(t, ms[0].link); after != before {
		t.Fatalf("a refused update moved the stream from %d to %d", before, after)
	}
	up, err := ms[1].node.Update(ctx, host.UpdateRequest{SkillID: id, AcceptCapabilities: true})
	if err != nil {
		t.Fatal(err)
	}
	if !up.Updated || up.FromVersion != "1.0.0" || up.ToVersion != "1.1.0" {
		t.Fatalf("update: %+v", up)
	}
	for _, m := range ms {
		eventually(t, m.cfg.NodeName+" updated to 1.1.0", func() bool { return currentVersion(ctx, m, id) == "1.1.0" })
	}
	if rep, err := ms[0].node.Outdated(ctx, host.OutdatedRequest{SkillID: id}); err != nil || len(rep.Skills) != 1 || rep.Skills[0].Outdated {
		t.Fatalf("outdated after the update: %+v, %v", rep, err)
	}
}
