package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/trust"
)

// Source says where an installed artifact came from (Palyra's
// source{kind, reference}).
type Source struct {
	// Kind is one of inventory's source kinds; "" means
	// inventory.SourceLocalArtifact.
	Kind inventory.SourceKind `json:"kind"`
	// Ref is the artifact's path or URL.
	Ref string `json:"reference"`
}

// TrustedKey allowlists one publisher key, as --trusted-publisher
// PUBLISHER=HEX does.
type TrustedKey struct {
	Publisher    string
	PublicKeyHex string
}

// InstallOptions tune Install. The zero value installs a new skill or a new
// version from a publisher the trust store already trusts, refusing any
// capability escalation.
type InstallOptions struct {
	// AllowTOFU lets an unknown publisher's key be pinned on first use.
	// The pin is saved only when the artifact is installed (kept
	// quarantined counts), never for a refused install.
	AllowTOFU bool
	// Force reinstalls a version that is already installed.
	Force bool
	// AcceptCapabilities accepts a capability escalation over the current
	// version.
	AcceptCapabilities bool
	// TrustedPublishers are added to the trust store's allowlist before
	// verification, and stay there (Palyra persists --trusted-publisher).
	TrustedPublishers []TrustedKey
	// Source is recorded with the install.
	Source Source
	// DryRun runs every check (verify, audit, policy, the installed
	// versions and the capability escalation, trust) and returns the result
	// the install would have, with Installed false, writing nothing: no
	// file, no inventory row, no trust pin.
	DryRun bool
	// Principal is recorded as who installed; "" means PrincipalInstall.
	Principal string
}

// InstallResult describes an install: what was installed and in which
// state, or, with ErrCapabilityEscalation, the diff that was refused.
type InstallResult struct {
	// EventKind is skill.installed for a skill's first version, else
	// skill.updated.
	EventKind      inventory.EventKind `json:"event_kind"`
	SkillID        string              `json:"skill_id"`
	Version        string              `json:"version"`
	Publisher      string              `json:"publisher"`
	ArtifactSHA256 string              `json:"artifact_sha256"`
	PayloadSHA256  string              `json:"payload_sha256"`
	SignatureKeyID string              `json:"signature_key_id"`
	TrustDecision  string              `json:"trust_decision"`
	Source         Source              `json:"source"`
	// Installed is false when nothing was written (an escalation refused).
	Installed bool `json:"installed"`
	// Status is the version's status after the install: active, or
	// quarantined with Reasons. A version whose earlier status row was
	// quarantined or disabled (before a forced reinstall, or a remove and
	// reinstall) keeps that status and reason.
	Status  inventory.Status `json:"status"`
	Reasons []string         `json:"reasons"`
	// Current reports whether this version is now the current one (the
	// highest installed version that is not held back is).
	Current bool `json:"current"`
	// HeldBack is set when this version failed its checks (or kept a
	// quarantined or disabled status) while an active version was
	// current: it is installed, quarantined, but not current, and the
	// active version keeps serving. Enable of this version by name is the
	// only way to make it current.
	HeldBack *inventory.HeldBack `json:"held_back,omitempty"`
	// Replaced is true for a forced reinstall of an installed version.
	Replaced bool `json:"replaced"`
	// PreviousVersion is the current version before the install ("" for a
	// first install).
	PreviousVersion string `json:"previous_version,omitempty"`
	// CapabilityDiff lists what this version is granted beyond the
	// previous current version (policy.Escalation.Lines); empty when
	// nothing is added.
	CapabilityDiff []string          `json:"capability_diff"`
	Escalation     policy.Escalation `json:"escalation"`
	InstallDir     string            `json:"install_dir,omitempty"`
	ToolCount      int               `json:"tool_count"`
	Grants         policy.Grants     `json:"grants"`
	// Audit is the static audit report; Policy the profile's decision.
	Audit  *audit.Report    `json:"audit"`
	Policy *policy.Decision `json:"policy"`
	// MissingSecrets are the requested secrets the vault has no value for
	// (wildcard keys always), as Palyra's install records them; empty
	// when the Installer has no Config.SecretPresent.
	MissingSecrets []inventory.SecretRef `json:"missing_secrets"`
}

