package install

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
)

func TestReaudit(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	in := open(t, state, nil)
	install := func(s skillSpec) {
		t.Helper()
		if _, err := in.Install(ctx, build(t, s), InstallOptions{TrustedPublishers: trustAcme}); err != nil && s.module != "wasi_path_open" {
			t.Fatal(err)
		}
	}
	install(skillSpec{id: "acme.passing", version: "1.0.0"})
	install(skillSpec{id: "acme.tampered", version: "1.0.0"})
	install(skillSpec{id: "acme.web", version: "1.0.0", module: "cap_http_storage", hosts: []string{"api.example.com"}, writeRoots: []string{"cache"}})
	install(skillSpec{id: "acme.other", version: "1.0.0", module: "cap_http_storage", hosts: []string{"other.example.net"}, writeRoots: []string{"cache"}})
	install(skillSpec{id: "acme.fs", version: "1.0.0", module: "wasi_path_open"}) // quarantined at install
	install(skillSpec{id: "acme.off", version: "1.0.0"})
	if _, err := in.Disable(ctx, "acme.off", "", "", ""); err != nil {
		t.Fatal(err)
	}
	_ = in.Close()

	// One byte appended to an installed artifact.
	p := filepath.Join(state, "skills", "acme.tampered", "1.0.0", ArtifactFile)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte{0})
	_ = f.Close()

	// A profile that no longer allows other.example.net.
	strict, err := policy.Parse([]byte("[http]\nallowed_hosts = [\"api.example.com\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	bus := &events.Bus{}
	in2, err := Open(ctx, Config{StateDir: state, Policy: strict, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	defer in2.Close()
	sub := bus.Subscribe(ctx, 16)
	defer sub.Close()
	histBefore, _ := in2.Inventory().StatusHistory(ctx, "acme.fs")

	rep, err := in2.Reaudit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		after       inventory.Status
		quarantined bool
		reason      string
	}{
		"acme.passing":  {inventory.StatusActive, false, ""},
		"acme.web":      {inventory.StatusActive, false, ""},
		"acme.tampered": {inventory.StatusQuarantined, true, "reaudit: installed artifact missing or modified"},
		"acme.other":    {inventory.StatusQuarantined, true, `reaudit: policy_violation: capabilities.http_egress_allowlist[0] "other.example.net"`},
		"acme.fs":       {inventory.StatusQuarantined, false, "reaudit: "},
		"acme.off":      {inventory.StatusDisabled, false, ""},
	}
	if rep.Checked != len(want) || rep.Quarantined != 2 || rep.Passed != 3 {
		t.Fatalf("report %+v", rep)
	}
	for _, o := range rep.Outcomes {
		w := want[o.SkillID]
		if o.After != w.after || o.Quarantined != w.quarantined || (w.reason != "" && !strings.HasPrefix(strings.Join(o.Reasons, "; "), w.reason)) {
			t.Errorf("%s: %+v, want %+v", o.SkillID, o, w)
		}
		e, _ := in2.Inventory().Skill(ctx, o.SkillID, "")
		if e.Status.Status != w.after {
			t.Errorf("%s: status %s, want %s", o.SkillID, e.Status.Status, w.after)
		}
		if w.quarantined && (e.Status.Principal != PrincipalReaudit || !strings.HasPrefix(e.Status.Reason, ReauditPrefix)) {
			t.Errorf("%s: status row %+v", o.SkillID, e.Status)
		}
	}
	// Exactly the two new quarantines were published; the skill already
	// quarantined got no new event.
	got := map[string]bool{}
	for len(sub.C()) > 0 {
		ev := <-sub.C()
		if ev.Kind != events.SkillQuarantined || ev.Principal != PrincipalReaudit {
			t.Errorf("event %+v", ev)
		}
		got[ev.SkillID] = true
	}
	if len(got) != 2 || !got["acme.tampered"] || !got["acme.other"] {
		t.Errorf("events for %v", got)
	}
	if histAfter, _ := in2.Inventory().StatusHistory(ctx, "acme.fs"); len(histAfter) != len(histBefore) {
		t.Errorf("already quarantined skill got %d new events", len(histAfter)-len(histBefore))
	}

	// A second run changes nothing: it never moves back towards active.
	rep, err = in2.Reaudit(ctx)
	if err != nil || rep.Quarantined != 0 {
		t.Fatalf("second reaudit %+v, %v", rep, err)
	}
}
