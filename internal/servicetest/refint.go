package servicetest

import (
	"context"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
)

// refintCases are the referential integrity of hook bindings on remove: a
// remove that would leave no version of a skill an enabled binding runs
// is refused with skill_referenced_by_hook naming the bindings; with force
// it disables them in the same change; disabled bindings do not block. A
// binding made without saying enabled is enabled (the wire forms of
// BindHook carry an absent enabled as true). They install skillH and
// leave nothing behind.
func refintCases() []Case {
	return []Case{
		{Name: "refint_setup", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			if err := install(ctx, t, s, skillH); err != nil {
				return err
			}
			for _, b := range []host.HookBinding{
				{HookID: "conf.ref-on", Event: "skill:installed", PluginID: skillH, ToolID: "conf.echo", Enabled: true},
				{HookID: "conf.ref-tool", Event: "run:before_tool", PluginID: skillH, ToolID: "conf.echo", Enabled: true},
				{HookID: "conf.ref-off", Event: "skill:removed", PluginID: skillH, ToolID: "conf.echo", Enabled: false},
				{HookID: "conf.ref-other", Event: "skill:removed", PluginID: skillA, ToolID: "conf.echo", Enabled: true},
			} {
				got, err := s.BindHook(ctx, b)
				if err != nil {
					return err
				}
				if got.Enabled != b.Enabled {
					t.Fatalf("bind %s: enabled %v, want %v", b.HookID, got.Enabled, b.Enabled)
				}
			}
			return nil
		}},
		{Name: "remove_referenced_by_hook", Code: "skill_referenced_by_hook", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Remove(ctx, host.RemoveRequest{SkillID: skillH, PurgeStorage: true})
			if err == nil {
				t.Fatal("remove of a skill enabled hooks run succeeded")
			}
			msg := err.Error()
			for _, want := range []string{"conf.ref-on", "skill:installed", "conf.ref-tool", "run:before_tool", "force"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not name %q", msg, want)
				}
			}
			for _, not := range []string{"conf.ref-off", "conf.ref-other"} {
				if strings.Contains(msg, not) {
					t.Errorf("message %q names %q, which does not block", msg, not)
				}
			}
			// Nothing changed: the skill is installed and runs, the
			// bindings are as they were.
			if _, cerr := call(ctx, s, skillH, `{"text":"still here"}`); cerr != nil {
				t.Errorf("call after a refused remove: %v", cerr)
			}
			expectHooks(ctx, t, s, map[string]bool{"conf.ref-on": true, "conf.ref-tool": true, "conf.ref-off": false, "conf.ref-other": true})
			return err
		}},
		{Name: "remove_referenced_by_hook_force", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r, err := s.Remove(ctx, host.RemoveRequest{SkillID: skillH, PurgeStorage: true, Force: true})
			if err != nil {
				return err
			}
			var ids []string
			for _, b := range r.DisabledHooks {
				if b.Enabled || b.Operator.UpdatedBy != "conformance" {
					t.Errorf("disabled hook reported as %+v", b)
				}
				ids = append(ids, b.HookID)
			}
			if strings.Join(ids, ",") != "conf.ref-on,conf.ref-tool" || len(r.Versions) != 1 || !r.StoragePurged {
				t.Fatalf("remove --force: %+v (disabled %v)", r, ids)
			}
			expectHooks(ctx, t, s, map[string]bool{"conf.ref-on": false, "conf.ref-tool": false, "conf.ref-off": false, "conf.ref-other": true})
			if _, err := s.Info(ctx, host.SkillRef{SkillID: skillH}); err == nil {
				t.Fatal("the skill is still installed after remove --force")
			}
			return nil
		}},
		{Name: "remove_with_disabled_hooks_only", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			// The bindings left (disabled) do not block a remove.
			if err := install(ctx, t, s, skillH); err != nil {
				return err
			}
			r, err := s.Remove(ctx, host.RemoveRequest{SkillID: skillH})
			if err == nil && len(r.DisabledHooks) != 0 {
				t.Fatalf("remove disabled hooks: %+v", r.DisabledHooks)
			}
			return err
		}},
		{Name: "refint_cleanup", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			for _, id := range []string{"conf.ref-on", "conf.ref-tool", "conf.ref-off", "conf.ref-other"} {
				if err := s.RemoveHook(ctx, id); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}

// expectHooks checks that the bindings named in want exist with the
// enabled state given.
func expectHooks(ctx context.Context, t *testing.T, s host.Service, want map[string]bool) {
	t.Helper()
	bs, err := s.Hooks(ctx)
	if err != nil {
		t.Fatalf("hooks: %v", err)
	}
	got := map[string]bool{}
	for _, b := range bs {
		got[b.HookID] = b.Enabled
	}
	for id, en := range want {
		if e, ok := got[id]; !ok || e != en {
			t.Errorf("hook %s: present %v enabled %v, want enabled %v", id, ok, e, en)
		}
	}
}