// Install admits the artifact in data and installs it.
//
// Install runs these steps in order (the package documentation says why).
// Each one is a method of installation:
//
//  1. allowlist: persist opts.TrustedPublishers in the trust store;
//  2. verify: structure, payload hash, signature, and the trust decision
//     (made against an in-memory copy of the store, so a refusal pins
//     nothing); a failure returns its error and installs nothing;
//  3. admit: audit and policy; a failure does not stop the install, it
//     decides that the version is kept quarantined;
//  4. checkInstalled, under the skill's lock: refuse an installed version
//     (ErrAlreadyInstalled) unless opts.Force, and refuse a capability
//     escalation over the current version (ErrCapabilityEscalation, with
//     the result carrying the diff) unless opts.AcceptCapabilities;
//  5. checkTrust: make the trust decision again on a fresh read of the
//     trust store file, in memory (a key pinned meanwhile refuses now,
//     before anything is written);
//  6. stageFiles, precompile, place: stage the version directory, fsync
//     it, run Config.Precompile on it unless admit quarantined it, rename
//     it into place (a forced reinstall first moves the old directory
//     aside);
//  7. commit: one inventory transaction: the record, the current version
//     (the highest that is not held back; a version that fails its checks
//     while an active version is current is held back instead), the
//     status row and its journal event, and for a new TOFU pin a pending
//     pin row; a new pin is decided under the trust store's lock, held
//     across that transaction, and saved right after it;
//  8. finish: delete the old directory of a forced reinstall, publish
//     skill:installed or skill:updated (and skill:quarantined).
//
// Whatever fails before the commit is undone by one deferred call
// (installation.undo): the staging directory or the new version directory
// is deleted and a set-aside copy put back. The skill's lock is released
// last, on every path.
//
// A quarantined install is kept: Install returns the result (Status
// quarantined, Reasons) together with an error wrapping ErrAuditFailed, or
// ErrPolicyViolation when only the operator profile refused, so a caller
// cannot mistake it for a skill that may run.
//
// ctx governs the steps before the rename; once the new directory is in
// place the commit runs to its end (bounded by the inventory's busy
// timeout) so that a cancelled caller does not leave work half done.
func (in *Installer) Install(ctx context.Context, data []byte, opts InstallOptions) (*InstallResult, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	t := in.newInstallation(data, opts)
	defer t.undo()
	for _, step := range []func(context.Context) error{
		t.allowlist,
		t.verify,
		t.admit,
		t.checkInstalled,
		t.checkTrust,
		t.dryRun,
		t.stageFiles,
		t.precompile,
		t.place,
	} {
		if err := step(ctx); errors.Is(err, errDryRun) {
			return t.res, t.adm.err
		} else if err != nil {
			return t.refused, err
		}
	}
	// From here on the caller's cancellation no longer applies, but to the
	// wait for the trust store's lock: the files are in place and must be
	// committed or undone.
	cctx := context.WithoutCancel(ctx)
	if err := t.commit(ctx, cctx); err != nil {
		return nil, err
	}
	return t.finish(cctx)
}

