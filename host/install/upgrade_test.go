package install

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
)

// TestUpgradeHeldBack installs 1.0.0 of a skill, then a 1.1.0 that fails
// its audit, its policy or its precompile: 1.1.0 is kept, quarantined and
// held back with that code, 1.0.0 stays current and active, Info lists the
// held-back version, Enable of 1.1.0 refuses (it still fails its checks,
// or it needs an override), and a good 1.2.0 then becomes current as
// usual, ending the hold. A first install that fails is current, as
// before: there is no active version to keep serving.
func TestUpgradeHeldBack(t *testing.T) {
	strict, err := policy.Parse([]byte("[http]\nallowed_hosts = [\"api.example.com\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		profile *policy.Profile
		bad     skillSpec // 1.1.0
		want    error
	}{
		{
			name: "audit", want: ErrAuditFailed,
			bad: skillSpec{id: "up.skill", version: "1.1.0", module: "wasi_path_open"},
		},
		{
			name: "policy", profile: strict, want: ErrPolicyViolation,
			bad: skillSpec{id: "up.skill", version: "1.1.0", module: "cap_http_storage", hosts: []string{"evil.example.org"}, writeRoots: []string{"cache"}},
		},
		{
			name: "precompile", want: ErrPrecompileFailed,
			bad: skillSpec{id: "up.skill", version: "1.1.0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			failing := false // set while 1.1.0 installs
			bus := &events.Bus{}
			in, err := Open(ctx, Config{StateDir: t.TempDir(), Policy: tt.profile, Bus: bus,
				Precompile: func(context.Context, string, string) error {
					if failing && tt.want == ErrPrecompileFailed {
						return errors.New("compile budget of the test")
					}
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			opts := InstallOptions{TrustedPublishers: trustAcme, AcceptCapabilities: true}

			if _, err := in.Install(ctx, build(t, skillSpec{id: "up.skill", version: "1.0.0"}), opts); err != nil {
				t.Fatal(err)
			}
			sub := bus.Subscribe(ctx, 8)
			defer sub.Close()
			failing = true
			res, err := in.Install(ctx, build(t, tt.bad), opts)
			failing = false
			if !errors.Is(err, tt.want) || res == nil {
				t.Fatalf("install 1.1.0: %+v, %v; want %v", res, err, tt.want)
			}
			code := errcode.Of(tt.want)
			if !res.Installed || res.Current || res.Status != inventory.StatusQuarantined || res.HeldBack == nil ||
				res.HeldBack.Code != code || res.PreviousVersion != "1.0.0" || !strings.Contains(err.Error(), "held back") {
				t.Fatalf("install 1.1.0: installed %v, current %v, status %s, held %+v, previous %q, err %v",
					res.Installed, res.Current, res.Status, res.HeldBack, res.PreviousVersion, err)
			}
			if ev := <-sub.C(); ev.Kind != events.SkillUpdated || ev.Version != "1.1.0" || ev.Details["held_back"] != code || ev.Details["current"] != false {
				t.Fatalf("event of the held-back install: %+v", ev)
			}
			cur, err := in.Inventory().Skill(ctx, "up.skill", "")
			if err != nil || cur.Version != "1.0.0" || cur.Status == nil || cur.Status.Status != inventory.StatusActive {
				t.Fatalf("current after the failed upgrade: %+v, %v; want 1.0.0 active", cur, err)
			}

			info, err := in.Info(ctx, "up.skill", "")
			if err != nil {
				t.Fatal(err)
			}
			if len(info.HeldBack) != 1 || info.HeldBack[0].Version != "1.1.0" || info.HeldBack[0].Code != code ||
				info.HeldBack[0].Status != "quarantined" || info.HeldBack[0].Message == "" {
				t.Fatalf("info held back = %+v", info.HeldBack)
			}
			if l, err := in.List(ctx, ListOptions{SkillID: "up.skill"}); err != nil || len(l) != 2 || l[1].HeldBack == nil || l[0].HeldBack != nil {
				t.Fatalf("list: %+v, %v", l, err)
			}

			// Enable of the held-back version: an override is needed, and
			// with it the re-check (verify, audit, policy) still fails.
			// Enable does not precompile: a version held back for its
			// precompile is made current by an enable with an override, as
			// a quarantined one always was.
			if _, err := in.Enable(ctx, "up.skill", "1.1.0", EnableOptions{}); !errors.Is(err, ErrOverrideRequired) {
				t.Fatalf("enable 1.1.0 without override: %v", err)
			}
			if tt.want != ErrPrecompileFailed {
				if _, err := in.Enable(ctx, "up.skill", "1.1.0", EnableOptions{Override: true}); !errors.Is(err, tt.want) {
					t.Fatalf("enable 1.1.0 --override: %v, want %v", err, tt.want)
				}
				if cur, _ := in.Inventory().Skill(ctx, "up.skill", ""); cur.Version != "1.0.0" {
					t.Fatalf("a refused enable moved current to %s", cur.Version)
				}
			}

			// A good 1.2.0 becomes current as usual; 1.1.0 is superseded.
			res, err = in.Install(ctx, build(t, skillSpec{id: "up.skill", version: "1.2.0"}), opts)
			if err != nil || !res.Current || res.HeldBack != nil || res.Status != inventory.StatusActive {
				t.Fatalf("install 1.2.0: %+v, %v", res, err)
			}
			if info, err := in.Info(ctx, "up.skill", ""); err != nil || len(info.HeldBack) != 0 || info.Inventory.Version != "1.2.0" {
				t.Fatalf("info after 1.2.0: %+v, %v", info, err)
			}
			mustState(t, in)
		})
	}

	t.Run("first install", func(t *testing.T) {
		ctx := context.Background()
		in := open(t, t.TempDir(), nil)
		res, err := in.Install(ctx, build(t, skillSpec{id: "up.first", version: "1.0.0", module: "wasi_path_open"}), InstallOptions{TrustedPublishers: trustAcme})
		if !errors.Is(err, ErrAuditFailed) || !res.Current || res.HeldBack != nil || res.Status != inventory.StatusQuarantined {
			t.Fatalf("first install: %+v, %v; want current, quarantined, not held back", res, err)
		}
		if strings.Contains(err.Error(), "held back") {
			t.Fatalf("first install said held back: %v", err)
		}
		mustState(t, in)
	})
}

// TestEnableHeldBackMakesCurrent checks that Enable of a held-back version
// whose checks now pass (the profile that refused it was relaxed) makes it
// active and current in one step, and that it is the only path: a forced
// reinstall of the same failing artifact keeps it held back.
func TestEnableHeldBackMakesCurrent(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	strict, err := policy.Parse([]byte("[http]\nallowed_hosts = [\"api.example.com\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	opts := InstallOptions{TrustedPublishers: trustAcme, AcceptCapabilities: true}
	bad := build(t, skillSpec{id: "up.skill", version: "1.1.0", module: "cap_http_storage", hosts: []string{"evil.example.org"}, writeRoots: []string{"cache"}})
	func() {
		in, err := Open(ctx, Config{StateDir: state, Policy: strict})
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if _, err := in.Install(ctx, build(t, skillSpec{id: "up.skill", version: "1.0.0"}), opts); err != nil {
			t.Fatal(err)
		}
		if _, err := in.Install(ctx, bad, opts); !errors.Is(err, ErrPolicyViolation) {
			t.Fatal(err)
		}
		o := opts
		o.Force = true
		res, err := in.Install(ctx, bad, o)
		if !errors.Is(err, ErrPolicyViolation) || res.Current || res.HeldBack == nil {
			t.Fatalf("forced reinstall of the held-back version: %+v, %v", res, err)
		}
	}()

	in := open(t, state, nil) // the default profile allows the host
	r, err := in.Enable(ctx, "up.skill", "1.1.0", EnableOptions{Override: true, Reason: "reviewed"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != inventory.StatusActive || !r.Current || r.PreviousCurrent != "1.0.0" || !r.Changed {
		t.Fatalf("enable 1.1.0: %+v", r)
	}
	e, err := in.Inventory().Skill(ctx, "up.skill", "")
	if err != nil || e.Version != "1.1.0" || e.HeldBack != nil || e.Status.Status != inventory.StatusActive {
		t.Fatalf("current after enable: %+v, %v", e, err)
	}
	// Enabling it again changes nothing.
	if r, err := in.Enable(ctx, "up.skill", "1.1.0", EnableOptions{}); err != nil || r.Changed || !r.Current || r.PreviousCurrent != "" {
		t.Fatalf("second enable: %+v, %v", r, err)
	}
	mustState(t, in)
}
