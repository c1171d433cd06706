package host

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/inventory"

	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/source"
)

// OutdatedRequest selects the skills Outdated looks at.
type OutdatedRequest struct {
	// SkillID restricts the report to one skill; "" means every installed
	// skill with a registry source.
	SkillID string `json:"skill_id,omitempty"`
	// AllowTOFU pins a registry index's unknown key on first use.
	AllowTOFU bool `json:"allow_tofu,omitempty"`
}

// OutdatedReport lists the installed skills Outdated looked at.
type OutdatedReport struct {
	// Skills are the current versions of the skills with a registry
	// source, by skill id; Outdated tells which have a newer version.
	Skills []OutdatedSkill `json:"skills"`
}

// OutdatedSkill is one installed skill and the newest version its source
// has.
type OutdatedSkill struct {
	SkillID        string        `json:"skill_id"`
	CurrentVersion string        `json:"current_version"`
	LatestVersion  string        `json:"latest_version,omitempty"`
	Outdated       bool          `json:"outdated"`
	Source         InstallSource `json:"source"`
	// Error says why the source could not be read, and Code its code;
	// empty when it could.
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
}

// UpdateRequest names a skill to update.
type UpdateRequest struct {
	SkillID string `json:"skill_id"`
	// Version is the version to update to; "" means the newest at the
	// skill's source.
	Version string `json:"version,omitempty"`
	// DryRun returns the change and its capability diff, changing nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// AcceptCapabilities accepts a capability escalation.
	AcceptCapabilities bool `json:"accept_capabilities,omitempty"`
	// AllowTOFU pins an unknown key (of the index or the artifact) on
	// first use.
	AllowTOFU bool `json:"allow_tofu,omitempty"`
}

// UpdateResult is what Update did, or would do.
type UpdateResult struct {
	SkillID     string `json:"skill_id"`
	FromVersion string `json:"from_version"`
	ToVersion   string `json:"to_version"`
	// Updated is true when the new version was installed.
	Updated bool `json:"updated"`
	// Reason is "already_current" when the source has nothing newer.
	Reason string `json:"reason,omitempty"`
	DryRun bool   `json:"dry_run,omitempty"`
	// Source is where the new version comes from.
	Source InstallSource `json:"source"`
	// CapabilityDiff and Escalation are what the new version is granted
	// beyond the current one (empty when nothing).
	CapabilityDiff []string          `json:"capability_diff"`
	Escalation     policy.Escalation `json:"escalation"`
	// Install is the install's (or the dry run's) result.
	Install *InstallResult `json:"install,omitempty"`
}

// ApplyRequest is a desired-state document to converge on.
type ApplyRequest struct {
	// Document is the desired state (palyra.toml; package desired).
	Document string `json:"document"`
	// DryRun returns the plan, changing nothing.
	DryRun bool `json:"dry_run,omitempty"`
	// Prune removes installed skills (and hook bindings) the document does
	// not declare.
	Prune bool `json:"prune,omitempty"`
}

// ApplyResult is the plan of an Apply and what was done of it.
type ApplyResult struct {
	DryRun bool `json:"dry_run"`
	// Changed is true when a step changed (or, in a dry run, would change)
	// something; a converged host answers false.
	Changed bool        `json:"changed"`
	Steps   []ApplyStep `json:"steps"`
}

// ApplyStep is one step of an Apply's plan.
type ApplyStep struct {
	// Action is install, update, remove, keep, bind_hook, update_hook,
	// remove_hook or keep_hook.
	Action      string `json:"action"`
	SkillID     string `json:"skill_id,omitempty"`
	HookID      string `json:"hook_id,omitempty"`
	FromVersion string `json:"from_version,omitempty"`
	ToVersion   string `json:"to_version,omitempty"`
	// Source is the reference the version comes from.
	Source string `json:"source,omitempty"`
	// CapabilityDiff lists what an install or update is granted beyond
	// the current version (for an install: everything it is granted).
	CapabilityDiff []string `json:"capability_diff,omitempty"`
	// Done is true once the step was carried out.
	Done bool `json:"done"`
	// Error and Code say why the step was refused or failed.
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
}

