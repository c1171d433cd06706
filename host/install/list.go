package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
)

// StatusMissing is the status a listing shows for a version without a
// status row (which may not run).
const StatusMissing = "missing"

// ListOptions select the versions List returns. Zero fields select all.
type ListOptions struct {
	SkillID         string
	Publisher       string
	CurrentOnly     bool
	QuarantinedOnly bool
	EligibleOnly    bool
}

// Listing is one installed version as list and info show it: Palyra's CLI
// inventory entry (the record's fields flattened, install_state,
// skill_name, tool_count, runtime_status, requirements, eligibility) plus
// a flat status.
type Listing struct {
	SkillID        string                 `json:"skill_id"`
	Version        string                 `json:"version"`
	Publisher      string                 `json:"publisher"`
	Current        bool                   `json:"current"`
	InstalledAtMS  int64                  `json:"installed_at_unix_ms"`
	ArtifactSHA256 string                 `json:"artifact_sha256"`
	PayloadSHA256  string                 `json:"payload_sha256"`
	SignatureKeyID string                 `json:"signature_key_id"`
	TrustDecision  string                 `json:"trust_decision"`
	Source         Source                 `json:"source"`
	MissingSecrets []inventory.SecretRef  `json:"missing_secrets"`
	InstallState   inventory.InstallState `json:"install_state"`
	SkillName      string                 `json:"skill_name"`
	ToolCount      int                    `json:"tool_count"`
	// Status is the version's status, or StatusMissing without a row.
	Status        string        `json:"status"`
	RuntimeStatus RuntimeStatus `json:"runtime_status"`
	Requirements  Requirements  `json:"requirements"`
	Eligibility   Eligibility   `json:"eligibility"`
	InstallDir    string        `json:"install_dir"`
	// HeldBack is set on a version an upgrade installed without making it
	// current (it failed its checks while an active version was current).
	HeldBack *inventory.HeldBack `json:"held_back,omitempty"`
	// ReviewPending is set on builder output awaiting review: the version
	// is quarantined until ApproveReview.
	ReviewPending bool `json:"review_pending,omitempty"`
	// MissingConfig lists the required keys of the manifest's [config]
	// that have neither a value set nor a default: the version is not
	// eligible (reason config_missing) until they are set.
	MissingConfig []string `json:"missing_config,omitempty"`
	// UnfitConfig lists the config values kept for the skill that this
	// version's schema does not accept (after an upgrade, say): the
	// version is not eligible (reason config_invalid) until they are set
	// again or unset. The values are kept, never dropped.
	UnfitConfig []ConfigIssue `json:"unfit_config,omitempty"`
}

// RuntimeStatus is the status row of a version, as Palyra's list shows it.
type RuntimeStatus struct {
	Status string `json:"status"`
	// Source is "inventory", or "missing" when the version has no row.
	Source string `json:"source"`
	// QuarantineStatus is "quarantined" or "not_quarantined".
	QuarantineStatus string `json:"quarantine_status"`
	Reason           string `json:"reason,omitempty"`
	DetectedAtMS     int64  `json:"detected_at_ms,omitempty"`
	Principal        string `json:"operator_principal,omitempty"`
}

// Requirements are the manifest's compatibility requirements.
type Requirements struct {
	RequiredProtocolMajor uint32 `json:"required_protocol_major"`
	MinPalyraVersion      string `json:"min_palyra_version"`
	MaxPalyraVersion      string `json:"max_palyra_version,omitempty"`
}

// Eligibility says whether a version may run (Palyra's {status, eligible,
// reasons}); see inventory.CheckEligibility.
type Eligibility struct {
	Status   inventory.EligibilityStatus `json:"status"`
	Eligible bool                        `json:"eligible"`
	Reasons  []string                    `json:"reasons"`
}

