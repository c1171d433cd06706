package install

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"testing"

	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/trust"
)

// TestTOFURefusedInstallPinsNothing checks that an install with trust on
// first use that is refused after verification (a capability escalation,
// a cancellation while precompiling, a commit that fails) leaves the trust
// store as it was; the same install once accepted pins the key.
func TestTOFURefusedInstallPinsNothing(t *testing.T) {
	newKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x33}, ed25519.SeedSize))
	tests := []struct {
		name string
		// run installs the TOFU artifact the way the case refuses it.
		run  func(t *testing.T, state string) error
		want func(error) bool
	}{
		{
			name: "capability escalation",
			run: func(t *testing.T, state string) error {
				in := open(t, state, nil)
				ctx := context.Background()
				if _, err := in.Install(ctx, build(t, skillSpec{id: "tofu.esc", version: "1.0.0"}), InstallOptions{TrustedPublishers: trustAcme}); err != nil {
					t.Fatal(err)
				}
				_, err := in.Install(ctx, build(t, skillSpec{id: "tofu.esc", version: "2.0.0", publisher: "newpub", key: newKey,
					module: "cap_http_storage", hosts: []string{"api.example.com"}, writeRoots: []string{"cache"}}), InstallOptions{AllowTOFU: true})
				return err
			},
			want: func(err error) bool { return errors.Is(err, policy.ErrCapabilityEscalation) },
		},
		{
			name: "cancelled while precompiling",
			run: func(t *testing.T, state string) error {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				in, err := Open(ctx, Config{StateDir: state, Precompile: func(ctx context.Context, _, _ string) error {
					cancel()
					return ctx.Err()
				}})
				if err != nil {
					t.Fatal(err)
				}
				defer in.Close()
				_, err = in.Install(ctx, build(t, skillSpec{id: "tofu.cancel", version: "1.0.0", publisher: "newpub", key: newKey}), InstallOptions{AllowTOFU: true})
				return err
			},
			want: func(err error) bool { return errors.Is(err, context.Canceled) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			if err := tt.run(t, state); !tt.want(err) {
				t.Fatalf("install: %v", err)
			}
			in := open(t, state, nil)
			s, err := in.trust.Load(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if k, ok := s.TOFUKey("newpub"); ok {
				t.Fatalf("a refused install pinned newpub to %s", k)
			}
			if pins, err := in.db.PendingPins(context.Background()); err != nil || len(pins) != 0 {
				t.Fatalf("pending pins %v, %v", pins, err)
			}
			mustState(t, in)
		})
	}

	// Accepted, the same kind of install pins the key and leaves no
	// pending row.
	state := t.TempDir()
	in := open(t, state, nil)
	res, err := in.Install(context.Background(), build(t, skillSpec{id: "tofu.ok", version: "1.0.0", publisher: "newpub", key: newKey}), InstallOptions{AllowTOFU: true})
	if err != nil || res.TrustDecision != "tofu_newly_pinned" {
		t.Fatalf("install: %+v, %v", res, err)
	}
	s, err := in.trust.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.TOFUKey("newpub"); !ok {
		t.Fatal("the accepted install did not pin newpub")
	}
	if _, err := os.Stat(in.TrustStorePath()); err != nil {
		t.Fatal(err)
	}
	mustState(t, in)
}

// TestTOFUConcurrentFirstUses runs two installs at once, from two
// Installers on one state directory, of two skills of one new publisher
// signed by two different keys: exactly one commits and pins its key, the
// other is refused with tofu_key_mismatch and leaves nothing installed.
func TestTOFUConcurrentFirstUses(t *testing.T) {
	for round := range 4 {
		state := t.TempDir()
		ins := []*Installer{open(t, state, nil), open(t, state, nil)}
		keys := []ed25519.PrivateKey{
			ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x41}, ed25519.SeedSize)),
			ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x42}, ed25519.SeedSize)),
		}
		ids := []string{"race.one", "race.two"}
		arts := [][]byte{
			build(t, skillSpec{id: ids[0], version: "1.0.0", publisher: "racer", key: keys[0]}),
			build(t, skillSpec{id: ids[1], version: "1.0.0", publisher: "racer", key: keys[1]}),
		}
		errs := make([]error, 2)
		done := make(chan int)
		for i := range 2 {
			go func() {
				_, errs[i] = ins[i].Install(context.Background(), arts[i], InstallOptions{AllowTOFU: true})
				done <- i
			}()
		}
		<-done
		<-done
		won := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if won >= 0 {
					t.Fatalf("round %d: both installs committed", round)
				}
				won = i
			case !errors.Is(err, trust.ErrTOFUKeyMismatch):
				t.Fatalf("round %d: install %d: %v", round, i, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: neither install committed: %v", round, errs)
		}
		s, err := ins[0].trust.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := s.TOFUKey("racer"); k != hex.EncodeToString(keys[won].Public().(ed25519.PublicKey)) {
			t.Fatalf("round %d: pinned %s, not the winner's key", round, k)
		}
		if _, err := ins[0].Inventory().Skill(context.Background(), ids[1-won], ""); !errors.Is(err, ErrNotFound) {
			t.Fatalf("round %d: the refused skill is installed (%v)", round, err)
		}
		mustState(t, ins[0])
	}
}