// Outdated implements Service.
func (h *Host) Outdated(ctx context.Context, req OutdatedRequest) (*OutdatedReport, error) {
	return OutdatedOf(ctx, h, h.sources, req)
}

// Update implements Service.
func (h *Host) Update(ctx context.Context, req UpdateRequest) (*UpdateResult, error) {
	return UpdateOf(ctx, h, h.sources, req)
}

// Apply implements Service.
func (h *Host) Apply(ctx context.Context, req ApplyRequest) (*ApplyResult, error) {
	return ApplyTo(ctx, h, h.sources, req)
}

// OutdatedOf is Outdated over any Service, with f reading the sources: the
// local host and a cluster node share it. It looks at the current version
// of every installed skill (or req.SkillID) that came from a registry
// index or an OCI repository; a skill installed from a file is not listed.
// A source that cannot be read is reported on its skill's row, so one
// unreachable registry does not hide the others.
func OutdatedOf(ctx context.Context, svc Service, f *source.Fetcher, req OutdatedRequest) (*OutdatedReport, error) {
	l, err := svc.List(ctx, ListRequest{SkillID: req.SkillID, CurrentOnly: true})
	if err != nil {
		return nil, err
	}
	rep := &OutdatedReport{Skills: []OutdatedSkill{}}
	for _, e := range l.Entries {
		if !fromRegistry(e.Source) {
			continue
		}
		row := OutdatedSkill{SkillID: e.SkillID, CurrentVersion: e.Version, Source: e.Source}
		latest, _, err := f.Latest(ctx, e.Source, e.SkillID, req.AllowTOFU)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			row.Error, row.Code = err.Error(), errcode.Of(err)
		default:
			row.LatestVersion = latest
			row.Outdated = inventory.CompareVersions(latest, e.Version) > 0
		}
		rep.Skills = append(rep.Skills, row)
	}
	if req.SkillID != "" && len(rep.Skills) == 0 {
		if len(l.Entries) == 0 {
			return nil, fmt.Errorf("host: outdated %s: %w", req.SkillID, install.ErrNotFound)
		}
		e := l.Entries[0]
		return nil, fmt.Errorf("host: outdated %s: %w (installed from %s %q)", req.SkillID, source.ErrNoSource, e.Source.Kind, e.Source.Ref)
	}
	return rep, nil
}

// fromRegistry reports whether src is a registry index or an OCI
// repository, which Outdated and Update can follow.
func fromRegistry(src InstallSource) bool {
	switch src.Kind {
	case inventory.SourceOCI, inventory.SourceRemoteRegistry, inventory.SourceLocalRegistry:
		return true
	}
	return false
}