// installation is the state one Install shares between its steps. Each
// step fills in what the later ones and undo need.
type installation struct {
	in        *Installer
	data      []byte
	opts      InstallOptions
	principal string

	// Set by verify and admit.
	vr          *artifact.VerifyReport
	id, version string
	adm         *admission
	res         *InstallResult
	// refused is the result Install returns with a refusal that carries
	// one (a capability escalation); nil otherwise.
	refused *InstallResult

	// Set by checkInstalled.
	lk            *skillLock
	current, same *inventory.Entry

	// Set by stageFiles and place.
	skillDir, versionDir string
	now                  time.Time
	// staged is the staging directory while it exists under its staging
	// name ("" before stageFiles and once place moved it).
	staged string
	// setAside is where place moved the old directory of a forced
	// reinstall ("" when nothing was moved).
	setAside string
	// placed reports that the new directory is at versionDir.
	placed bool

	// Set by commit.
	kept      *inventory.StatusRecord
	committed bool
	// pinErr is the failure to save a committed install's TOFU pin (the
	// pending pin stays for Recover); nil otherwise.
	pinErr error
}

// newInstallation starts the state of one Install, applying the defaults
// of opts.
func (in *Installer) newInstallation(data []byte, opts InstallOptions) *installation {
	principal := strings.TrimSpace(opts.Principal)
	if principal == "" {
		principal = PrincipalInstall
	}
	if opts.Source.Kind == "" {
		opts.Source.Kind = inventory.SourceLocalArtifact
	}
	return &installation{in: in, data: data, opts: opts, principal: principal}
}

// undo reverts what the steps did unless the install committed: it
// deletes the staging directory or the new version directory and puts the
// set-aside copy of a forced reinstall back. Then it releases the skill's
// lock. Failures are left to Recover.
func (t *installation) undo() {
	if !t.committed {
		if t.staged != "" {
			_ = os.RemoveAll(t.staged)
		}
		if t.placed {
			removeDir(t.skillDir, t.versionDir)
		}
		if t.setAside != "" {
			if err := os.Rename(t.setAside, t.versionDir); err == nil {
				_ = syncDir(t.skillDir)
			}
		}
	}
	if t.lk != nil {
		t.lk.unlock()
	}
}

// allowlist persists opts.TrustedPublishers in the trust store.
func (t *installation) allowlist(ctx context.Context) error {
	if t.opts.DryRun && len(t.opts.TrustedPublishers) > 0 {
		return fmt.Errorf("install: %w: a dry run writes nothing, so it cannot allowlist publishers (allowlist them first)", ErrInvalidArgument)
	}
	return t.in.addTrusted(ctx, t.opts.TrustedPublishers)
}

// verify checks the artifact's structure, payload hash and signature, and
// decides trust against an in-memory copy of the trust store, so that a
// refusal pins nothing. It normalizes the skill id and version.
func (t *installation) verify(ctx context.Context) error {
	decider, err := t.in.memoryDecider(ctx)
	if err != nil {
		return err
	}
	if t.vr, err = t.in.verifyBytes(ctx, t.data, decider, t.opts.AllowTOFU); err != nil {
		return err
	}
	m := t.vr.Inspection.Manifest
	if t.id, err = normalizeID(m.SkillID); err != nil {
		return err
	}
	t.version, err = normalizeVersion(m.Version)
	return err
}

// admit audits the verified artifact and evaluates it against the profile
// (a failure decides the quarantine, it does not stop the install), and
// starts the result.
func (t *installation) admit(ctx context.Context) error {
	sum := sha256.Sum256(t.data)
	adm, err := t.in.evaluate(ctx, t.vr, hex.EncodeToString(sum[:]))
	if err != nil {
		return err
	}
	adm.holdForReview(t.vr.Inspection.Manifest)
	t.adm = adm
	ins, m := t.vr.Inspection, t.vr.Inspection.Manifest
	t.res = &InstallResult{
		SkillID:        t.id,
		Version:        t.version,
		Publisher:      m.Publisher,
		ArtifactSHA256: hex.EncodeToString(sum[:]),
		PayloadSHA256:  ins.PayloadSHA256,
		SignatureKeyID: ins.Signature.KeyID,
		TrustDecision:  t.vr.TrustDecision,
		Source:         t.opts.Source,
		Reasons:        []string{},
		CapabilityDiff: []string{},
		ToolCount:      len(m.Entrypoints.Tools),
		Grants:         adm.decision.Grants,
		Audit:          adm.report,
		Policy:         adm.decision,
		MissingSecrets: t.in.missingSecrets(ctx, m),
	}
	return nil
}

