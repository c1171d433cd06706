package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
)

// TestRemoveReferencedByHook: locally and through a daemon, skills remove
// of a skill an enabled hook binding runs fails with
// skill_referenced_by_hook, naming the binding and hinting --force, and
// changes nothing; with --force it removes the skill and disables the
// binding, which then no longer blocks.
func TestRemoveReferencedByHook(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	url := startDaemon(t, state)
	for _, m := range []struct {
		name  string
		extra []string
	}{{"local", nil}, {"daemon", []string{"--url", url}}} {
		t.Run(m.name, func(t *testing.T) {
			run := func(args ...string) result { return cli(t, state, "", append(args, m.extra...)...) }
			id := "test.ref" + m.name
			if r := run("skills", "install", "--json", "--allow-tofu", "--artifact", probeArtifact(t, dir, id, "0.1.0")); r.code != 0 {
				t.Fatalf("install: %s%s", r.stdout, r.stderr)
			}
			hook := "gate." + m.name
			if r := run("hooks", "bind", hook, "--event", "skill:installed", "--skill", id, "--tool", "test.probe"); r.code != 0 {
				t.Fatalf("bind: %s%s", r.stdout, r.stderr)
			}

			r := run("skills", "remove", id)
			first, rest, _ := strings.Cut(r.stderr, "\n")
			if r.code == 0 || !strings.HasSuffix(first, "[skill_referenced_by_hook]") || !strings.Contains(first, hook+" (skill:installed)") ||
				!strings.Contains(rest, "hint: use --force") {
				t.Fatalf("remove: exit %d\n%s", r.code, r.stderr)
			}
			j := run("skills", "remove", id, "--json")
			var rep errorReport
			if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil || rep.Error.Code != "skill_referenced_by_hook" || !strings.Contains(rep.Error.Hint, "--force") {
				t.Fatalf("remove --json: %v %s", err, j.stdout)
			}
			if r := run("skills", "info", id, "--json"); r.code != 0 {
				t.Fatalf("the refused remove removed the skill: %s", r.stdout)
			}

			r = run("skills", "remove", id, "--force")
			if r.code != 0 || !strings.Contains(r.stdout, "skill.removed skill_id="+id) ||
				!strings.Contains(r.stdout, "hook.disabled hook_id="+hook+" event=skill:installed plugin_id="+id) {
				t.Fatalf("remove --force: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			var bs struct {
				Bindings []host.HookBinding `json:"bindings"`
			}
			run("hooks", "list", "--json").decode(t, &bs)
			found := false
			for _, b := range bs.Bindings {
				if b.HookID == hook {
					found = true
					if b.Enabled {
						t.Errorf("binding still enabled after remove --force: %+v", b)
					}
				}
			}
			if !found {
				t.Fatalf("binding %s gone: %+v", hook, bs)
			}

			// A disabled binding does not block.
			if r := run("skills", "install", "--json", "--allow-tofu", "--artifact", probeArtifact(t, dir, id, "0.1.0")); r.code != 0 {
				t.Fatalf("install again: %s", r.stdout)
			}
			var rr host.RemoveResult
			run("skills", "remove", id, "--json").decode(t, &rr)
			if len(rr.Versions) != 1 || len(rr.DisabledHooks) != 0 {
				t.Fatalf("remove with a disabled binding: %+v", rr)
			}
		})
	}
}
