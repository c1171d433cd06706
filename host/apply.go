package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/desired"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/source"
)

// ErrNotAccepted refuses an install or update of a version granted more
// than the desired-state document accepts for its skill; the step lists
// the excess.
var ErrNotAccepted = errcode.New("capabilities_not_accepted", "capabilities not accepted by the desired state")

// ErrDowngrade refuses to move a skill whose current version is above
// every version its constraint allows: apply never downgrades (remove the
// skill, or widen the constraint).
var ErrDowngrade = errcode.New("apply_downgrade", "desired state would downgrade a skill")

// Apply step actions.
const (
	ActionInstall    = "install"
	ActionUpdate     = "update"
	ActionRemove     = "remove"
	ActionKeep       = "keep"
	ActionUnmanaged  = "unmanaged"
	ActionBindHook   = "bind_hook"
	ActionUpdateHook = "update_hook"
	ActionRemoveHook = "remove_hook"
	ActionKeepHook   = "keep_hook"
)

// changes reports whether a step with action changes the host.
func changes(action string) bool {
	switch action {
	case ActionKeep, ActionUnmanaged, ActionKeepHook:
		return false
	}
	return true
}

// ApplyTo is Apply over any Service, with f reading the sources: the local
// host and a cluster node share it. Skill by skill, in document order, it
// plans the step (the versions the source has and the constraint allows, a
// dry run of an install or update against the document's accepted
// capabilities) and, unless req.DryRun, carries it out; then the removals
// (with req.Prune), then the hook bindings. A step that is refused or fails
// is reported on it (Error, Code) and the others still run: ApplyTo then
// returns the result with an error wrapping the first failure's sentinel.
// A canceled ctx stops it, returning the steps so far with the error. A
// converged host gets keep steps only and Changed false.
func ApplyTo(ctx context.Context, svc Service, f *source.Fetcher, req ApplyRequest) (*ApplyResult, error) {
	doc, err := desired.Parse([]byte(req.Document))
	if err != nil {
		return nil, err
	}
	l, err := svc.List(ctx, ListRequest{CurrentOnly: true})
	if err != nil {
		return nil, err
	}
	current := map[string]SkillListing{}
	for _, e := range l.Entries {
		current[e.SkillID] = e
	}
	res := &ApplyResult{DryRun: req.DryRun, Steps: []ApplyStep{}}
	var first error
	fail := func(st *ApplyStep, err error) {
		st.Error, st.Code = err.Error(), errcode.Of(err)
		if first == nil {
			first = err
		}
	}

	declared := map[string]bool{}
	for i := range doc.Skills {
		s := &doc.Skills[i]
		declared[s.ID] = true
		st, fetched, err := planSkill(ctx, svc, f, s, current)
		if err != nil {
			fail(&st, err)
			if ctx.Err() != nil {
				// Stop, but say what was done before: steps already
				// carried out stay reported.
				res.Steps = append(res.Steps, st)
				res.Changed = changed(res, req.DryRun)
				return res, fmt.Errorf("host: apply: stopped at %s: %w", s.ID, ctx.Err())
			}
		} else if changes(st.Action) && !req.DryRun {
			r, err := svc.Install(ctx, InstallRequest{
				Artifact: fetched.Artifact, Source: fetched.Source, AllowTOFU: s.AllowTOFU,
				// The document's accept list is the operator's acceptance.
				AcceptCapabilities: true,
			})
			if err != nil {
				fail(&st, err)
			} else {
				st.Done, st.ToVersion = true, r.Version
			}
		}
		res.Steps = append(res.Steps, st)
	}

	// A pruned skill whose bindings no declared hook keeps is removed with
	// force: its bindings are pruned below anyway, and a remove without
	// force would be refused (skill_referenced_by_hook) while they are
	// still there. A skill a declared hook runs is removed without force,
	// so that the document's contradiction is reported, not resolved.
	hooked := map[string]bool{}
	for _, h := range doc.Hooks {
		hooked[declaredBinding(h).PluginID] = true
	}
	for _, e := range l.Entries {
		if declared[e.SkillID] {
			continue
		}
		st := ApplyStep{Action: ActionUnmanaged, SkillID: e.SkillID, FromVersion: e.Version}
		if req.Prune {
			st.Action = ActionRemove
			if !req.DryRun {
				if _, err := svc.Remove(ctx, RemoveRequest{SkillID: e.SkillID, Force: !hooked[e.SkillID]}); err != nil {
					fail(&st, err)
				} else {
					st.Done = true
				}
			}
		}
		res.Steps = append(res.Steps, st)
	}

	bindings, err := svc.Hooks(ctx)
	if err != nil {
		res.Changed = changed(res, req.DryRun)
		return res, fmt.Errorf("host: apply: reading the hook bindings: %w", err)
	}
	bound := map[string]HookBinding{}
	for _, b := range bindings {
		bound[b.HookID] = b
	}
	wanted := map[string]bool{}
	for _, h := range doc.Hooks {
		want := declaredBinding(h)
		wanted[want.HookID] = true
		st := ApplyStep{Action: ActionBindHook, HookID: want.HookID, SkillID: want.PluginID}
		have, ok := bound[h.ID]
		if ok {
			st.Action = ActionKeepHook
			if !sameBinding(have, want) {
				st.Action = ActionUpdateHook
			}
		}
		if changes(st.Action) && !req.DryRun {
			if err := applyHook(ctx, svc, have, want, ok); err != nil {
				fail(&st, err)
			} else {
				st.Done = true
			}
		}
		res.Steps = append(res.Steps, st)
	}
	if req.Prune {
		for _, b := range bindings {
			if wanted[b.HookID] {
				continue
			}
			st := ApplyStep{Action: ActionRemoveHook, HookID: b.HookID, SkillID: b.PluginID}
			if !req.DryRun {
				if err := svc.RemoveHook(ctx, b.HookID); err != nil {
					fail(&st, err)
				} else {
					st.Done = true
				}
			}
			res.Steps = append(res.Steps, st)
		}
	}

	res.Changed = changed(res, req.DryRun)
	if first != nil {
		return res, fmt.Errorf("host: apply: %w", first)
	}
	return res, nil
}

