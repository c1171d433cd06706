package install

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/trust"
)

func TestStatusTransitions(t *testing.T) {
	ctx := context.Background()
	bus := &events.Bus{}
	in, err := Open(ctx, Config{StateDir: t.TempDir(), Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.good", version: "1.0.0"}), InstallOptions{TrustedPublishers: trustAcme}); err != nil {
		t.Fatal(err)
	}
	sub := bus.Subscribe(ctx, 16)
	defer sub.Close()

	steps := []struct {
		name   string
		do     func() (*StatusResult, error)
		want   error
		status inventory.Status
		event  string
	}{
		{"quarantine", func() (*StatusResult, error) {
			return in.Quarantine(ctx, "ACME.good", "", "suspicious", "user:alice")
		}, nil, inventory.StatusQuarantined, events.SkillQuarantined},
		{"disable refused while quarantined", func() (*StatusResult, error) {
			return in.Disable(ctx, "acme.good", "", "off", "")
		}, ErrQuarantined, inventory.StatusQuarantined, ""},
		{"enable without override refused", func() (*StatusResult, error) {
			return in.Enable(ctx, "acme.good", "", EnableOptions{Reason: "ok"})
		}, ErrOverrideRequired, inventory.StatusQuarantined, ""},
		{"enable with override", func() (*StatusResult, error) {
			return in.Enable(ctx, "acme.good", "1.0.0", EnableOptions{Override: true, Reason: "reviewed", Principal: "user:alice"})
		}, nil, inventory.StatusActive, events.SkillEnabled},
		{"disable", func() (*StatusResult, error) {
			return in.Disable(ctx, "acme.good", "", "maintenance", "")
		}, nil, inventory.StatusDisabled, events.SkillDisabled},
		{"enable a disabled skill needs no override", func() (*StatusResult, error) {
			return in.Enable(ctx, "acme.good", "", EnableOptions{})
		}, nil, inventory.StatusActive, events.SkillEnabled},
		{"enable an active skill changes nothing", func() (*StatusResult, error) {
			return in.Enable(ctx, "acme.good", "", EnableOptions{})
		}, nil, inventory.StatusActive, ""},
		{"unknown skill", func() (*StatusResult, error) {
			return in.Quarantine(ctx, "acme.nope", "", "x", "")
		}, ErrNotFound, inventory.StatusActive, ""},
		{"unknown version", func() (*StatusResult, error) {
			return in.Quarantine(ctx, "acme.good", "9.9.9", "x", "")
		}, ErrNotFound, inventory.StatusActive, ""},
		{"bad version", func() (*StatusResult, error) {
			return in.Quarantine(ctx, "acme.good", "one", "x", "")
		}, ErrInvalidArgument, inventory.StatusActive, ""},
	}
	for _, st := range steps {
		res, err := st.do()
		if !errors.Is(err, st.want) || (st.want == nil) != (err == nil) {
			t.Fatalf("%s: error %v, want %v", st.name, err, st.want)
		}
		e, _ := in.Inventory().Skill(ctx, "acme.good", "")
		if e.Status.Status != st.status {
			t.Fatalf("%s: status %s, want %s", st.name, e.Status.Status, st.status)
		}
		if err == nil && (res.Status != st.status || res.Changed != (st.event != "")) {
			t.Fatalf("%s: result %+v", st.name, res)
		}
		if st.event != "" {
			ev := <-sub.C()
			if ev.Kind != st.event || ev.ID == 0 || ev.Status != string(st.status) {
				t.Fatalf("%s: event %+v", st.name, ev)
			}
		}
		if len(sub.C()) != 0 {
			t.Fatalf("%s: unexpected event %+v", st.name, <-sub.C())
		}
	}
	hist, _ := in.Inventory().StatusHistory(ctx, "acme.good")
	var got []string
	for _, h := range hist {
		got = append(got, string(h.Status)+"/"+h.Principal)
	}
	want := []string{"active/system:install", "quarantined/user:alice", "active/user:alice", "disabled/user:local", "active/user:local"}
	if !slices.Equal(got, want) {
		t.Fatalf("history %v, want %v", got, want)
	}
}

// TestMarkCrashLooping: only an active status becomes crashlooping, with
// its journal event and bus event like the other lifecycle verbs; other
// statuses stay; Enable lifts it.
func TestMarkCrashLooping(t *testing.T) {
	ctx := context.Background()
	bus := &events.Bus{}
	in, err := Open(ctx, Config{StateDir: t.TempDir(), Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for _, id := range []string{"acme.good", "acme.two", "acme.quar", "acme.off"} {
		if _, err := in.Install(ctx, build(t, skillSpec{id: id, version: "1.0.0"}), InstallOptions{TrustedPublishers: trustAcme}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := in.Quarantine(ctx, "acme.quar", "", "suspicious", "user:alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Disable(ctx, "acme.off", "", "maintenance", "user:alice"); err != nil {
		t.Fatal(err)
	}
	sub := bus.Subscribe(ctx, 16)
	defer sub.Close()
	long := strings.Repeat("x", inventory.MaxReasonBytes+100)

	tests := []struct {
		name                      string
		id, version               string
		reason, principal         string
		want                      error
		changed                   bool
		status                    inventory.Status
		wantReason, wantPrincipal string // of the status row afterwards
	}{
		{"active becomes crashlooping", "ACME.good", "1.0.0", "crashed 5 times", "", nil, true,
			inventory.StatusCrashlooping, "crashed 5 times", PrincipalSupervisor},
		{"crashlooping stays", "acme.good", "1.0.0", "crashed again", "", nil, false,
			inventory.StatusCrashlooping, "crashed 5 times", PrincipalSupervisor},
		{"current version, named principal, reason bounded", "acme.two", "", long, "system:daemon", nil, true,
			inventory.StatusCrashlooping, boundReason(long), "system:daemon"},
		{"quarantined stays", "acme.quar", "1.0.0", "crashed", "", nil, false,
			inventory.StatusQuarantined, "suspicious", "user:alice"},
		{"disabled stays", "acme.off", "", "crashed", "", nil, false,
			inventory.StatusDisabled, "maintenance", "user:alice"},
		{"unknown skill", "acme.nope", "", "crashed", "", ErrNotFound, false, "", "", ""},
		{"unknown version", "acme.good", "9.9.9", "crashed", "", ErrNotFound, false, "", "", ""},
	}
	for _, tt := range tests {
		changed, updatedAt, err := in.MarkCrashLooping(ctx, tt.id, tt.version, tt.reason, tt.principal)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Fatalf("%s: error %v, want %v", tt.name, err, tt.want)
		}
		if tt.want != nil {
			if errcode.Of(err) != "skill_not_found" || changed || !updatedAt.IsZero() {
				t.Fatalf("%s: %v, %v, code %s", tt.name, changed, updatedAt, errcode.Of(err))
			}
			if len(sub.C()) != 0 {
				t.Fatalf("%s: unexpected event %+v", tt.name, <-sub.C())
			}
			continue
		}
		e, err := in.Inventory().Skill(ctx, strings.ToLower(tt.id), tt.version)
		if err != nil {
			t.Fatal(err)
		}
		st := e.Status
		if changed != tt.changed || st.Status != tt.status || st.Reason != tt.wantReason || st.Principal != tt.wantPrincipal {
			t.Fatalf("%s: changed %v, row %+v", tt.name, changed, st)
		}
		if !tt.changed {
			if !updatedAt.IsZero() {
				t.Fatalf("%s: updatedAt %v without a change", tt.name, updatedAt)
			}
			if len(sub.C()) != 0 {
				t.Fatalf("%s: unexpected event %+v", tt.name, <-sub.C())
			}
			continue
		}
		if !updatedAt.Equal(st.UpdatedAt) {
			t.Fatalf("%s: updatedAt %v, row updated at %v", tt.name, updatedAt, st.UpdatedAt)
		}
		hist, err := in.Inventory().StatusHistory(ctx, e.SkillID)
		if err != nil {
			t.Fatal(err)
		}
		last := hist[len(hist)-1]
		if last.Kind != inventory.EventCrashlooping || last.Status != inventory.StatusCrashlooping || last.Reason != tt.wantReason ||
			last.Principal != tt.wantPrincipal {
			t.Fatalf("%s: journal %+v", tt.name, last)
		}
		ev := <-sub.C()
		if ev.Kind != events.SkillCrashLooping || ev.ID != last.ID || ev.SkillID != e.SkillID || ev.Version != e.Version ||
			ev.Status != "crashlooping" || ev.Reason != tt.wantReason || ev.Principal != tt.wantPrincipal {
			t.Fatalf("%s: event %+v, journal id %d", tt.name, ev, last.ID)
		}
	}

	// Enable lifts it, without an override.
	res, err := in.Enable(ctx, "acme.good", "", EnableOptions{Reason: "fixed"})
	if err != nil || !res.Changed || res.PreviousStatus != inventory.StatusCrashlooping || res.Status != inventory.StatusActive {
		t.Fatalf("enable: %+v, %v", res, err)
	}
	if ev := <-sub.C(); ev.Kind != events.SkillEnabled {
		t.Fatalf("event %+v", ev)
	}
}

// TestEnableRechecks: enable with an override still refuses what fails
// verification, the audit or the policy, and changes nothing.
func TestEnableRechecks(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	in := open(t, state, nil)
	_, err := in.Install(ctx, build(t, skillSpec{id: "acme.fs", version: "1.0.0", module: "wasi_path_open"}), InstallOptions{TrustedPublishers: trustAcme})
	if !errors.Is(err, ErrAuditFailed) {
		t.Fatal(err)
	}
	_, err = in.Enable(ctx, "acme.fs", "", EnableOptions{Override: true, Reason: "trust me"})
	if errcode.Of(err) != "audit_failed" || !strings.Contains(err.Error(), "path_open") {
		t.Fatalf("enable of a failing skill: %v", err)
	}
	if e, _ := in.Inventory().Skill(ctx, "acme.fs", ""); e.Status.Status != inventory.StatusQuarantined {
		t.Fatalf("status %s after a refused enable", e.Status.Status)
	}

	// A good skill whose artifact changed on disk.
	if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.good", version: "1.0.0"}), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Disable(ctx, "acme.good", "", "", ""); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(in.VersionDir("acme.good", "1.0.0"), ArtifactFile)
	orig, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(slices.Clone(orig), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Enable(ctx, "acme.good", "", EnableOptions{}); !errors.Is(err, ErrInstalledArtifact) {
		t.Fatalf("enable of a modified artifact: %v", err)
	}
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}

	// The publisher is no longer trusted.
	f := trust.OpenFile(in.TrustStorePath())
	if err := f.Update(ctx, func(s *trust.Store) (bool, error) { *s = *trust.NewStore(); return true, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Enable(ctx, "acme.good", "", EnableOptions{}); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Fatalf("enable of an untrusted publisher's skill: %v", err)
	}
	if e, _ := in.Inventory().Skill(ctx, "acme.good", ""); e.Status.Status != inventory.StatusDisabled {
		t.Fatalf("status %s after a refused enable", e.Status.Status)
	}
}

func TestRemove(t *testing.T) {
	ctx := context.Background()
	bus := &events.Bus{}
	in, err := Open(ctx, Config{StateDir: t.TempDir(), Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.multi", version: v}), InstallOptions{TrustedPublishers: trustAcme}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := in.Quarantine(ctx, "acme.multi", "1.1.0", "bad build", ""); err != nil {
		t.Fatal(err)
	}
	sub := bus.Subscribe(ctx, 8)
	defer sub.Close()

	// The current version: the next highest becomes current.
	res, err := in.Remove(ctx, "acme.multi", "2.0.0", "")
	if err != nil || !slices.Equal(res.Versions, []string{"2.0.0"}) || res.Current != "1.1.0" {
		t.Fatalf("remove 2.0.0: %+v, %v", res, err)
	}
	if _, err := os.Stat(in.VersionDir("acme.multi", "2.0.0")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("2.0.0 directory still there: %v", err)
	}
	if ev := <-sub.C(); ev.Kind != events.SkillRemoved || ev.Version != "2.0.0" || ev.ID == 0 {
		t.Fatalf("event %+v", ev)
	}
	mustState(t, in)

	// A quarantine outlives remove and reinstall.
	if _, err := in.Remove(ctx, "acme.multi", "1.1.0", ""); err != nil {
		t.Fatal(err)
	}
	r2, err := in.Install(ctx, build(t, skillSpec{id: "acme.multi", version: "1.1.0"}), InstallOptions{})
	if err != nil || r2.Status != inventory.StatusQuarantined || !slices.Equal(r2.Reasons, []string{"bad build"}) {
		t.Fatalf("reinstall of a quarantined version: %+v, %v", r2, err)
	}

	// Every version: the skill's directory goes too; history stays.
	res, err = in.Remove(ctx, "acme.multi", "", "user:bob")
	if err != nil || !slices.Equal(res.Versions, []string{"1.0.0", "1.1.0"}) || res.Current != "" {
		t.Fatalf("remove all: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(in.skillsDir, "acme.multi")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("skill directory still there: %v", err)
	}
	if _, err := in.Remove(ctx, "acme.multi", "", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("remove again: %v", err)
	}
	evs, _ := in.Inventory().Events(ctx, inventory.EventFilter{SkillID: "acme.multi", Limit: 100})
	removed := 0
	for _, ev := range evs {
		if ev.Kind == inventory.EventRemoved {
			removed++
		}
	}
	if removed != 4 {
		t.Fatalf("%d skill.removed events, want 4", removed)
	}
	mustState(t, in)
}

func TestVerifyAuditCheckInfoList(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	good := build(t, skillSpec{id: "acme.good", version: "1.0.0"})
	if _, err := in.Install(ctx, good, InstallOptions{AllowTOFU: true}); err != nil {
		t.Fatal(err)
	}
	bad := build(t, skillSpec{id: "acme.fs", version: "1.0.0", module: "wasi_path_open"})
	if _, err := in.Install(ctx, bad, InstallOptions{}); !errors.Is(err, ErrAuditFailed) {
		t.Fatal(err)
	}

	v, err := in.Verify(ctx, "acme.good", "")
	if err != nil || v.TrustDecision != "tofu_pinned" {
		t.Fatalf("verify: %+v, %v", v, err)
	}
	if e, _ := in.Inventory().Skill(ctx, "acme.good", ""); e.TrustDecision != "tofu_pinned" {
		t.Fatalf("recorded trust decision %s", e.TrustDecision)
	}

	a, err := in.AuditInstalled(ctx, "acme.fs", "")
	if err != nil || a.Passed || !errors.Is(a.Err(), ErrAuditFailed) || a.Source != "installed" {
		t.Fatalf("audit installed: %+v, %v", a, err)
	}
	a, err = in.AuditArtifact(ctx, good, AuditOptions{})
	if err != nil || !a.Passed || a.Err() != nil {
		t.Fatalf("audit artifact: %+v, %v", a, err)
	}

	checks, err := in.Check(ctx, "", "")
	if err != nil || len(checks) != 2 {
		t.Fatalf("check all: %+v, %v", checks, err)
	}
	for _, c := range checks {
		want := map[string]string{"acme.good": CheckReady, "acme.fs": CheckBlocked}[c.Inventory.SkillID]
		if c.CheckStatus != want || !c.TrustAccepted {
			t.Errorf("check %s: %s (%+v), want %s", c.Inventory.SkillID, c.CheckStatus, c.Reasons, want)
		}
	}
	if _, err := in.Check(ctx, "acme.none", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("check unknown: %v", err)
	}

	info, err := in.Info(ctx, "acme.good", "")
	if err != nil || info.Signature == nil || len(info.ArtifactEntries) != 5 || info.ArtifactError != "" ||
		info.Inventory.SkillName != "Test skill" || len(info.StatusHistory) != 1 {
		t.Fatalf("info: %+v, %v", info, err)
	}

	for _, tt := range []struct {
		opts ListOptions
		want []string
	}{
		{ListOptions{}, []string{"acme.fs", "acme.good"}},
		{ListOptions{QuarantinedOnly: true}, []string{"acme.fs"}},
		{ListOptions{EligibleOnly: true}, []string{"acme.good"}},
		{ListOptions{Publisher: "other"}, nil},
	} {
		l, err := in.List(ctx, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range l {
			ids = append(ids, e.SkillID)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("list %+v = %v, want %v", tt.opts, ids, tt.want)
		}
	}
}

// TestRecover builds the debris of crashed operations by hand and checks
// that Open repairs it.
func TestRecover(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	in := open(t, state, nil)
	old := build(t, skillSpec{id: "acme.good", version: "1.0.0"})
	if _, err := in.Install(ctx, old, InstallOptions{TrustedPublishers: trustAcme}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.other", version: "1.0.0"}), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = in.Close()
	skill := filepath.Join(state, "skills", "acme.good")
	vd := filepath.Join(skill, "1.0.0")
	// A forced reinstall that crashed after its rename: the old copy set
	// aside, a new directory in place, no commit.
	if err := os.Rename(vd, filepath.Join(skill, setAsidePrefix+"1.0.0")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(vd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vd, ArtifactFile), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A staging directory, an uncommitted version, and a skill with only
	// an uncommitted version.
	for _, d := range []string{filepath.Join(skill, stagingPrefix+"x/modules"), filepath.Join(skill, "1.2.0"),
		filepath.Join(state, "skills", "acme.ghost", "3.0.0")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Something that is not ours.
	if err := os.WriteFile(filepath.Join(skill, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(state, "skills", "acme.other", "1.0.0")); err != nil {
		t.Fatal(err)
	}

	in2 := open(t, state, nil)
	rep := in2.Recovered()
	if len(rep.Restored) != 1 || len(rep.RemovedStaging) != 1 || len(rep.RemovedOrphans) != 2 || len(rep.Missing) != 1 ||
		!strings.HasSuffix(rep.Missing[0], "acme.other/1.0.0") {
		t.Fatalf("recover report %+v", rep)
	}
	if got, _ := fileSHA256(filepath.Join(vd, ArtifactFile)); got != sha(old) {
		t.Fatal("the old copy was not restored")
	}
	if _, err := os.Stat(filepath.Join(state, "skills", "acme.ghost")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty skill directory kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(skill, "notes.txt")); err != nil {
		t.Fatalf("a file that is not ours was removed: %v", err)
	}
	// Reaudit quarantines the version whose directory is gone.
	ra, err := in2.Reaudit(ctx)
	if err != nil || ra.Quarantined != 1 {
		t.Fatalf("reaudit %+v, %v", ra, err)
	}
}

// Info gives the order in which skill.toml writes each input schema's
// properties (artifact.Build keeps the author's), which the manifest it
// returns (a map) has lost.
func TestInfoInputPropertyOrders(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	for _, s := range []skillSpec{
		{id: "acme.ordered", version: "1.0.0", inputSchema: `{ type = "object", properties = { zeta = { type = "string" }, alpha = { type = "object", properties = { y = { type = "string" }, x = { type = "string" } } } } }`},
		{id: "acme.plain", version: "1.0.0"},
	} {
		if _, err := in.Install(ctx, build(t, s), InstallOptions{AllowTOFU: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		id   string
		want manifest.PropertyOrders
	}{
		{"acme.ordered", manifest.PropertyOrders{"acme.run": {"": {"zeta", "alpha"}, "/properties/alpha": {"y", "x"}}}},
		{"acme.plain", manifest.PropertyOrders{"acme.run": {}}},
	} {
		info, err := in.Info(ctx, tt.id, "")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(info.InputPropertyOrders, tt.want) {
			t.Errorf("%s: orders %#v, want %#v", tt.id, info.InputPropertyOrders, tt.want)
		}
	}
	info, err := in.Info(ctx, "acme.ordered", "")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"input_property_orders":{"acme.run":{"":["zeta","alpha"],"/properties/alpha":["y","x"]}}`) {
		t.Errorf("the JSON has no input_property_orders in the author's order: %s", data)
	}
}