// listing builds the Listing of an entry.
func (in *Installer) listing(ctx context.Context, e inventory.Entry) Listing {
	l := Listing{
		SkillID: e.SkillID, Version: e.Version, Publisher: e.Publisher, Current: e.Current,
		InstalledAtMS: e.InstalledAt.UnixMilli(), ArtifactSHA256: e.ArtifactSHA256, PayloadSHA256: e.PayloadSHA256,
		SignatureKeyID: e.SignatureKeyID, TrustDecision: e.TrustDecision,
		Source:         Source{Kind: e.SourceKind, Ref: e.SourceRef},
		MissingSecrets: e.MissingSecrets, InstallState: e.InstallState(), ToolCount: e.ToolCount,
		InstallDir:    filepath.Join(in.state, filepath.FromSlash(e.InstallDir)),
		HeldBack:      e.HeldBack,
		ReviewPending: e.ReviewPending,
	}
	if l.MissingSecrets == nil {
		l.MissingSecrets = []inventory.SecretRef{}
	}
	var compatErr error
	if m, err := decodeManifest(e.Manifest); err == nil {
		l.SkillName = m.Name
		l.Requirements = Requirements{
			RequiredProtocolMajor: m.Compat.RequiredProtocolMajor,
			MinPalyraVersion:      m.Compat.MinPalyraVersion,
			MaxPalyraVersion:      m.Compat.MaxPalyraVersion,
		}
		compatErr = manifest.CheckCompat(m)
		l.MissingConfig, l.UnfitConfig = in.configFit(ctx, e, m)
	} else {
		compatErr = err
	}
	if e.Status == nil {
		l.Status = StatusMissing
		l.RuntimeStatus = RuntimeStatus{Status: StatusMissing, Source: "missing", QuarantineStatus: "not_quarantined"}
	} else {
		l.Status = string(e.Status.Status)
		l.RuntimeStatus = RuntimeStatus{
			Status: l.Status, Source: "inventory", QuarantineStatus: "not_quarantined",
			Reason: e.Status.Reason, DetectedAtMS: e.Status.DetectedAt.UnixMilli(), Principal: e.Status.Principal,
		}
		if e.Status.Status == inventory.StatusQuarantined {
			l.RuntimeStatus.QuarantineStatus = "quarantined"
		}
	}
	el := e.Eligibility(compatErr)
	l.Eligibility = Eligibility{Status: el.Status, Eligible: el.OK(), Reasons: el.Reasons}
	if len(l.MissingConfig) > 0 {
		l.Eligibility.Reasons = append(l.Eligibility.Reasons, ReasonConfigMissing)
	}
	if len(l.UnfitConfig) > 0 {
		l.Eligibility.Reasons = append(l.Eligibility.Reasons, ReasonConfigInvalid)
	}
	if len(l.MissingConfig)+len(l.UnfitConfig) > 0 {
		l.Eligibility.Status, l.Eligibility.Eligible = inventory.Blocked, false
	}
	if l.Eligibility.Reasons == nil {
		l.Eligibility.Reasons = []string{}
	}
	return l
}