// changed reports whether a step of res changed the host (in a dry run:
// would change it). A refused or failed step changes nothing.
func changed(res *ApplyResult, dryRun bool) bool {
	for _, st := range res.Steps {
		if changes(st.Action) && st.Code == "" && (st.Done || dryRun) {
			return true
		}
	}
	return false
}

// planSkill decides one declared skill's step: keep, install or update
// (with the fetched artifact, checked by a dry run against what the
// document accepts).
func planSkill(ctx context.Context, svc Service, f *source.Fetcher, s *desired.Skill, current map[string]SkillListing) (ApplyStep, *source.Fetched, error) {
	ref := source.Ref{OCI: s.OCI, RegistryURL: s.RegistryURL, RegistryDir: s.RegistryDir, RegistryCACert: s.RegistryCACert, PlainHTTP: s.PlainHTTP}
	if s.OCI == "" {
		ref.SkillID = s.ID
	}
	st := ApplyStep{SkillID: s.ID, Source: ref.String()}
	cur, installed := current[s.ID]
	if installed {
		st.FromVersion = cur.Version
	}
	versions, err := f.Versions(ctx, ref, s.AllowTOFU)
	if err != nil {
		st.Action = ActionInstall
		if installed {
			st.Action = ActionUpdate
		}
		return st, nil, fmt.Errorf("%s: versions at %s: %w", s.ID, ref, err)
	}
	target, ok := s.Pick(versions)
	switch {
	case installed && s.Allows(cur.Version) && (!ok || inventory.CompareVersions(cur.Version, target) >= 0):
		st.Action, st.ToVersion = ActionKeep, cur.Version
		return st, nil, keptWithinAccept(ctx, svc, s, cur.Version, &st)
	case !ok:
		st.Action = ActionInstall
		if installed {
			st.Action = ActionUpdate
		}
		return st, nil, fmt.Errorf("%s: no version at %s satisfies %q (published: %v): %w", s.ID, ref, s.Version, versions, source.ErrNotPublished)
	case installed && inventory.CompareVersions(target, cur.Version) < 0:
		st.Action, st.ToVersion = ActionUpdate, target
		return st, nil, fmt.Errorf("%s: current %s is outside %q and above %s, the highest version it allows: %w (remove the skill or widen the constraint)",
			s.ID, cur.Version, s.Version, target, ErrDowngrade)
	}
	st.Action, st.ToVersion = ActionInstall, target
	if installed {
		st.Action = ActionUpdate
	}
	got, err := f.Fetch(ctx, source.RefAt(ref, target), s.AllowTOFU)
	if err != nil {
		return st, nil, err
	}
	st.Source = got.Source.Ref
	dry, err := svc.Install(ctx, InstallRequest{Artifact: got.Artifact, Source: got.Source, AllowTOFU: s.AllowTOFU, AcceptCapabilities: true, DryRun: true})
	if dry == nil {
		return st, nil, err
	}
	if dry.SkillID != s.ID {
		return st, nil, fmt.Errorf("%s: the artifact at %s is skill %s: %w", s.ID, got.Source.Ref, dry.SkillID, source.ErrIdentityMismatch)
	}
	g := dry.Grants
	st.CapabilityDiff = dry.CapabilityDiff
	if !installed {
		st.CapabilityDiff = grantLines(g.HTTPHosts, g.SecretKeys, g.StoragePrefixes, g.Channels)
	}
	if excess := s.Accept.Excess(g.HTTPHosts, g.SecretKeys, g.StoragePrefixes, g.Channels, g.DeviceCapabilities, g.NodeCapabilities, g.SecretRead); len(excess) > 0 {
		st.CapabilityDiff = excess
		return st, nil, fmt.Errorf("%s %s is granted more than the document accepts for it: %v: %w", s.ID, target, excess, ErrNotAccepted)
	}
	if err != nil {
		return st, nil, err // a quarantine the dry run foresaw (audit, policy)
	}
	return st, got, nil
}

