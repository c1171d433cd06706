package install

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
)

// StatusResult is the outcome of Quarantine, Enable and Disable: the status
// row of the version afterwards, in the shape of Palyra's admin response.
type StatusResult struct {
	SkillID        string           `json:"skill_id"`
	Version        string           `json:"version"`
	Status         inventory.Status `json:"status"`
	PreviousStatus inventory.Status `json:"previous_status"`
	Reason         string           `json:"reason,omitempty"`
	DetectedAtMS   int64            `json:"detected_at_ms"`
	Principal      string           `json:"operator_principal"`
	// Changed is false when the status was already the one asked for.
	Changed bool `json:"changed"`
	// Current reports whether the version is the current one afterwards.
	Current bool `json:"current"`
	// PreviousCurrent is the version that was current before, set only
	// when the change made this version current (Enable of a version an
	// upgrade held back).
	PreviousCurrent string `json:"previous_current,omitempty"`
	// updatedAt is the status row's update time after a change.
	updatedAt time.Time
}

// EnableOptions tune Enable.
type EnableOptions struct {
	// Override must be set to enable a quarantined version.
	Override bool
	// Reason is recorded with the new status.
	Reason string
	// Principal is who enables; "" means PrincipalLocal.
	Principal string
}

// PrincipalSupervisor is the principal of the crashlooping status
// ApproveReview approves the review of version of skill id ("" = current),
// a version installed from builder output awaiting review (see
// ErrReviewPending): under the skill's lock it clears the review hold and
// journals skill.review_approved with principal and reason (required),
// then enables the version as Enable does, with its checks (verify, audit,
// policy): the approval stands even when those fail, and the error of the
// first that fails is returned, the version staying quarantined. A version
// not awaiting review is inventory.ErrNoReviewPending.
func (in *Installer) ApproveReview(ctx context.Context, id, version, reason, principal string) (*StatusResult, error) {
	principal = strings.TrimSpace(principal)
	if principal == "" {
		principal = PrincipalLocal
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, fmt.Errorf("install: %w: reason: required to approve a review", inventory.ErrInvalidArgument)
	}
	e, lk, err := in.lockedEntry(ctx, id, version)
	if err != nil {
		return nil, err
	}
	if !e.ReviewPending {
		lk.unlock()
		return nil, fmt.Errorf("install: %w: %s %s", inventory.ErrNoReviewPending, e.SkillID, e.Version)
	}
	err = in.db.Update(ctx, func(tx *inventory.Tx) error {
		_, err := tx.ApproveReview(e.SkillID, e.Version, reason, principal)
		return err
	})
	lk.unlock()
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	res, err := in.Enable(ctx, e.SkillID, e.Version, EnableOptions{Override: true, Reason: "review approved: " + reason, Principal: principal})
	if err != nil {
		return nil, fmt.Errorf("install: review of %s %s approved, but enabling it failed: %w", e.SkillID, e.Version, err)
	}
	return res, nil
}

// MarkCrashLooping records when the caller names none.
const PrincipalSupervisor = "system:supervisor"

// Quarantine blocks version of skill id ("" = the current version) with
// reason. It always records the operator's action, even for a version
// that is quarantined already, and publishes skill:quarantined.
func (in *Installer) Quarantine(ctx context.Context, id, version, reason, principal string) (*StatusResult, error) {
	return in.changeStatus(ctx, id, version, reason, principal, statusVerb{
		status: inventory.StatusQuarantined, event: events.SkillQuarantined,
	})
}

// Disable turns version of skill id ("" = current) off and publishes
// skill:disabled. A quarantined version is refused with ErrQuarantined:
// a quarantine is lifted only by Enable with an override.
func (in *Installer) Disable(ctx context.Context, id, version, reason, principal string) (*StatusResult, error) {
	return in.changeStatus(ctx, id, version, reason, principal, statusVerb{
		status: inventory.StatusDisabled, event: events.SkillDisabled,
		guard: func(e inventory.Entry) error {
			if e.Status != nil && e.Status.Status == inventory.StatusQuarantined {
				return fmt.Errorf("%w: %s %s (%s); enable it with an override first", ErrQuarantined, e.SkillID, e.Version, e.Status.Reason)
			}
			return nil
		},
	})
}

