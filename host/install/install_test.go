package install

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/trust"
)

func TestInstallOutcomes(t *testing.T) {
	otherKey := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	tampered := build(t, skillSpec{id: "acme.tampered", version: "1.0.0"})
	tampered = flipEntryByte(t, tampered)
	strict, err := policy.Parse([]byte("[http]\nallowed_hosts = [\"api.example.com\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		data    []byte
		opts    InstallOptions
		profile *policy.Profile
		// want is the error (nil for a clean install); installed says
		// whether the version must be in the inventory afterwards.
		want       error
		installed  bool
		status     inventory.Status
		reason     string // a substring of the quarantine reason
		trustAfter string
	}{
		{
			name: "good skill is active", installed: true, status: inventory.StatusActive,
			data: build(t, skillSpec{id: "acme.good", version: "1.0.0"}),
			opts: InstallOptions{TrustedPublishers: trustAcme}, trustAfter: "allowlisted",
		},
		{
			name: "path_open without filesystem capability is kept quarantined",
			data: build(t, skillSpec{id: "acme.fs", version: "1.0.0", module: "wasi_path_open"}),
			opts: InstallOptions{TrustedPublishers: trustAcme},
			want: ErrAuditFailed, installed: true, status: inventory.StatusQuarantined,
			reason: "wasi_snapshot_preview1.path_open",
		},
		{
			name: "host outside the profile is kept quarantined", profile: strict,
			data: build(t, skillSpec{id: "acme.egress", version: "1.0.0", module: "cap_http_storage", hosts: []string{"evil.example.org"}, writeRoots: []string{"cache"}}),
			opts: InstallOptions{TrustedPublishers: trustAcme},
			want: ErrPolicyViolation, installed: true, status: inventory.StatusQuarantined,
			reason: `"evil.example.org"`,
		},
		{
			name: "unknown publisher installs nothing",
			data: build(t, skillSpec{id: "acme.good", version: "1.0.0"}),
			want: trust.ErrUntrustedPublisher,
		},
		{
			name: "allowlisted publisher with another key installs nothing",
			data: build(t, skillSpec{id: "acme.good", version: "1.0.0", key: otherKey}),
			opts: InstallOptions{TrustedPublishers: trustAcme},
			want: trust.ErrTrustedPublisherKeyMismatch,
		},
		{
			name: "tampered artifact installs nothing",
			data: tampered, opts: InstallOptions{TrustedPublishers: trustAcme},
			want: artifact.ErrPayloadHashMismatch,
		},
		{
			name: "trust on first use pins the key", installed: true, status: inventory.StatusActive,
			data: build(t, skillSpec{id: "acme.good", version: "1.0.0"}),
			opts: InstallOptions{AllowTOFU: true}, trustAfter: "tofu_newly_pinned",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			in := open(t, t.TempDir(), tt.profile)
			res, err := in.Install(ctx, tt.data, tt.opts)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Install error = %v, want %v", err, tt.want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "install: ") {
				t.Errorf("error %q lacks the install: prefix", err)
			}
			rows, lerr := in.List(ctx, ListOptions{})
			if lerr != nil {
				t.Fatal(lerr)
			}
			if !tt.installed {
				if res != nil || len(rows) != 0 {
					t.Fatalf("refused install left result %+v, rows %+v", res, rows)
				}
				if ents, _ := os.ReadDir(in.skillsDir); slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.IsDir() }) {
					t.Fatalf("refused install left directories: %v", ents)
				}
				if s, _ := in.trust.Load(ctx); len(s.Publishers()) > 1 {
					t.Fatalf("refused install changed the trust store: %+v", s.Publishers())
				}
				mustState(t, in)
				return
			}
			if res == nil || !res.Installed || res.Status != tt.status || len(rows) != 1 || rows[0].Status != string(tt.status) {
				t.Fatalf("result %+v, rows %+v; want status %s", res, rows, tt.status)
			}
			if tt.reason != "" && !strings.Contains(rows[0].RuntimeStatus.Reason, tt.reason) {
				t.Fatalf("reason %q does not name %s", rows[0].RuntimeStatus.Reason, tt.reason)
			}
			if tt.reason != "" && !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("error %q does not name %s", err, tt.reason)
			}
			if tt.trustAfter != "" && res.TrustDecision != tt.trustAfter {
				t.Fatalf("trust decision %s, want %s", res.TrustDecision, tt.trustAfter)
			}
			if tt.status == inventory.StatusActive != rows[0].Eligibility.Eligible {
				t.Fatalf("eligibility %+v for status %s", rows[0].Eligibility, tt.status)
			}
			if res.ArtifactSHA256 != sha(tt.data) || rows[0].ArtifactSHA256 != res.ArtifactSHA256 || res.ToolCount != 1 {
				t.Fatalf("result %+v does not describe the artifact", res)
			}
			mustState(t, in)
		})
	}
}

