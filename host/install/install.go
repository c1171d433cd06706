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

	"github.com/palyra-go/palyra/host/audit"
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
	// highest installed version is).
	Current bool `json:"current"`
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
	// (wildcard keys always), as Palyra records them (facts §6.5); empty
	// when the Installer has no Config.SecretPresent.
	MissingSecrets []inventory.SecretRef `json:"missing_secrets"`
}

// Install admits the artifact in data and installs it.
//
// The steps, in order (see the package documentation for why):
//
//  1. persist opts.TrustedPublishers in the trust store;
//  2. verify: structure, payload hash, signature, and the trust decision
//     (made against an in-memory copy of the store, so a refusal pins
//     nothing); a failure returns its error and installs nothing;
//  3. audit and policy: a failure does not stop the install, it decides
//     that the version is kept quarantined;
//  4. under the skill's lock: refuse an installed version
//     (ErrAlreadyInstalled) unless opts.Force, and refuse a capability
//     escalation over the current version (ErrCapabilityEscalation, with
//     the result carrying the diff) unless opts.AcceptCapabilities;
//  5. make the trust decision again on the trust store file, saving a new
//     TOFU pin;
//  6. stage the version directory, fsync it, rename it into place (a
//     forced reinstall first moves the old directory aside);
//  7. one inventory transaction: the record, the current version (the
//     highest), the status row and its journal event;
//  8. delete the old directory of a forced reinstall, release the lock,
//     publish skill:installed or skill:updated (and skill:quarantined).
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
	principal := strings.TrimSpace(opts.Principal)
	if principal == "" {
		principal = PrincipalInstall
	}
	if opts.Source.Kind == "" {
		opts.Source.Kind = inventory.SourceLocalArtifact
	}
	if err := in.addTrusted(ctx, opts.TrustedPublishers); err != nil {
		return nil, err
	}

	// 2. Verify, with trust decided in memory.
	decider, err := in.memoryDecider(ctx)
	if err != nil {
		return nil, err
	}
	vr, err := in.verifyBytes(ctx, data, decider, opts.AllowTOFU)
	if err != nil {
		return nil, err
	}
	ins := vr.Inspection
	m := ins.Manifest
	id, err := normalizeID(m.SkillID)
	if err != nil {
		return nil, err
	}
	version, err := normalizeVersion(m.Version)
	if err != nil {
		return nil, err
	}

	// 3. Audit and policy.
	adm, err := in.evaluate(ctx, vr)
	if err != nil {
		return nil, err
	}

	sum := sha256.Sum256(data)
	res := &InstallResult{
		SkillID:        id,
		Version:        version,
		Publisher:      m.Publisher,
		ArtifactSHA256: hex.EncodeToString(sum[:]),
		PayloadSHA256:  ins.PayloadSHA256,
		SignatureKeyID: ins.Signature.KeyID,
		TrustDecision:  vr.TrustDecision,
		Source:         opts.Source,
		Reasons:        []string{},
		CapabilityDiff: []string{},
		ToolCount:      len(m.Entrypoints.Tools),
		Grants:         adm.decision.Grants,
		Audit:          adm.report,
		Policy:         adm.decision,
		MissingSecrets: in.missingSecrets(ctx, m),
	}

	// 4. Under the skill's lock: existing versions.
	lk, err := in.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	if _, err := in.recoverSkill(ctx, id, &RecoverReport{}); err != nil {
		return nil, err
	}
	installed, err := in.db.Skills(ctx, inventory.Filter{SkillID: id})
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	var current, same *inventory.Entry
	for i := range installed {
		if installed[i].Current {
			current = &installed[i]
		}
		if installed[i].Version == version {
			same = &installed[i]
		}
	}
	if same != nil && !opts.Force {
		return nil, fmt.Errorf("install: %s %s: %w (use force to reinstall)", id, version, ErrAlreadyInstalled)
	}
	res.EventKind = inventory.EventInstalled
	if current != nil {
		res.EventKind = inventory.EventUpdated
		res.PreviousVersion = current.Version
		res.Escalation = policy.Diff(in.decisionOf(current.Manifest), adm.decision)
		res.CapabilityDiff = res.Escalation.Lines()
		if !res.Escalation.Empty() && !opts.AcceptCapabilities {
			return res, fmt.Errorf("install: %s %s over %s (accept capabilities to install): %w",
				id, version, current.Version, res.Escalation.Err())
		}
	}

	// 5. The trust decision on the file, saving a new pin.
	dec, err := in.trust.Decide(ctx, m.Publisher, ins.PublicKey, opts.AllowTOFU)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	res.TrustDecision = string(dec)
	crashPoint("trust:decided")

	// 6. Stage and rename into place.
	skillDir := filepath.Join(in.skillsDir, id)
	versionDir := filepath.Join(skillDir, version)
	now := in.now()
	meta := Metadata{
		SchemaVersion:  1,
		InstalledAtMS:  now.UnixMilli(),
		Source:         opts.Source,
		ArtifactSHA256: res.ArtifactSHA256,
		PayloadSHA256:  res.PayloadSHA256,
		Publisher:      res.Publisher,
		SignatureKeyID: res.SignatureKeyID,
		TrustDecision:  res.TrustDecision,
		MissingSecrets: res.MissingSecrets,
	}
	staged, err := stage(skillDir, data, ins, meta)
	if err != nil {
		return nil, err
	}
	if err := in.precompileStaged(ctx, staged, ins.Entries, adm); err != nil {
		_ = os.RemoveAll(staged)
		return nil, err
	}
	setAside := ""
	if same != nil {
		setAside = filepath.Join(skillDir, setAsidePrefix+version)
		if err := os.Rename(versionDir, setAside); errors.Is(err, os.ErrNotExist) {
			setAside = "" // the old directory is gone (re-audit quarantines such a version)
		} else if err != nil {
			_ = os.RemoveAll(staged)
			return nil, fmt.Errorf("install: set aside %s: %w", versionDir, err)
		}
		if err := syncDir(skillDir); err != nil {
			in.undo(skillDir, "", setAside, versionDir)
			_ = os.RemoveAll(staged)
			return nil, err
		}
		crashPoint("set-aside")
	}
	if err := os.Rename(staged, versionDir); err != nil {
		_ = os.RemoveAll(staged)
		in.undo(skillDir, "", setAside, versionDir)
		return nil, fmt.Errorf("install: move %s into place: %w", versionDir, err)
	}
	if err := syncDir(skillDir); err != nil {
		in.undo(skillDir, versionDir, setAside, versionDir)
		return nil, err
	}
	crashPoint("renamed")

	// 7. One transaction. From here on the caller's cancellation no longer
	// applies: the files are in place and must be committed or undone.
	cctx := context.WithoutCancel(ctx)
	rec := inventory.Record{
		SkillID:        id,
		Version:        version,
		Publisher:      res.Publisher,
		ArtifactSHA256: res.ArtifactSHA256,
		PayloadSHA256:  res.PayloadSHA256,
		SignatureKeyID: res.SignatureKeyID,
		TrustDecision:  res.TrustDecision,
		SourceKind:     opts.Source.Kind,
		SourceRef:      opts.Source.Ref,
		InstalledAt:    now,
		InstallDir:     "skills/" + id + "/" + version,
		ToolCount:      res.ToolCount,
		MissingSecrets: res.MissingSecrets,
	}
	if rec.Manifest, err = json.Marshal(m); err != nil {
		in.undo(skillDir, versionDir, setAside, versionDir)
		return nil, fmt.Errorf("install: encode manifest: %w", err)
	}
	if rec.AuditReport, err = json.Marshal(adm.report); err != nil {
		in.undo(skillDir, versionDir, setAside, versionDir)
		return nil, fmt.Errorf("install: encode audit report: %w", err)
	}
	if rec.Grants, err = json.Marshal(adm.decision.Grants); err != nil {
		in.undo(skillDir, versionDir, setAside, versionDir)
		return nil, fmt.Errorf("install: encode grants: %w", err)
	}
	details, err := json.Marshal(map[string]any{
		"artifact_sha256":  res.ArtifactSHA256,
		"payload_sha256":   res.PayloadSHA256,
		"trust_decision":   res.TrustDecision,
		"previous_version": res.PreviousVersion,
		"replaced":         same != nil,
		"capability_diff":  res.CapabilityDiff,
		"source":           opts.Source,
	})
	if err != nil {
		in.undo(skillDir, versionDir, setAside, versionDir)
		return nil, fmt.Errorf("install: encode event details: %w", err)
	}
	status, reason := inventory.StatusActive, ""
	if adm.quarantine() {
		status, reason = inventory.StatusQuarantined, boundReason(strings.Join(adm.reasons, "; "))
	}
	var kept *inventory.StatusRecord
	err = in.db.Update(cctx, func(tx *inventory.Tx) error {
		if err := tx.PutSkill(rec, inventory.PutOptions{Replace: same != nil}); err != nil {
			return err
		}
		all, err := tx.Skills(inventory.Filter{SkillID: id})
		if err != nil {
			return err
		}
		if err := tx.SetCurrent(id, all[len(all)-1].Version); err != nil {
			return err
		}
		// A quarantine or disable recorded for this version before (a
		// forced reinstall, or a remove and reinstall) stays: only enable
		// lifts it.
		ch := inventory.StatusChange{
			SkillID: id, Version: version, Status: status, Reason: reason,
			Principal: principal, Kind: res.EventKind, Details: details,
		}
		if prev, err := tx.Status(id, version); err == nil && status == inventory.StatusActive &&
			(prev.Status == inventory.StatusQuarantined || prev.Status == inventory.StatusDisabled) {
			kept = &prev
			ch.Status, ch.Reason, ch.Principal, ch.DetectedAt = prev.Status, prev.Reason, prev.Principal, prev.DetectedAt
		}
		return tx.SetStatus(ch)
	})
	if err != nil {
		// A commit reported as failed may still have landed (an error on
		// the way back): the database decides which copy stays.
		if e, rerr := in.db.Skill(cctx, id, version); rerr == nil && e.ArtifactSHA256 == res.ArtifactSHA256 &&
			(same == nil || same.ArtifactSHA256 != res.ArtifactSHA256) {
			err = nil
		} else {
			in.undo(skillDir, versionDir, setAside, versionDir)
			return nil, fmt.Errorf("install: commit %s %s: %w", id, version, err)
		}
	}
	crashPoint("committed")

	// 8. Clean up and publish.
	if setAside != "" {
		removeDir(skillDir, setAside)
		crashPoint("cleaned")
	}
	e, err := in.db.Skill(cctx, id, version)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	res.Installed = true
	res.Replaced = same != nil
	res.Current = e.Current
	res.InstallDir = versionDir
	if e.Status != nil {
		res.Status = e.Status.Status
		if e.Status.Reason != "" {
			res.Reasons = strings.Split(e.Status.Reason, "; ")
		}
	}
	if kept == nil && adm.quarantine() {
		res.Reasons = slices.Clone(adm.reasons)
	}
	evID := in.lastStatusEventID(cctx, id, version)
	at := in.now()
	busKind := events.SkillInstalled
	if res.EventKind == inventory.EventUpdated {
		busKind = events.SkillUpdated
	}
	evs := []events.Event{{
		ID: evID, Kind: busKind, SkillID: id, Version: version, Status: string(res.Status),
		Reason: strings.Join(res.Reasons, "; "), Principal: principal, At: at,
		Details: map[string]any{"artifact_sha256": res.ArtifactSHA256, "previous_version": res.PreviousVersion, "replaced": res.Replaced},
	}}
	if res.Status == inventory.StatusQuarantined {
		evs = append(evs, events.Event{
			ID: evID, Kind: events.SkillQuarantined, SkillID: id, Version: version, Status: string(res.Status),
			Reason: strings.Join(res.Reasons, "; "), Principal: principal, At: at,
		})
	}
	in.publish(evs...)
	if adm.quarantine() {
		return res, fmt.Errorf("install: %s %s installed as quarantined: %w", id, version, adm.err)
	}
	return res, nil
}

// precompileStaged runs Config.Precompile on every module of a staged
// version directory. A failure of the hook quarantines the version (it is
// recorded in adm); only the caller's cancellation fails the install.
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
		adm.reasons = append(adm.reasons, reason)
		if adm.err == nil {
			adm.err = fmt.Errorf("%w: %s: %w", ErrPrecompileFailed, name, err)
		} else {
			adm.err = errors.Join(adm.err, fmt.Errorf("%w: %s: %w", ErrPrecompileFailed, name, err))
		}
	}
	return nil
}

// addTrusted allowlists keys in the trust store.
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

// undo reverts the renames of a failed install: it removes the new
// directory (placed, when not "") and puts the set-aside copy back at
// versionDir. Failures are left to Recover.
func (in *Installer) undo(skillDir, placed, setAside, versionDir string) {
	if placed != "" {
		removeDir(skillDir, placed)
	}
	if setAside != "" {
		if err := os.Rename(setAside, versionDir); err == nil {
			_ = syncDir(skillDir)
		}
	}
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