// checkInstalled takes the skill's lock (held until undo), recovers what a
// crashed operation on the skill left, and compares with the installed
// versions: the same version is refused unless opts.Force, and a
// capability escalation over the current version unless
// opts.AcceptCapabilities (the result, with the diff, is returned with
// that refusal).
func (t *installation) checkInstalled(ctx context.Context) error {
	lk, err := t.in.lock(ctx, t.id)
	if err != nil {
		return err
	}
	t.lk = lk
	if _, err := t.in.recoverSkill(ctx, t.id, &RecoverReport{}); err != nil {
		return err
	}
	installed, err := t.in.db.Skills(ctx, inventory.Filter{SkillID: t.id})
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	for i := range installed {
		if installed[i].Current {
			t.current = &installed[i]
		}
		if installed[i].Version == t.version {
			t.same = &installed[i]
		}
	}
	if t.same != nil && !t.opts.Force {
		return fmt.Errorf("install: %s %s: %w (reinstalling needs force: --force in the CLI, \"force\": true in the API)", t.id, t.version, ErrAlreadyInstalled)
	}
	res := t.res
	res.EventKind = inventory.EventInstalled
	if t.current == nil {
		return nil
	}
	res.EventKind = inventory.EventUpdated
	res.PreviousVersion = t.current.Version
	res.Escalation = policy.Diff(t.in.decisionOf(t.current.Manifest), t.adm.decision)
	res.CapabilityDiff = res.Escalation.Lines()
	if !res.Escalation.Empty() && !t.opts.AcceptCapabilities {
		t.refused = res
		return fmt.Errorf("install: %s %s over %s (accept capabilities to install): %w",
			t.id, t.version, t.current.Version, res.Escalation.Err())
	}
	return nil
}

// checkTrust makes the trust decision again on a fresh read of the trust
// store file, in memory: a key pinned for the publisher since verify
// refuses the install before any file is written. Nothing is saved here: a
// new pin is saved with the commit.
func (t *installation) checkTrust(ctx context.Context) error {
	decider, err := t.in.memoryDecider(ctx)
	if err != nil {
		return err
	}
	ins := t.vr.Inspection
	dec, err := decider.Decide(ctx, ins.Manifest.Publisher, ins.PublicKey, t.opts.AllowTOFU)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	t.res.TrustDecision = dec
	crashPoint("trust:decided")
	return nil
}

// errDryRun stops the steps of a dry run before stageFiles; Install does
// not return it.
var errDryRun = errors.New("dry run")

// dryRun ends a dry run after the checks: the result says what the install
// would be (the status the admission decides), and nothing is written.
func (t *installation) dryRun(context.Context) error {
	if !t.opts.DryRun {
		return nil
	}
	t.res.Installed = false
	t.res.Status = inventory.StatusActive
	if t.adm.quarantine() {
		t.res.Status = inventory.StatusQuarantined
		t.res.Reasons = append(t.res.Reasons, t.adm.reasons...)
	}
	return errDryRun
}

// stageFiles writes the version directory, with its metadata, under a
// staging name in the skill's directory, every file and directory fsynced.
func (t *installation) stageFiles(context.Context) error {
	res := t.res
	t.skillDir = filepath.Join(t.in.skillsDir, t.id)
	t.versionDir = filepath.Join(t.skillDir, t.version)
	t.now = t.in.now()
	meta := Metadata{
		SchemaVersion:  1,
		InstalledAtMS:  t.now.UnixMilli(),
		Source:         t.opts.Source,
		ArtifactSHA256: res.ArtifactSHA256,
		PayloadSHA256:  res.PayloadSHA256,
		Publisher:      res.Publisher,
		SignatureKeyID: res.SignatureKeyID,
		TrustDecision:  res.TrustDecision,
		MissingSecrets: res.MissingSecrets,
	}
	staged, err := stage(t.skillDir, t.data, t.vr.Inspection, meta)
	if err != nil {
		return err
	}
	t.staged = staged
	return nil
}

