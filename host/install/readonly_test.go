package install

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/internal/dirsnap"
)

// TestOpenIgnoresEnvironment: the installer keeps its trust store where
// Config documents it, <state>/skills/trust-store.json, whatever
// $PALYRA_SKILLS_TRUST_STORE and $PALYRA_STATE_DIR say (the commands read
// those, not the library); Config.TrustStore still moves it. And the skill
// lock is where statedir.Layout says it is.
func TestOpenIgnoresEnvironment(t *testing.T) {
	ctx := context.Background()
	elsewhere := t.TempDir()
	t.Setenv("PALYRA_SKILLS_TRUST_STORE", filepath.Join(elsewhere, "env-trust.json"))
	t.Setenv("PALYRA_STATE_DIR", filepath.Join(elsewhere, "env-state"))
	explicit := filepath.Join(t.TempDir(), "explicit-trust.json")
	tests := []struct {
		name       string
		trustStore string
		want       func(l statedir.Layout) string
	}{
		{"default", "", statedir.Layout.TrustStore},
		{"Config.TrustStore", explicit, func(statedir.Layout) string { return explicit }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			l := statedir.At(state)
			in, err := Open(ctx, Config{StateDir: state, TrustStore: tt.trustStore})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if got := in.TrustStorePath(); got != tt.want(l) {
				t.Fatalf("TrustStorePath() = %q, want %q", got, tt.want(l))
			}
			// A TOFU install pins the publisher: the trust store is written.
			if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.env", version: "1.0.0"}), InstallOptions{AllowTOFU: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(tt.want(l)); err != nil {
				t.Fatalf("the trust store is not at %s: %v", tt.want(l), err)
			}
			if _, err := os.Stat(l.SkillLock("acme.env")); err != nil {
				t.Errorf("the skill lock is not at Layout.SkillLock: %v", err)
			}
			if _, err := os.Stat(l.Inventory()); err != nil {
				t.Errorf("the inventory is not at Layout.Inventory: %v", err)
			}
			if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
				t.Fatalf("the installer wrote where the environment points: %v", ents)
			}
		})
	}
	if _, err := Open(ctx, Config{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Open without StateDir = %v, want ErrInvalidArgument (no fallback to the environment)", err)
	}
}

// TestReader: a Reader lists, describes and checks what the Installer
// installed with the same results, refuses nothing it should answer, and
// leaves the state directory exactly as it was; on a state directory that
// does not exist it answers "nothing installed" and creates nothing.
func TestReader(t *testing.T) {
	ctx := context.Background()
	t.Run("installed", func(t *testing.T) {
		state := t.TempDir()
		in := open(t, state, nil)
		if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.ro", version: "1.0.0"}), InstallOptions{TrustedPublishers: trustAcme}); err != nil {
			t.Fatal(err)
		}
		wantList, err := in.List(ctx, ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantInfo, err := in.Info(ctx, "acme.ro", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		before := dirsnap.Take(t, state)
		r, err := OpenReadOnly(ctx, Config{StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		list, err := r.List(ctx, ListOptions{})
		if err != nil || len(list) != 1 || list[0].ArtifactSHA256 != wantList[0].ArtifactSHA256 || list[0].Status != wantList[0].Status {
			t.Fatalf("List = %+v, %v; want %+v", list, err, wantList)
		}
		info, err := r.Info(ctx, "acme.ro", "")
		if err != nil || info.ArtifactError != "" || len(info.ArtifactEntries) != len(wantInfo.ArtifactEntries) || len(info.StatusHistory) != len(wantInfo.StatusHistory) {
			t.Fatalf("Info = %+v, %v", info, err)
		}
		checks, err := r.Check(ctx, "", "")
		if err != nil || len(checks) != 1 || checks[0].CheckStatus != CheckReady {
			t.Fatalf("Check = %+v, %v", checks, err)
		}
		es, err := r.Entries(ctx, inventory.Filter{})
		if err != nil || len(es) != 1 || len(es[0].Manifest) == 0 {
			t.Fatalf("Entries = %+v, %v", es, err)
		}
		if _, err := r.Info(ctx, "acme.other", ""); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Info of an unknown skill = %v, want ErrNotFound", err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		dirsnap.Unchanged(t, before)
	})
	t.Run("no state directory", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "absent")
		r, err := OpenReadOnly(ctx, Config{StateDir: state})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if list, err := r.List(ctx, ListOptions{}); err != nil || len(list) != 0 {
			t.Fatalf("List = %v, %v", list, err)
		}
		if _, err := r.Info(ctx, "acme.ro", ""); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Info = %v, want ErrNotFound", err)
		}
		if _, err := r.Info(ctx, "../etc", ""); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Info of a bad id = %v, want ErrInvalidArgument", err)
		}
		if _, err := r.Check(ctx, "", ""); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Check = %v, want ErrNotFound", err)
		}
		if es, err := r.Entries(ctx, inventory.Filter{}); err != nil || len(es) != 0 {
			t.Fatalf("Entries = %v, %v", es, err)
		}
		if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the state directory was created: %v", err)
		}
	})
}