// Enable lets version of skill id ("" = current) run again. A quarantined
// version needs opts.Override (else ErrOverrideRequired). Whatever the
// status, Enable first re-checks the installed artifact as it is on disk:
// its SHA-256 against the inventory (ErrInstalledArtifact), verification
// against the trust store without trust on first use, the audit and the
// policy; it refuses with the error of the first that fails
// (untrusted_publisher, audit_failed, policy_violation, ...), and the
// status is unchanged. A version already active is left as it is.
//
// Enable of a version an upgrade held back (named by version: a held-back
// version is never the current one) is the one way to make it current:
// once its checks pass, its status becomes active and it becomes current
// in one transaction (the result has Current and PreviousCurrent).
func (in *Installer) Enable(ctx context.Context, id, version string, opts EnableOptions) (*StatusResult, error) {
	return in.changeStatus(ctx, id, version, opts.Reason, opts.Principal, statusVerb{
		status: inventory.StatusActive, event: events.SkillEnabled, recheck: true,
		guard: func(e inventory.Entry) error {
			if e.ReviewPending {
				return fmt.Errorf("%w: %s %s is builder output awaiting review; approve it with palyra skills review approve %s --version %s --reason ...",
					ErrReviewPending, e.SkillID, e.Version, e.SkillID, e.Version)
			}
			if e.Status != nil && e.Status.Status == inventory.StatusQuarantined && !opts.Override {
				return fmt.Errorf("%w: %s %s is quarantined (%s)", ErrOverrideRequired, e.SkillID, e.Version, e.Status.Reason)
			}
			return nil
		},
		keep:    func(prev inventory.Status) bool { return prev == inventory.StatusActive },
		promote: true,
	})
}

// MarkCrashLooping records that the supervisor stopped restarting the
// sidecar of version of skill id ("" = current): the status becomes
// crashlooping with reason (cut to inventory.MaxReasonBytes), journaled
// as skill.crashlooping and published as skill:crashlooping, so that
// operators see it; Enable lifts it. principal "" means
// PrincipalSupervisor.
//
// Only an active status is replaced: a version that is quarantined,
// disabled or already crashlooping keeps its status, and changed is false.
// When changed, updatedAt is the status row's new update time (a later
// update time means an operator acted since); otherwise it is zero. An
// unknown skill or version is ErrNotFound.
func (in *Installer) MarkCrashLooping(ctx context.Context, id, version, reason, principal string) (changed bool, updatedAt time.Time, err error) {
	res, err := in.changeStatus(ctx, id, version, boundReason(reason), principal, statusVerb{
		status: inventory.StatusCrashlooping, event: events.SkillCrashLooping, defaultPrincipal: PrincipalSupervisor,
		keep: func(prev inventory.Status) bool { return prev != inventory.StatusActive },
	})
	if err != nil || !res.Changed {
		return false, time.Time{}, err
	}
	return true, res.updatedAt, nil
}

// statusVerb describes one status change for changeStatus.
type statusVerb struct {
	// status is the status the verb writes; event the Bus kind published.
	status inventory.Status
	event  string
	// guard, when set, refuses the change with an error.
	guard func(inventory.Entry) error
	// recheck re-verifies and re-audits the installed artifact first.
	recheck bool
	// keep, when set and true for the current status, leaves the status
	// row as it is (the result has Changed false).
	keep func(prev inventory.Status) bool
	// defaultPrincipal replaces a blank principal; "" means
	// PrincipalLocal.
	defaultPrincipal string
	// promote makes a held-back version current with the change.
	promote bool
}