// precompile runs Config.Precompile on the staged modules; a failure of
// the hook quarantines the version, only cancellation fails the install.
// A version the admission quarantines already is not compiled: its code
// may not run, and compiling it is the cost the audit's
// wasm_module_complexity refuses to pay (the module of issue 19 took 27 s
// and 1.6 GB).
func (t *installation) precompile(ctx context.Context) error {
	if t.adm.quarantine() {
		return nil
	}
	return t.in.precompileStaged(ctx, t.staged, t.vr.Inspection.Entries, t.adm)
}

// place renames the staged directory to the version's name, each rename
// made durable. For a forced reinstall the installed directory is first
// moved aside (a directory already gone is not an error: re-audit
// quarantines such a version).
func (t *installation) place(context.Context) error {
	if t.same != nil {
		aside := filepath.Join(t.skillDir, setAsidePrefix+t.version)
		switch err := os.Rename(t.versionDir, aside); {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Errorf("install: set aside %s: %w", t.versionDir, err)
		default:
			t.setAside = aside
		}
		if err := syncDir(t.skillDir); err != nil {
			return err
		}
		crashPoint("set-aside")
	}
	if err := os.Rename(t.staged, t.versionDir); err != nil {
		return fmt.Errorf("install: move %s into place: %w", t.versionDir, err)
	}
	t.staged, t.placed = "", true
	if err := syncDir(t.skillDir); err != nil {
		return err
	}
	crashPoint("renamed")
	return nil
}

