package install

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"testing"

	"github.com/palyra-go/palyra/host/policy"
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