// changeStatus is the one path by which a status row changes after the
// install: under the skill's lock, read the version, run the verb's guard,
// optionally re-check the artifact, leave the status as it is when the
// verb keeps it, else write the status and its journal event in one
// transaction and publish the event.
func (in *Installer) changeStatus(ctx context.Context, id, version, reason, principal string, v statusVerb) (*StatusResult, error) {
	principal = strings.TrimSpace(principal)
	if principal == "" {
		principal = cmp.Or(v.defaultPrincipal, PrincipalLocal)
	}
	e, lk, err := in.lockedEntry(ctx, id, version)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	if v.guard != nil {
		if err := v.guard(e); err != nil {
			return nil, err
		}
	}
	if v.recheck {
		adm, err := in.recheck(ctx, e)
		if err != nil {
			return nil, err
		}
		if adm.err != nil {
			return nil, fmt.Errorf("install: %s %s still fails its checks: %w", e.SkillID, e.Version, adm.err)
		}
	}
	res := &StatusResult{SkillID: e.SkillID, Version: e.Version, Status: v.status, Current: e.Current}
	if e.Status != nil {
		res.PreviousStatus = e.Status.Status
	}
	promote := v.promote && e.HeldBack != nil
	if v.keep != nil && v.keep(res.PreviousStatus) && !promote {
		res.Status = res.PreviousStatus
		if e.Status != nil {
			res.Reason, res.DetectedAtMS, res.Principal = e.Status.Reason, e.Status.DetectedAt.UnixMilli(), e.Status.Principal
		}
		return res, nil
	}
	err = in.db.Update(ctx, func(tx *inventory.Tx) error {
		if promote {
			cur, err := tx.Skill(e.SkillID, "")
			if err != nil {
				return err
			}
			if err := tx.SetCurrent(e.SkillID, e.Version); err != nil {
				return err
			}
			res.Current, res.PreviousCurrent = true, cur.Version
		}
		return tx.SetStatus(inventory.StatusChange{
			SkillID: e.SkillID, Version: e.Version, Status: v.status, Reason: reason, Principal: principal,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	st, err := in.db.Status(ctx, e.SkillID, e.Version)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	res.Reason, res.DetectedAtMS, res.Principal = st.Reason, st.DetectedAt.UnixMilli(), st.Principal
	res.Changed = res.PreviousStatus != v.status || res.PreviousCurrent != ""
	res.updatedAt = st.UpdatedAt
	in.publish(events.Event{
		ID: in.lastStatusEventID(ctx, e.SkillID, e.Version), Kind: v.event, SkillID: e.SkillID, Version: e.Version,
		Status: string(v.status), Reason: st.Reason, Principal: st.Principal, At: st.UpdatedAt,
	})
	return res, nil
}

// normalizeKey normalizes a skill id and an optional version.
func normalizeKey(id, version string) (string, string, error) {
	id, err := normalizeID(id)
	if err != nil {
		return "", "", err
	}
	version, err = normalizeVersion(version)
	return id, version, err
}

// recheck reads the installed artifact of e, checks its SHA-256, verifies
// it against the trust store file without trust on first use, audits it
// and evaluates it against the profile. A failure to verify is the error;
// a failed audit or policy is in the admission.
func (in *Installer) recheck(ctx context.Context, e inventory.Entry) (*admission, error) {
	vr, err := in.reverify(ctx, e)
	if err != nil {
		return nil, err
	}
	return in.evaluate(ctx, vr, e.ArtifactSHA256)
}

// reverify reads the installed artifact of e (checking it is the one
// recorded) and verifies it against the trust store as it is now, without
// trust on first use.
func (in *Installer) reverify(ctx context.Context, e inventory.Entry) (*artifact.VerifyReport, error) {
	data, err := readArtifact(in.VersionDir(e.SkillID, e.Version), e.ArtifactSHA256)
	if err != nil {
		return nil, err
	}
	return in.verifyBytes(ctx, data, in.trust.Decider(), false)
}

// RemoveResult lists the versions Remove took out.
type RemoveResult struct {
	SkillID  string   `json:"skill_id"`
	Versions []string `json:"versions"`
	// Current is the skill's current version afterwards ("" when none is
	// left).
	Current string `json:"current,omitempty"`
}

// Remove uninstalls version of skill id, or, unlike the other operations,
// every version when version is "" (as Palyra's remove does). The
// inventory rows go first, in one transaction with a skill.removed event
// per version, then the directories; the next highest version (that an
// upgrade did not hold back, if there is one) becomes
// current. Status rows and the journal stay, so a quarantined version is
// still quarantined if it is installed again. principal "" means
// PrincipalLocal. Publishes skill:removed per version.
func (in *Installer) Remove(ctx context.Context, id, version, principal string) (*RemoveResult, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return nil, err
	}
	principal = strings.TrimSpace(principal)
	if principal == "" {
		principal = PrincipalLocal
	}
	lk, err := in.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	res := &RemoveResult{SkillID: id}
	var ids []int64
	err = in.db.Update(ctx, func(tx *inventory.Tx) error {
		removed, err := tx.DeleteSkill(id, version)
		if err != nil {
			return err
		}
		res.Versions, ids = removed, nil
		for _, v := range removed {
			evID, err := tx.AppendEvent(inventory.Event{Kind: inventory.EventRemoved, SkillID: id, Version: v, Principal: principal})
			if err != nil {
				return err
			}
			ids = append(ids, evID)
		}
		if cur, err := tx.Skill(id, ""); err == nil {
			res.Current = cur.Version
		}
		return nil
	})
	if err != nil {
		lk.unlock()
		return nil, fmt.Errorf("install: %w", err)
	}
	crashPoint("remove:committed")
	skillDir := filepath.Join(in.skillsDir, id)
	for _, v := range res.Versions {
		removeDir(skillDir, filepath.Join(skillDir, v))
	}
	crashPoint("remove:deleted")
	if res.Current == "" {
		if empty, err := in.recoverSkill(context.WithoutCancel(ctx), id, &RecoverReport{}); err == nil && empty {
			lk.releaseAndRemove()
		} else {
			lk.unlock()
		}
	} else {
		lk.unlock()
	}
	at := in.now()
	for i, v := range res.Versions {
		in.publish(events.Event{ID: ids[i], Kind: events.SkillRemoved, SkillID: id, Version: v, Principal: principal, At: at})
	}
	return res, nil
}

// VerifyResult is the outcome of Verify.
type VerifyResult struct {
	SkillID       string                 `json:"skill_id"`
	Version       string                 `json:"version"`
	TrustDecision string                 `json:"trust_decision"`
	PayloadSHA256 string                 `json:"payload_sha256"`
	Report        *artifact.VerifyReport `json:"verification"`
}

// Verify re-verifies the installed artifact of version of skill id ("" =
// current) against the trust store as it is now, without trust on first
// use, and records the trust decision in the inventory with a
// skill.verified event. A failure (missing or modified artifact, bad
// signature, untrusted publisher) is returned and changes nothing; Reaudit
// is what quarantines.
func (in *Installer) Verify(ctx context.Context, id, version string) (*VerifyResult, error) {
	e, lk, err := in.lockedEntry(ctx, id, version)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	vr, err := in.reverify(ctx, e)
	if err != nil {
		return nil, err
	}
	rec := e.Record
	rec.TrustDecision, rec.PayloadSHA256 = vr.TrustDecision, vr.PayloadSHA256
	details, _ := json.Marshal(map[string]string{"trust_decision": vr.TrustDecision, "payload_sha256": vr.PayloadSHA256})
	err = in.db.Update(ctx, func(tx *inventory.Tx) error {
		if err := tx.PutSkill(rec, inventory.PutOptions{Replace: true}); err != nil {
			return err
		}
		_, err := tx.AppendEvent(inventory.Event{
			Kind: inventory.EventVerified, SkillID: e.SkillID, Version: e.Version, Principal: PrincipalLocal, Details: details,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	return &VerifyResult{SkillID: e.SkillID, Version: e.Version, TrustDecision: vr.TrustDecision, PayloadSHA256: vr.PayloadSHA256, Report: vr}, nil
}

// AuditResult is the outcome of AuditInstalled and AuditArtifact: the audit
// report and policy decision of one artifact. It changes no status.
type AuditResult struct {
	// Source is "installed" or "artifact".
	Source             string           `json:"source"`
	Artifact           string           `json:"artifact,omitempty"`
	SkillID            string           `json:"skill_id"`
	Version            string           `json:"version"`
	TrustDecision      string           `json:"trust_decision"`
	Passed             bool             `json:"passed"`
	QuarantineRequired bool             `json:"quarantine_required"`
	Reasons            []string         `json:"reasons"`
	Report             *audit.Report    `json:"report"`
	Policy             *policy.Decision `json:"policy"`
	err                error
}

// Err returns nil when the artifact passed, else an error wrapping
// ErrAuditFailed or ErrPolicyViolation with the reasons.
func (r *AuditResult) Err() error { return r.err }

func auditResult(source string, adm *admission) *AuditResult {
	m := adm.verify.Inspection.Manifest
	return &AuditResult{
		Source: source, SkillID: m.SkillID, Version: m.Version, TrustDecision: adm.verify.TrustDecision,
		Passed: !adm.quarantine(), QuarantineRequired: adm.quarantine(), Reasons: append([]string{}, adm.reasons...),
		Report: adm.report, Policy: adm.decision, err: adm.err,
	}
}

// AuditInstalled audits the installed artifact of version of skill id
// ("" = current) as Enable re-checks it; the result's Err says whether it
// would be quarantined. An artifact that fails verification is the error.
func (in *Installer) AuditInstalled(ctx context.Context, id, version string) (*AuditResult, error) {
	e, lk, err := in.lockedEntry(ctx, id, version)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	adm, err := in.recheck(ctx, e)
	if err != nil {
		return nil, err
	}
	r := auditResult("installed", adm)
	r.Artifact = filepath.Join(in.VersionDir(e.SkillID, e.Version), ArtifactFile)
	return r, nil
}

// AuditOptions tune AuditArtifact.
type AuditOptions struct {
	// AllowTOFU accepts an unknown publisher for the audit. Nothing is
	// pinned: auditing changes no state.
	AllowTOFU bool
}

// AuditArtifact verifies and audits an artifact that is not installed.
// It changes nothing, not even the trust store.
func (in *Installer) AuditArtifact(ctx context.Context, data []byte, opts AuditOptions) (*AuditResult, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	decider, err := in.memoryDecider(ctx)
	if err != nil {
		return nil, err
	}
	vr, err := in.verifyBytes(ctx, data, decider, opts.AllowTOFU)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	adm, err := in.evaluate(ctx, vr, hex.EncodeToString(sum[:]))
	if err != nil {
		return nil, err
	}
	return auditResult("artifact", adm), nil
}