// keptWithinAccept checks that the version apply keeps is granted no more
// than the document accepts for its skill: an accept list narrowed after
// the install would otherwise read as converged while the host runs with
// grants the operator no longer accepts. Apply cannot take a grant back; it
// reports the excess (ErrNotAccepted) on the keep step, for the operator to
// widen accept again or remove the skill. A version recorded without grants
// has nothing to check.
func keptWithinAccept(ctx context.Context, svc Service, s *desired.Skill, version string, st *ApplyStep) error {
	info, err := svc.Info(ctx, SkillRef{SkillID: s.ID, Version: version})
	if err != nil {
		return fmt.Errorf("%s %s: reading its grants: %w", s.ID, version, err)
	}
	if len(info.Grants) == 0 {
		return nil
	}
	var g policy.Grants
	if err := json.Unmarshal(info.Grants, &g); err != nil {
		return fmt.Errorf("%s %s: reading its grants: %w", s.ID, version, err)
	}
	if excess := s.Accept.Excess(g.HTTPHosts, g.SecretKeys, g.StoragePrefixes, g.Channels, g.DeviceCapabilities, g.NodeCapabilities, g.SecretRead); len(excess) > 0 {
		st.CapabilityDiff = excess
		return fmt.Errorf("%s %s, installed, is granted more than the document accepts for it: %v (accept it, or remove the skill): %w", s.ID, version, excess, ErrNotAccepted)
	}
	return nil
}

// grantLines lists a new skill's grants the way a capability diff does.
func grantLines(hosts, secrets, storage, channels []string) []string {
	var out []string
	for _, g := range []struct {
		what string
		list []string
	}{{"http host", hosts}, {"secret", secrets}, {"storage prefix", storage}, {"channel", channels}} {
		for _, v := range g.list {
			out = append(out, "+ "+g.what+" "+v)
		}
	}
	return out
}

// declaredBinding is a declared hook as the hook store keeps it: ids
// trimmed and lower-cased, the event in its canonical name
// (skill.enabled → skill:enabled). Comparing the document's spelling with
// the stored one would rebind (or, for the id, bind again and prune) on
// every apply. An event the store does not know is kept as written: binding
// it reports the error.
func declaredBinding(h desired.Hook) HookBinding {
	event := h.Event
	if e, err := hooks.NormalizeEvent(event); err == nil {
		event = e
	}
	return HookBinding{
		HookID:    strings.ToLower(strings.TrimSpace(h.ID)),
		Event:     event,
		PluginID:  strings.ToLower(strings.TrimSpace(h.Skill)),
		ToolID:    strings.TrimSpace(h.Tool),
		TimeoutMs: h.TimeoutMs,
		Enabled:   h.IsEnabled(),
	}
}

// sameBinding reports whether a bound hook is what the document declares.
func sameBinding(have, want HookBinding) bool {
	return have.Event == want.Event && have.PluginID == want.PluginID && have.ToolID == want.ToolID &&
		have.TimeoutMs == want.TimeoutMs && have.Enabled == want.Enabled
}

// applyHook binds want, replacing a differing binding: only the enabled
// flag differs → SetHookEnabled; else remove and bind.
func applyHook(ctx context.Context, svc Service, have, want HookBinding, exists bool) error {
	if exists {
		h2 := have
		h2.Enabled = want.Enabled
		if sameBinding(h2, want) {
			_, err := svc.SetHookEnabled(ctx, want.HookID, want.Enabled)
			return err
		}
		if err := svc.RemoveHook(ctx, want.HookID); err != nil {
			return err
		}
	}
	_, err := svc.BindHook(ctx, want)
	return err
}