// commit writes, in one inventory transaction, the record, the current
// version, the status row and its journal event. A quarantine or disable
// recorded for this version before (a forced reinstall, or a remove and
// reinstall) is kept: only enable lifts it.
//
// A version whose status is not active (failed checks, or a kept status)
// and that is above an active current version is held back: the current
// version stays, and the hold records why (the code and message). Any
// other version makes the highest version that is not held back current.
//
// A new TOFU pin is part of the commit: the trust decision is made again
// under the trust store's lock (lockCtx governs the wait), the transaction
// also records the pin as pending, the store is written before the lock
// is released, and then the pending row is dropped. A crash before the
// transaction leaves neither the skill nor the pin; after it, Recover
// saves the pending pin.
func (t *installation) commit(lockCtx, ctx context.Context) error {
	id, version, res, adm := t.id, t.version, t.res, t.adm
	rec := inventory.Record{
		SkillID:        id,
		Version:        version,
		Publisher:      res.Publisher,
		ArtifactSHA256: res.ArtifactSHA256,
		PayloadSHA256:  res.PayloadSHA256,
		SignatureKeyID: res.SignatureKeyID,
		TrustDecision:  res.TrustDecision,
		SourceKind:     t.opts.Source.Kind,
		SourceRef:      t.opts.Source.Ref,
		InstalledAt:    t.now,
		InstallDir:     "skills/" + id + "/" + version,
		ToolCount:      res.ToolCount,
		MissingSecrets: res.MissingSecrets,
		ReviewPending:  adm.review,
	}
	var err error
	if rec.Manifest, err = json.Marshal(t.vr.Inspection.Manifest); err != nil {
		return fmt.Errorf("install: encode manifest: %w", err)
	}
	if rec.AuditReport, err = json.Marshal(adm.report); err != nil {
		return fmt.Errorf("install: encode audit report: %w", err)
	}
	if rec.Grants, err = json.Marshal(adm.decision.Grants); err != nil {
		return fmt.Errorf("install: encode grants: %w", err)
	}
	details, err := json.Marshal(map[string]any{
		"artifact_sha256":  res.ArtifactSHA256,
		"payload_sha256":   res.PayloadSHA256,
		"trust_decision":   res.TrustDecision,
		"previous_version": res.PreviousVersion,
		"replaced":         t.same != nil,
		"capability_diff":  res.CapabilityDiff,
		"source":           t.opts.Source,
	})
	if err != nil {
		return fmt.Errorf("install: encode event details: %w", err)
	}
	status, reason := inventory.StatusActive, ""
	if adm.quarantine() {
		status, reason = inventory.StatusQuarantined, boundReason(strings.Join(adm.reasons, "; "))
	}
	write := func(pin *inventory.PendingPin) error {
		rec.TrustDecision = res.TrustDecision
		return t.in.db.Update(ctx, func(tx *inventory.Tx) error {
			if err := tx.PutSkill(rec, inventory.PutOptions{Replace: t.same != nil}); err != nil {
				return err
			}
			ch := inventory.StatusChange{
				SkillID: id, Version: version, Status: status, Reason: reason,
				Principal: t.principal, Kind: res.EventKind, Details: details,
			}
			if prev, err := tx.Status(id, version); err == nil && status == inventory.StatusActive &&
				(prev.Status == inventory.StatusQuarantined || prev.Status == inventory.StatusDisabled) {
				t.kept = &prev
				ch.Status, ch.Reason, ch.Principal, ch.DetectedAt = prev.Status, prev.Reason, prev.Principal, prev.DetectedAt
			}
			if err := t.placeCurrent(tx, ch); err != nil {
				return err
			}
			if pin != nil {
				if err := tx.AddPendingPin(*pin); err != nil {
					return err
				}
			}
			return tx.SetStatus(ch)
		})
	}
	if res.TrustDecision != string(trust.DecisionTOFUNewlyPinned) {
		return t.landed(ctx, write(nil))
	}
	// A new pin: decide again under the store's lock, commit, save.
	ins := t.vr.Inspection
	var commitErr error
	err = t.in.trust.Update(lockCtx, func(s *trust.Store) (bool, error) {
		dec, err := s.Decide(ins.Manifest.Publisher, ins.PublicKey, t.opts.AllowTOFU)
		if err != nil {
			return false, fmt.Errorf("install: %w", err)
		}
		res.TrustDecision = string(dec)
		var pin *inventory.PendingPin
		if dec == trust.DecisionTOFUNewlyPinned {
			pin = &inventory.PendingPin{SkillID: id, Version: version, Publisher: ins.Manifest.Publisher, PublicKeyHex: hex.EncodeToString(ins.PublicKey)}
		}
		if commitErr = t.landed(ctx, write(pin)); commitErr != nil {
			return false, commitErr
		}
		return pin != nil, nil
	})
	switch {
	case !t.committed && (commitErr != nil || strings.HasPrefix(err.Error(), "install:")):
		return err
	case !t.committed:
		return fmt.Errorf("install: %w", err)
	case err != nil:
		// Committed, but the store was not written: the pending pin stays
		// and Recover saves it.
		t.pinErr = err
		return nil
	}
	crashPoint("trust:saved")
	// The pin is saved: drop its pending row (Recover drops one left here).
	_ = t.in.db.Update(ctx, func(tx *inventory.Tx) error { return tx.DeletePendingPin(id, version) })
	return nil
}