// UpdateOf is Update over any Service, with f reading the sources. It
// finds the target (req.Version at the skill's source, else the newest
// version there), answers "already_current" when it is not newer than the
// current version, then runs the install as a dry run from the source:
// the version change and the capability diff. A dry run ends there; so
// does an escalation not accepted (the result carries the diff, the error
// is capability_escalation). Else the version is installed; one failing
// its audit or the operator policy is installed held back (the result's
// Install.HeldBack, with the error), and Updated is false.
func UpdateOf(ctx context.Context, svc Service, f *source.Fetcher, req UpdateRequest) (*UpdateResult, error) {
	if strings.TrimSpace(req.SkillID) == "" {
		return nil, fmt.Errorf("host: update: %w: the skill id is empty", install.ErrInvalidArgument)
	}
	l, err := svc.List(ctx, ListRequest{SkillID: req.SkillID, CurrentOnly: true})
	if err != nil {
		return nil, err
	}
	if len(l.Entries) == 0 {
		return nil, fmt.Errorf("host: update %s: %w", req.SkillID, install.ErrNotFound)
	}
	cur := l.Entries[0]
	res := &UpdateResult{SkillID: cur.SkillID, FromVersion: cur.Version, DryRun: req.DryRun, CapabilityDiff: []string{}}
	if !fromRegistry(cur.Source) {
		return nil, fmt.Errorf("host: update %s: %w (installed from %s %q; install a new version with its artifact)",
			cur.SkillID, source.ErrNoSource, cur.Source.Kind, cur.Source.Ref)
	}
	latest, ref, err := f.Latest(ctx, cur.Source, cur.SkillID, req.AllowTOFU)
	if err != nil {
		return nil, fmt.Errorf("host: update %s: %w", cur.SkillID, err)
	}
	target := latest
	if req.Version != "" {
		target = req.Version
		ref = source.RefAt(ref, target)
	}
	res.ToVersion = target
	if inventory.CompareVersions(target, cur.Version) <= 0 {
		// Update never goes back: a version at or below the current one
		// (named, or the newest at the source) leaves the skill as it is.
		res.ToVersion, res.Reason = cur.Version, "already_current"
		return res, nil
	}
	// Fetched once: the dry run and the install judge the same bytes,
	// whatever the source's tag points to meanwhile.
	got, err := f.Fetch(ctx, ref, req.AllowTOFU)
	if err != nil {
		return nil, fmt.Errorf("host: update %s: fetch %s: %w", cur.SkillID, ref, err)
	}
	ir := InstallRequest{Artifact: got.Artifact, Source: got.Source, AllowTOFU: req.AllowTOFU, AcceptCapabilities: req.AcceptCapabilities, DryRun: true}
	dry, err := svc.Install(ctx, ir)
	if dry != nil {
		res.Source, res.CapabilityDiff, res.Escalation, res.Install = dry.Source, dry.CapabilityDiff, dry.Escalation, dry
		if res.CapabilityDiff == nil {
			res.CapabilityDiff = []string{}
		}
		res.ToVersion = dry.Version
	}
	// A version failing the audit or the operator policy is kept by an
	// install, held back (quarantined, not current): the install runs so
	// that the hold is recorded and shown, as for an upload. Any other
	// refusal (an escalation not accepted, an untrusted key) stops here.
	if req.DryRun || (err != nil && !heldBackRefusal(err)) {
		return res, err
	}
	ir.DryRun = false
	done, err := svc.Install(ctx, ir)
	if done != nil {
		res.Install, res.Source = done, done.Source
		res.Updated = done.Installed && done.Current
	}
	return res, err
}

// heldBackRefusal reports whether err is a refusal with which an install
// keeps the version, held back: a failed audit or an operator policy
// violation.
func heldBackRefusal(err error) bool {
	return errors.Is(err, install.ErrAuditFailed) || errors.Is(err, install.ErrPolicyViolation)
}

// decideRegistryKey judges a registry index's key by the trust store's
// rules, pinning it when allowTOFU and the publisher is unknown.
func (h *Host) decideRegistryKey(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error) {
	d, err := h.trust.Decide(ctx, publisher, key, allowTOFU)
	return string(d), err
}

// Sources returns the host's Fetcher: its registry configuration and
// credentials, with the trust store judging registry index keys. A
// cluster node fetches through its host's.
func (h *Host) Sources() *source.Fetcher { return h.sources }

// ResolveInstallSource fetches req.From with f into req.Artifact and
// req.Source, so that the install that follows is the install of a file.
// It does nothing when req.From is nil. Fetching happens where the
// install runs (the daemon, not the CLI that asked).
func ResolveInstallSource(ctx context.Context, f *source.Fetcher, req *InstallRequest) error {
	if req.From == nil {
		return nil
	}
	if len(req.Artifact) > 0 {
		return fmt.Errorf("host: %w: give the artifact or a source to fetch it from, not both", install.ErrInvalidArgument)
	}
	got, err := f.Fetch(ctx, *req.From, req.AllowTOFU)
	if err != nil {
		return fmt.Errorf("host: fetch %s: %w", req.From, err)
	}
	req.Artifact, req.Source, req.From = got.Artifact, got.Source, nil
	return nil
}