// List returns the installed versions that match opts, by skill id and
// then version, lowest first. It reads the inventory only.
func (in *Installer) List(ctx context.Context, opts ListOptions) ([]Listing, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	f := inventory.Filter{SkillID: opts.SkillID, Publisher: opts.Publisher, CurrentOnly: opts.CurrentOnly}
	if opts.QuarantinedOnly {
		f.Status = inventory.StatusQuarantined
	}
	entries, err := in.db.Skills(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	out := []Listing{}
	for _, e := range entries {
		l := in.listing(ctx, e)
		if opts.EligibleOnly && !l.Eligibility.Eligible {
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// EntryInfo is one entry of an installed artifact.
type EntryInfo struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Info is everything known about one installed version (Palyra's info
// shape: inventory, manifest, signature, artifact_entries,
// cached_artifact_path), plus the grants and audit report recorded at
// install and the skill's status history.
type Info struct {
	Inventory          Listing             `json:"inventory"`
	Manifest           json.RawMessage     `json:"manifest"`
	Signature          *artifact.Signature `json:"signature,omitempty"`
	ArtifactEntries    []EntryInfo         `json:"artifact_entries"`
	CachedArtifactPath string              `json:"cached_artifact_path"`
	// ArtifactError says why the installed artifact could not be read or
	// inspected ("" when it could), and ArtifactErrorCode its code.
	ArtifactError     string `json:"artifact_error,omitempty"`
	ArtifactErrorCode string `json:"artifact_error_code,omitempty"`
	// Grants are what a call of the version is granted now: the
	// manifest's requests that the current policy profile allows (as
	// policy.Grants JSON), recomputed on every Info as on every call. The
	// install-time record when the manifest cannot be evaluated.
	Grants json.RawMessage `json:"grants,omitempty"`
	// InstallGrants are the grants recorded at install: what the operator
	// accepted then. They differ from Grants when the profile changed.
	InstallGrants json.RawMessage `json:"install_grants,omitempty"`
	// GrantsChanged is true when Grants differ from InstallGrants, and
	// GrantsChanges then lists how, one line per difference: "+ <what>"
	// granted now and not at install, "- <what>" granted at install and no
	// longer (in policy.Escalation.Lines' words).
	GrantsChanged bool     `json:"grants_changed"`
	GrantsChanges []string `json:"grants_changes,omitempty"`
	// GrantsRefused lists the manifest's requests that the current profile
	// refuses (policy violations): while there is one, calls of the
	// version fail. Empty when the profile allows the manifest.
	GrantsRefused []string          `json:"grants_refused,omitempty"`
	AuditReport   json.RawMessage   `json:"audit_report,omitempty"`
	StatusHistory []inventory.Event `json:"status_history"`
	// HeldBack lists the versions of the skill that upgrades held back:
	// installed, quarantined (or disabled), not current, each with the
	// code and message of why. Enable of such a version by name is the
	// one way to make it current. Empty when there is none.
	HeldBack []HeldBackVersion `json:"held_back"`
	// InputPropertyOrders is, by tool id, the order in which the
	// installed skill.toml writes the properties of each object schema of
	// the tool's input_schema (see manifest.InputPropertyOrders): Manifest
	// has them sorted, and a form shows the fields in the author's order.
	// Empty when the artifact could not be read.
	InputPropertyOrders manifest.PropertyOrders `json:"input_property_orders,omitempty"`
}

// HeldBackVersion is one held-back version of a skill, in Info.
type HeldBackVersion struct {
	Version string `json:"version"`
	// Status is the version's status (quarantined, normally).
	Status string `json:"status"`
	// Code is the stable code of why it was held back (audit_failed,
	// policy_violation, precompile_failed, skill_quarantined, ...), and
	// Message the message.
	Code       string `json:"code"`
	Message    string `json:"message"`
	HeldAtMS   int64  `json:"held_at_unix_ms"`
	InstallDir string `json:"install_dir"`
}

// Info describes version of skill id ("" = current). The installed artifact
// is read and inspected (not trust-checked) for its signature and entries;
// when that fails the error is in the result, not returned.
func (in *Installer) Info(ctx context.Context, id, version string) (*Info, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return nil, err
	}
	e, err := in.entry(ctx, id, version)
	if err != nil {
		return nil, err
	}
	info := &Info{
		Inventory: in.listing(ctx, e), Manifest: e.Manifest, Grants: e.Grants, InstallGrants: e.Grants, AuditReport: e.AuditReport,
		ArtifactEntries:    []EntryInfo{},
		CachedArtifactPath: filepath.Join(in.VersionDir(e.SkillID, e.Version), ArtifactFile),
	}
	in.currentGrants(info, e)
	hist, err := in.db.StatusHistory(ctx, e.SkillID)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	info.StatusHistory = hist
	all, err := in.db.Skills(ctx, inventory.Filter{SkillID: e.SkillID})
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	info.HeldBack = []HeldBackVersion{}
	for _, v := range all {
		if v.HeldBack == nil {
			continue
		}
		h := HeldBackVersion{
			Version: v.Version, Status: StatusMissing, Code: v.HeldBack.Code, Message: v.HeldBack.Reason,
			HeldAtMS: v.HeldBack.At.UnixMilli(), InstallDir: filepath.Join(in.state, filepath.FromSlash(v.InstallDir)),
		}
		if v.Status != nil {
			h.Status = string(v.Status.Status)
		}
		info.HeldBack = append(info.HeldBack, h)
	}
	data, err := readArtifact(in.VersionDir(e.SkillID, e.Version), e.ArtifactSHA256)
	var ins *artifact.Inspection
	if err == nil {
		ins, err = artifact.Inspect(data)
	}
	if err != nil {
		info.ArtifactError, info.ArtifactErrorCode = err.Error(), errcode.Of(err)
		return info, nil
	}
	sig := ins.Signature
	info.Signature = &sig
	// The manifest parsed when the artifact was inspected, so its TOML
	// parses too; a failure only leaves the orders out.
	if orders, err := manifest.InputPropertyOrders(ins.Entries[artifact.ManifestPath]); err == nil {
		info.InputPropertyOrders = orders
	}
	for _, name := range slices.Sorted(maps.Keys(ins.Entries)) {
		sum := sha256.Sum256(ins.Entries[name])
		info.ArtifactEntries = append(info.ArtifactEntries, EntryInfo{Path: name, Bytes: len(ins.Entries[name]), SHA256: hex.EncodeToString(sum[:])})
	}
	return info, nil
}

// Check statuses.
const (
	CheckReady   = "ready"
	CheckBlocked = "blocked"
)

// CheckResult is the outcome of Check for one version (Palyra's check
// result shape).
type CheckResult struct {
	Inventory Listing `json:"inventory"`
	// CheckStatus is CheckBlocked when trust is not accepted, the audit or
	// the policy fails, or the version is not eligible; else CheckReady.
	CheckStatus        string                 `json:"check_status"`
	TrustAccepted      bool                   `json:"trust_accepted"`
	TrustError         string                 `json:"trust_error,omitempty"`
	TrustErrorCode     string                 `json:"trust_error_code,omitempty"`
	AuditPassed        bool                   `json:"audit_passed"`
	QuarantineRequired bool                   `json:"quarantine_required"`
	FailedChecks       []string               `json:"failed_checks"`
	WarningChecks      []string               `json:"warning_checks"`
	Reasons            []string               `json:"reasons"`
	Verification       *artifact.VerifyReport `json:"verification,omitempty"`
	Audit              *audit.Report          `json:"audit,omitempty"`
}

// Check re-checks installed versions as Enable would, without changing
// anything: the current version of every skill when id is "", else version
// of skill id ("" = current). It fails with ErrNotFound when nothing
// matches.
func (in *Installer) Check(ctx context.Context, id, version string) ([]CheckResult, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	var entries []inventory.Entry
	if id == "" {
		all, err := in.db.Skills(ctx, inventory.Filter{CurrentOnly: true})
		if err != nil {
			return nil, fmt.Errorf("install: %w", err)
		}
		if len(all) == 0 {
			return nil, fmt.Errorf("install: no skill is installed: %w", ErrNotFound)
		}
		entries = all
	} else {
		nid, nv, err := normalizeKey(id, version)
		if err != nil {
			return nil, err
		}
		e, err := in.entry(ctx, nid, nv)
		if err != nil {
			return nil, err
		}
		entries = []inventory.Entry{e}
	}
	out := make([]CheckResult, 0, len(entries))
	for _, e := range entries {
		r, err := in.checkOne(ctx, e)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (in *Installer) checkOne(ctx context.Context, e inventory.Entry) (CheckResult, error) {
	lk, err := in.lock(ctx, e.SkillID)
	if err != nil {
		return CheckResult{}, err
	}
	defer lk.unlock()
	if fresh, err := in.db.Skill(ctx, e.SkillID, e.Version); err == nil {
		e = fresh
	}
	r := CheckResult{Inventory: in.listing(ctx, e), FailedChecks: []string{}, WarningChecks: []string{}, Reasons: []string{}}
	adm, err := in.recheck(ctx, e)
	switch {
	case err != nil && errcode.Of(err) == errcode.Internal:
		return CheckResult{}, err
	case err != nil:
		r.TrustError, r.TrustErrorCode = err.Error(), errcode.Of(err)
		r.Reasons = append(r.Reasons, err.Error())
		r.QuarantineRequired = true
	default:
		r.TrustAccepted = true
		r.Verification, r.Audit = adm.verify, adm.report
		r.AuditPassed = !adm.quarantine()
		r.QuarantineRequired = adm.quarantine()
		r.FailedChecks, r.WarningChecks = adm.report.FailedChecks(), adm.report.WarningChecks()
		r.Reasons = append(r.Reasons, adm.reasons...)
	}
	r.CheckStatus = CheckReady
	if !r.TrustAccepted || !r.AuditPassed || r.QuarantineRequired || !r.Inventory.Eligibility.Eligible {
		r.CheckStatus = CheckBlocked
	}
	return r, nil
}

// currentGrants sets info's Grants to what the current profile grants the
// manifest of e (as a call would get them), and says how that differs from
// the grants recorded at install. It leaves the install-time record in
// Grants when the manifest cannot be evaluated.
func (in *Installer) currentGrants(info *Info, e inventory.Entry) {
	cur := in.decisionOf(e.Manifest)
	if cur == nil {
		return
	}
	now, err := json.Marshal(cur.Grants)
	if err != nil {
		return
	}
	info.Grants = now
	info.GrantsRefused = cur.Reasons()
	if len(e.Grants) == 0 || string(e.Grants) == "null" {
		return // nothing recorded to compare with
	}
	var then policy.Grants
	if err := json.Unmarshal(e.Grants, &then); err != nil {
		info.GrantsChanged = true
		info.GrantsChanges = []string{"the grants recorded at install cannot be read: " + err.Error()}
		return
	}
	// Compared in the canonical encoding, so a record written by an
	// older build with other spacing compares by value.
	if thenJSON, err := json.Marshal(then); err == nil && bytes.Equal(thenJSON, now) {
		return
	}
	info.GrantsChanged = true
	// Limits are not recorded at install: both sides take the current
	// ones, so only grants are compared.
	prev := &policy.Decision{Grants: then, Limits: cur.Limits}
	changes := policy.Diff(prev, cur).Lines()
	// What the install had beyond now: the grants taken back, and the
	// bounds lowered (printed from the install-time value to today's).
	lost := policy.Diff(cur, prev)
	lowered := lost.Raised
	lost.Raised = nil
	for _, l := range lost.Lines() {
		changes = append(changes, "-"+strings.TrimPrefix(l, "+"))
	}
	for _, r := range lowered {
		changes = append(changes, fmt.Sprintf("- %s %d -> %d", r.Name, r.New, r.Old))
	}
	if len(changes) == 0 {
		// A difference Diff does not list (a narrowed HTTP bound, a
		// read-only flag): still a change.
		changes = []string{"the grants differ from those recorded at install"}
	}
	info.GrantsChanges = changes
}