// placeCurrent decides, inside the install's transaction, whether the
// version becomes current or is held back. ch is the status it is about
// to get.
func (t *installation) placeCurrent(tx *inventory.Tx, ch inventory.StatusChange) error {
	id, version := t.id, t.version
	all, err := tx.Skills(inventory.Filter{SkillID: id})
	if err != nil {
		return err
	}
	var cur *inventory.Entry
	for i := range all {
		if all[i].Current {
			cur = &all[i]
		}
	}
	if ch.Status != inventory.StatusActive && cur != nil && cur.Version != version &&
		cur.Status != nil && cur.Status.Status == inventory.StatusActive &&
		inventory.CompareVersions(version, cur.Version) > 0 {
		code, msg := "skill_"+string(ch.Status), ch.Reason
		if t.kept == nil && t.adm.quarantine() {
			code, msg = errcode.Of(t.adm.err), t.adm.err.Error()
		}
		return tx.HoldBack(id, version, code, boundReason(msg))
	}
	if err := tx.HoldBack(id, version, "", ""); err != nil {
		return err
	}
	highest := version
	for _, e := range all {
		if e.HeldBack == nil && inventory.CompareVersions(e.Version, highest) > 0 {
			highest = e.Version
		}
	}
	return tx.SetCurrent(id, highest)
}

// landed returns nil when the install's transaction committed, marking it
// so. A commit reported as failed may still have landed (an error on the
// way back): the database decides which copy stays.
func (t *installation) landed(ctx context.Context, err error) error {
	if err != nil {
		e, rerr := t.in.db.Skill(ctx, t.id, t.version)
		landed := rerr == nil && e.ArtifactSHA256 == t.res.ArtifactSHA256 &&
			(t.same == nil || t.same.ArtifactSHA256 != t.res.ArtifactSHA256)
		if !landed {
			return fmt.Errorf("install: commit %s %s: %w", t.id, t.version, err)
		}
	}
	t.committed = true
	crashPoint("committed")
	return nil
}

// finish runs after the commit: it deletes the set-aside copy of a forced
// reinstall, completes the result from the inventory, and publishes
// skill:installed or skill:updated (and skill:quarantined). A quarantined
// install returns its result with the admission's error.
func (t *installation) finish(ctx context.Context) (*InstallResult, error) {
	id, version, res, adm := t.id, t.version, t.res, t.adm
	if t.setAside != "" {
		removeDir(t.skillDir, t.setAside)
		crashPoint("cleaned")
	}
	e, err := t.in.db.Skill(ctx, id, version)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	res.Installed = true
	res.Replaced = t.same != nil
	res.Current = e.Current
	res.HeldBack = e.HeldBack
	res.InstallDir = t.versionDir
	if e.Status != nil {
		res.Status = e.Status.Status
		if e.Status.Reason != "" {
			res.Reasons = strings.Split(e.Status.Reason, "; ")
		}
	}
	if t.kept == nil && adm.quarantine() {
		res.Reasons = slices.Clone(adm.reasons)
	}
	evID := t.in.lastStatusEventID(ctx, id, version)
	at := t.in.now()
	busKind := events.SkillInstalled
	if res.EventKind == inventory.EventUpdated {
		busKind = events.SkillUpdated
	}
	evs := []events.Event{{
		ID: evID, Kind: busKind, SkillID: id, Version: version, Status: string(res.Status),
		Reason: strings.Join(res.Reasons, "; "), Principal: t.principal, At: at,
		Details: map[string]any{"artifact_sha256": res.ArtifactSHA256, "previous_version": res.PreviousVersion, "replaced": res.Replaced, "current": res.Current},
	}}
	if res.Status == inventory.StatusQuarantined {
		evs = append(evs, events.Event{
			ID: evID, Kind: events.SkillQuarantined, SkillID: id, Version: version, Status: string(res.Status),
			Reason: strings.Join(res.Reasons, "; "), Principal: t.principal, At: at,
		})
	}
	if res.HeldBack != nil {
		evs[0].Details["held_back"] = res.HeldBack.Code
	}
	t.in.publish(evs...)
	held := ""
	if res.HeldBack != nil {
		held = fmt.Sprintf(" and held back (%s stays current; enable %s %s to make it current)", res.PreviousVersion, id, version)
	}
	switch {
	case adm.quarantine():
		return res, fmt.Errorf("install: %s %s installed as quarantined%s: %w", id, version, held, adm.err)
	case t.pinErr != nil:
		return res, fmt.Errorf("install: %s %s installed, but its trust pin is not saved yet (the next open saves it): %w", id, version, t.pinErr)
	}
	return res, nil
}

