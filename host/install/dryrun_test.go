package install

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/trust"
)

// TestDryRun: a dry run answers what the install would do (new skill,
// upgrade with its capability diff, refused escalation, quarantine) and
// writes nothing: no version directory, no inventory row, no TOFU pin.
func TestDryRun(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	in, err := Open(ctx, Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	spec := skillSpec{id: "acme.web", version: "1.0.0", module: "cap_http_storage", hosts: []string{"api.example.com"}, writeRoots: []string{"cache"}}
	v1 := build(t, spec)

	// A first install, by trust on first use: the result, no pin saved.
	res, err := in.Install(ctx, v1, InstallOptions{AllowTOFU: true, DryRun: true})
	if err != nil || res.Installed || res.Status != inventory.StatusActive || res.EventKind != inventory.EventInstalled ||
		res.TrustDecision != string(trust.DecisionTOFUNewlyPinned) || res.SkillID != "acme.web" {
		t.Fatalf("dry run of a first install: %+v, %v", res, err)
	}
	if l, err := in.List(ctx, ListOptions{}); err != nil || len(l) != 0 {
		t.Fatalf("after a dry run: %d installed, %v", len(l), err)
	}
	if _, err := os.Stat(in.VersionDir("acme.web", "1.0.0")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dry run wrote the version directory: %v", err)
	}
	if _, err := in.Install(ctx, v1, InstallOptions{DryRun: true}); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Fatalf("the dry run pinned the key: %v", err)
	}

	if _, err := in.Install(ctx, v1, InstallOptions{TrustedPublishers: trustAcme}); err != nil {
		t.Fatal(err)
	}
	spec2 := spec
	spec2.version, spec2.hosts = "1.1.0", []string{"api.example.com", "api2.example.com"}
	v2 := build(t, spec2)
	res, err = in.Install(ctx, v2, InstallOptions{DryRun: true})
	if !errors.Is(err, ErrCapabilityEscalation) || res == nil || res.Installed || res.PreviousVersion != "1.0.0" ||
		!slices.Contains(res.CapabilityDiff, "+ http host api2.example.com") {
		t.Fatalf("dry run of an escalating upgrade: %+v, %v", res, err)
	}
	res, err = in.Install(ctx, v2, InstallOptions{DryRun: true, AcceptCapabilities: true})
	if err != nil || res.Installed || res.EventKind != inventory.EventUpdated || len(res.CapabilityDiff) != 1 {
		t.Fatalf("dry run of an accepted upgrade: %+v, %v", res, err)
	}
	if info, err := in.Info(ctx, "acme.web", ""); err != nil || info.Inventory.Version != "1.0.0" {
		t.Fatalf("after the dry runs the current version is %+v, %v", info, err)
	}
}