// flipEntryByte rebuilds an artifact with one byte of its module flipped,
// signature.json kept: the payload hash no longer matches.
func flipEntryByte(t *testing.T, data []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	a, err := artifact.ReadBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string][]byte{}
	for _, n := range a.Names() {
		b, _ := a.Entry(n)
		entries[n] = slices.Clone(b)
	}
	entries["modules/module.wasm"][len(entries["modules/module.wasm"])-1] ^= 1
	p := filepath.Join(dir, "t.zip")
	writeZip(t, p, entries)
	out, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestInstallUpgradeFlow(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	bus := &events.Bus{}
	in, err := Open(ctx, Config{StateDir: state, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	sub := bus.Subscribe(ctx, 64)
	defer sub.Close()
	spec := skillSpec{id: "acme.web", version: "1.0.0", module: "cap_http_storage", hosts: []string{"api.example.com"}, writeRoots: []string{"cache"}}
	v1 := build(t, spec)
	opts := InstallOptions{TrustedPublishers: trustAcme, Source: Source{Ref: "/tmp/web.palyra-skill"}}

	res, err := in.Install(ctx, v1, opts)
	if err != nil || res.EventKind != inventory.EventInstalled || !res.Current || res.Status != inventory.StatusActive {
		t.Fatalf("first install: %+v, %v", res, err)
	}
	if res.Source.Kind != inventory.SourceLocalArtifact || res.Source.Ref != "/tmp/web.palyra-skill" {
		t.Fatalf("source %+v", res.Source)
	}

	// The same version again: refused, unchanged.
	if _, err := in.Install(ctx, v1, opts); !errors.Is(err, ErrAlreadyInstalled) || errcode.Of(err) != "already_installed" {
		t.Fatalf("reinstall: %v", err)
	}

	// Forced, with other bytes of the same version: replaced in place.
	spec.signedAt = signedAt.Add(time.Hour)
	v1b := build(t, spec)
	res, err = in.Install(ctx, v1b, InstallOptions{Force: true})
	if err != nil || !res.Replaced || res.ArtifactSHA256 != sha(v1b) || res.EventKind != inventory.EventUpdated {
		t.Fatalf("forced reinstall: %+v, %v", res, err)
	}
	if got, _ := fileSHA256(filepath.Join(in.VersionDir("acme.web", "1.0.0"), ArtifactFile)); got != sha(v1b) {
		t.Fatalf("installed artifact %s, want the forced one", got)
	}
	mustState(t, in)

	// A new version with a new host: refused with the diff, nothing written.
	spec2 := spec
	spec2.version, spec2.hosts = "1.1.0", []string{"api.example.com", "api2.example.com"}
	v2 := build(t, spec2)
	res, err = in.Install(ctx, v2, InstallOptions{})
	if !errors.Is(err, ErrCapabilityEscalation) || errcode.Of(err) != "capability_escalation" {
		t.Fatalf("escalating upgrade: %v", err)
	}
	if res == nil || res.Installed || !slices.Contains(res.CapabilityDiff, "+ http host api2.example.com") ||
		!strings.Contains(err.Error(), "+ http host api2.example.com") || res.PreviousVersion != "1.0.0" {
		t.Fatalf("escalation result %+v, error %v", res, err)
	}
	if _, err := in.Info(ctx, "acme.web", "1.1.0"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused upgrade is installed: %v", err)
	}

	// Accepted: installed, now current.
	res, err = in.Install(ctx, v2, InstallOptions{AcceptCapabilities: true})
	if err != nil || !res.Current || res.EventKind != inventory.EventUpdated || res.PreviousVersion != "1.0.0" ||
		len(res.CapabilityDiff) != 1 {
		t.Fatalf("accepted upgrade: %+v, %v", res, err)
	}

	// An older version without new capabilities: installed, not current.
	spec0 := spec
	spec0.version = "0.9.0"
	res, err = in.Install(ctx, build(t, spec0), InstallOptions{})
	if err != nil || res.Current {
		t.Fatalf("older version: %+v, %v", res, err)
	}
	l, err := in.List(ctx, ListOptions{SkillID: "ACME.Web "})
	if err != nil || len(l) != 3 || l[2].Version != "1.1.0" || l[2].InstallState != inventory.InstalledCurrent ||
		l[0].InstallState != inventory.InstalledSuperseded {
		t.Fatalf("list %+v, %v", l, err)
	}
	mustState(t, in)

	var kinds []string
	for len(sub.C()) > 0 {
		ev := <-sub.C()
		if ev.ID == 0 || ev.SkillID != "acme.web" {
			t.Errorf("bus event %+v lacks its journal id or skill", ev)
		}
		kinds = append(kinds, ev.Kind+" "+ev.Version)
	}
	want := []string{"skill:installed 1.0.0", "skill:updated 1.0.0", "skill:updated 1.1.0", "skill:updated 0.9.0"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("bus events %v, want %v", kinds, want)
	}
	hist, _ := in.Inventory().StatusHistory(ctx, "acme.web")
	if len(hist) != 4 {
		t.Fatalf("journal has %d status events, want 4: %+v", len(hist), hist)
	}
}

func TestInstallQuarantinedPublishesBoth(t *testing.T) {
	ctx := context.Background()
	bus := &events.Bus{}
	in, err := Open(ctx, Config{StateDir: t.TempDir(), Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	sub := bus.Subscribe(ctx, 8)
	defer sub.Close()
	res, err := in.Install(ctx, build(t, skillSpec{id: "acme.fs", version: "1.0.0", module: "wasi_path_open"}), InstallOptions{TrustedPublishers: trustAcme})
	if !errors.Is(err, ErrAuditFailed) || res == nil || res.Status != inventory.StatusQuarantined {
		t.Fatalf("install: %+v, %v", res, err)
	}
	a, b := <-sub.C(), <-sub.C()
	if a.Kind != events.SkillInstalled || b.Kind != events.SkillQuarantined || a.ID != b.ID || b.Status != "quarantined" ||
		!strings.Contains(b.Reason, "path_open") {
		t.Fatalf("events %+v, %+v", a, b)
	}
}

func TestInstallRefusedPinsNothing(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	// A publisher pinned on first use, then a refused reinstall (already
	// installed): the trust store is not rewritten.
	other := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	spec := skillSpec{id: "beta.tool", version: "1.0.0", publisher: "beta", key: other}
	if _, err := in.Install(ctx, build(t, spec), InstallOptions{AllowTOFU: true}); err != nil {
		t.Fatal(err)
	}
	spec.signedAt = signedAt.Add(time.Minute)
	before, _ := os.ReadFile(in.TrustStorePath())
	if _, err := in.Install(ctx, build(t, spec), InstallOptions{AllowTOFU: true}); !errors.Is(err, ErrAlreadyInstalled) {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(in.TrustStorePath())
	if string(before) != string(after) {
		t.Fatal("a refused install rewrote the trust store")
	}
	// An unknown publisher refused without TOFU pins nothing.
	spec3 := skillSpec{id: "gamma.tool", version: "1.0.0", publisher: "gamma", key: other}
	if _, err := in.Install(ctx, build(t, spec3), InstallOptions{}); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Fatal(err)
	}
	s, _ := in.trust.Load(ctx)
	if _, ok := s.TOFUKey("gamma"); ok {
		t.Fatal("refused publisher was pinned")
	}
}

func TestCheckLayout(t *testing.T) {
	tests := []struct {
		names []string
		ok    bool
	}{
		{[]string{"skill.toml", "modules/a.wasm", "assets/x/y"}, true},
		{[]string{"artifact.palyra-skill"}, false},
		{[]string{"install-metadata.json"}, false},
		{[]string{"assets/x", "assets/x/y"}, false},
		{[]string{"other/a/b", "other/a"}, false},
		{[]string{"assets/xy", "assets/x/y"}, true},
	}
	for _, tt := range tests {
		m := map[string][]byte{}
		for _, n := range tt.names {
			m[n] = nil
		}
		err := checkLayout(m)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrReservedEntry)) {
			t.Errorf("checkLayout(%v) = %v, want ok=%t", tt.names, err, tt.ok)
		}
	}
}

func TestNormalizeID(t *testing.T) {
	for in, want := range map[string]string{" ACME.Echo ": "acme.echo", "a_b-c.d": "a_b-c.d"} {
		if got, err := normalizeID(in); err != nil || got != want {
			t.Errorf("normalizeID(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", ".", "..", ".a", "a.", "a..b", "a/b", "c:temp", "a b"} {
		if _, err := normalizeID(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("normalizeID(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

func TestBoundReason(t *testing.T) {
	long := strings.Repeat("é", inventory.MaxReasonBytes)
	got := boundReason(long)
	if len(got) > inventory.MaxReasonBytes || !strings.HasSuffix(got, "[...]") || !strings.HasPrefix(got, "éé") {
		t.Fatalf("boundReason: %d bytes, suffix %q", len(got), got[len(got)-8:])
	}
	if boundReason("short") != "short" {
		t.Fatal("short reason changed")
	}
}

// TestInstallUndo: an install that fails after it started writing files
// leaves the skill as it was before (its staging directory and its new
// directory deleted, the set-aside copy of a forced reinstall put back),
// records nothing, and releases the skill's lock, whichever step failed.
func TestInstallUndo(t *testing.T) {
	oldSpec := skillSpec{id: "acme.undo", version: "1.0.0"}
	newSpec := oldSpec
	newSpec.signedAt = signedAt.Add(time.Hour)
	oldArt, newArt := build(t, oldSpec), build(t, newSpec)
	cancelIt := func(_ *Installer, cancel context.CancelFunc, _ string) error {
		cancel()
		return errors.New("interrupted")
	}
	closeIt := func(in *Installer, _ context.CancelFunc, _ string) error {
		return in.Close() // the commit then finds the inventory closed
	}
	blockIt := func(in *Installer, _ context.CancelFunc, _ string) error {
		return os.MkdirAll(filepath.Join(in.VersionDir("acme.undo", "1.0.0"), "junk"), 0o755)
	}
	tests := []struct {
		name string
		// prior installs oldArt first; the failing install is then a
		// forced reinstall.
		prior bool
		// fail runs in Config.Precompile, between staging and placing.
		fail func(in *Installer, cancel context.CancelFunc, modulePath string) error
		// check says whether the error is the expected one.
		check func(error) bool
		// leftDir: the version directory stays behind without an
		// artifact (not the install's: Recover deletes it).
		leftDir bool
	}{
		{"cancelled while precompiling", false, cancelIt, func(err error) bool { return errors.Is(err, context.Canceled) }, false},
		{"cancelled while precompiling a forced reinstall", true, cancelIt, func(err error) bool { return errors.Is(err, context.Canceled) }, false},
		{"commit fails", false, closeIt, func(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "install: commit ") }, false},
		{"commit of a forced reinstall fails", true, closeIt, func(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "install: commit ") }, false},
		{"move into place fails", false, blockIt, func(err error) bool { return errors.Is(err, os.ErrExist) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			state := t.TempDir()
			armed := false
			var in *Installer
			in, err := Open(ctx, Config{StateDir: state, Precompile: func(_ context.Context, modulePath, _ string) error {
				if !armed {
					return nil
				}
				return tt.fail(in, cancel, modulePath)
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			opts := InstallOptions{TrustedPublishers: trustAcme, Force: true}
			if tt.prior {
				if _, err := in.Install(ctx, oldArt, opts); err != nil {
					t.Fatal(err)
				}
			}
			armed = true
			res, err := in.Install(ctx, newArt, opts)
			if !tt.check(err) || res != nil {
				t.Fatalf("install: %+v, %v", res, err)
			}

			// The files, as the failed install left them.
			skillDir := filepath.Join(state, "skills", "acme.undo")
			names, err := os.ReadDir(skillDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if strings.HasPrefix(n.Name(), stagingPrefix) || strings.HasPrefix(n.Name(), setAsidePrefix) {
					t.Errorf("%s left behind", n.Name())
				}
			}
			versionDir := filepath.Join(skillDir, "1.0.0")
			got, err := os.ReadFile(filepath.Join(versionDir, ArtifactFile))
			switch {
			case tt.prior && (err != nil || sha(got) != sha(oldArt)):
				t.Errorf("the installed artifact was not put back: %v", err)
			case !tt.prior && !errors.Is(err, os.ErrNotExist):
				t.Errorf("artifact of the failed install left in place: %v", err)
			}
			if _, err := os.Stat(versionDir); !tt.prior && tt.leftDir == errors.Is(err, os.ErrNotExist) {
				t.Errorf("version directory: %v", err)
			}
			_ = in.Close()

			// A new Installer on the state: the lock is free and the
			// inventory is as before.
			in2, err := Open(context.Background(), Config{StateDir: state, LockTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer in2.Close()
			e, err := in2.Inventory().Skill(context.Background(), "acme.undo", "1.0.0")
			switch {
			case tt.prior && (err != nil || e.ArtifactSHA256 != sha(oldArt)):
				t.Errorf("inventory after the failed reinstall: %+v, %v", e, err)
			case !tt.prior && !errors.Is(err, ErrNotFound):
				t.Errorf("inventory after the failed install: %+v, %v", e, err)
			}
			mustState(t, in2)
			if _, err := in2.Install(context.Background(), newArt, opts); err != nil {
				t.Fatalf("install after the failed one: %v", err)
			}
			mustState(t, in2)
		})
	}
}