// precompileStaged runs Config.Precompile on every module of a staged
// version directory. A failure of the hook quarantines the version (it is
// recorded in adm), with code compile_budget_exceeded when the hook's error
// wraps ErrCompileBudgetExceeded and precompile_failed otherwise; only the
// caller's cancellation fails the install.
func (in *Installer) precompileStaged(ctx context.Context, staged string, entries map[string][]byte, adm *admission) error {
	if in.precompile == nil {
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		if !strings.HasPrefix(name, "modules/") || !strings.HasSuffix(name, ".wasm") {
			continue
		}
		sum := sha256.Sum256(entries[name])
		err := in.precompile(ctx, filepath.Join(staged, filepath.FromSlash(name)), hex.EncodeToString(sum[:]))
		if err == nil {
			continue
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("install: precompile %s: %w", name, cerr)
		}
		reason := "precompile_failed: " + name + ": " + err.Error()
		qerr := fmt.Errorf("%w: %s: %w", ErrPrecompileFailed, name, err)
		if errors.Is(err, ErrCompileBudgetExceeded) {
			// Its own code: the module costs too much to compile, which
			// no retry changes.
			reason = "compile_budget_exceeded: " + name + ": " + err.Error()
			qerr = fmt.Errorf("install: precompile %s: %w", name, err)
		}
		adm.reasons = append(adm.reasons, reason)
		if adm.err == nil {
			adm.err = qerr
		} else {
			adm.err = errors.Join(adm.err, qerr)
		}
	}
	return nil
}

// addTrusted allowlists keys in the trust store.
// AddTrusted persists keys in the trust store's allowlist, as an install
// with InstallOptions.TrustedPublishers does first. A caller that must
// judge something else by the trust store before the install (a registry
// index's key) calls it first.
func (in *Installer) AddTrusted(ctx context.Context, keys []TrustedKey) error {
	if err := in.check(ctx); err != nil {
		return err
	}
	return in.addTrusted(ctx, keys)
}

func (in *Installer) addTrusted(ctx context.Context, keys []TrustedKey) error {
	if len(keys) == 0 {
		return nil
	}
	err := in.trust.Update(ctx, func(s *trust.Store) (bool, error) {
		for _, k := range keys {
			if err := s.AddTrusted(k.Publisher, k.PublicKeyHex); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	return nil
}

// removeDir deletes dir, a child of skillDir, so that a crash part way
// never leaves a partial directory under a name that means something: it
// is first renamed to a staging name (which Recover deletes), and the
// rename is made durable before the contents go.
func removeDir(skillDir, dir string) {
	trash, err := os.MkdirTemp(skillDir, stagingPrefix)
	if err != nil {
		_ = os.RemoveAll(dir)
		return
	}
	target := filepath.Join(trash, "x")
	if err := os.Rename(dir, target); err != nil {
		_ = os.Remove(trash)
		if !errors.Is(err, os.ErrNotExist) {
			_ = os.RemoveAll(dir)
		}
		return
	}
	_ = syncDir(skillDir)
	_ = os.RemoveAll(trash)
}

// missingSecrets lists the secrets m requests that the vault lacks.
func (in *Installer) missingSecrets(ctx context.Context, m *manifest.Manifest) []inventory.SecretRef {
	out := []inventory.SecretRef{}
	if in.secretOK == nil {
		return out
	}
	for _, s := range m.Capabilities.Secrets {
		scope := strings.TrimSpace(s.Scope)
		for _, k := range s.KeyNames {
			key := strings.TrimSpace(k)
			ok := false
			if !strings.Contains(key, "*") {
				present, err := in.secretOK(ctx, scope, key)
				ok = err == nil && present
			}
			if !ok {
				out = append(out, inventory.SecretRef{Scope: scope, Key: key})
			}
		}
	}
	return out
}
