package inventory

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Tx is one write transaction, handed to the function given to DB.Update.
// Its methods use Update's context. A Tx is not safe for concurrent use and
// is dead once that function returns.
type Tx struct {
	ctx  context.Context
	tx   *sql.Tx
	now  func() time.Time
	done bool
}

func (t *Tx) check() error {
	if t.done {
		return fmt.Errorf("inventory: %w", sql.ErrTxDone)
	}
	return nil
}

// PutSkill stores an installed version. It fails with ErrAlreadyInstalled
// when (skill id, version) is installed already, unless opts.Replace is
// set. When rec.Current is set the new version becomes current; otherwise
// it does when it is the skill's only version, and a replaced version keeps
// its current flag. The status row is separate: write it with SetStatus in
// the same transaction.
func (t *Tx) PutSkill(rec Record, opts PutOptions) error {
	if err := t.check(); err != nil {
		return err
	}
	r, err := normalizeRecord(rec)
	if err != nil {
		return err
	}
	manifest, err := checkJSON("manifest", r.Manifest)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(bytes.TrimSpace(r.Manifest), []byte("{")) {
		return invalid("manifest", "not a JSON object")
	}
	audit, err := checkJSON("audit_report", r.AuditReport)
	if err != nil {
		return err
	}
	grants, err := checkJSON("grants", r.Grants)
	if err != nil {
		return err
	}
	missing := r.MissingSecrets
	if missing == nil {
		missing = []SecretRef{}
	}
	missingJSON, err := json.Marshal(missing)
	if err != nil {
		return invalid("missing_secrets", "%v", err)
	}
	installedAt := r.InstalledAt
	if installedAt.IsZero() {
		installedAt = t.now()
	}

	var wasCurrent bool
	err = t.tx.QueryRowContext(t.ctx, `SELECT current FROM skills WHERE skill_id = ? AND version = ?`,
		r.SkillID, r.Version).Scan(&wasCurrent)
	exists := err == nil
	switch {
	case exists && !opts.Replace:
		return fmt.Errorf("%w: %s %s", ErrAlreadyInstalled, r.SkillID, r.Version)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return wrap("put skill", err)
	}
	current := r.Current || wasCurrent
	if current {
		if err := t.clearCurrent(r.SkillID, r.Version); err != nil {
			return err
		}
	}
	_, err = t.tx.ExecContext(t.ctx, `INSERT INTO skills (
    skill_id, version, publisher, current, artifact_sha256, payload_sha256, signature_key_id,
    trust_decision, source_kind, source_ref, installed_at_unix_ms, install_dir, manifest_json,
    tool_count, audit_report_json, grants_json, missing_secrets_json, review_pending
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (skill_id, version) DO UPDATE SET
    publisher = excluded.publisher, current = excluded.current,
    artifact_sha256 = excluded.artifact_sha256, payload_sha256 = excluded.payload_sha256,
    signature_key_id = excluded.signature_key_id, trust_decision = excluded.trust_decision,
    source_kind = excluded.source_kind, source_ref = excluded.source_ref,
    installed_at_unix_ms = excluded.installed_at_unix_ms, install_dir = excluded.install_dir,
    manifest_json = excluded.manifest_json, tool_count = excluded.tool_count,
    audit_report_json = excluded.audit_report_json, grants_json = excluded.grants_json,
    missing_secrets_json = excluded.missing_secrets_json, review_pending = excluded.review_pending`,
		r.SkillID, r.Version, r.Publisher, current, r.ArtifactSHA256, r.PayloadSHA256, r.SignatureKeyID,
		r.TrustDecision, string(r.SourceKind), r.SourceRef, installedAt.UnixMilli(), r.InstallDir, manifest,
		r.ToolCount, audit, grants, string(missingJSON), r.ReviewPending)
	if err != nil {
		return wrap("put skill", err)
	}
	return t.ensureCurrent(r.SkillID)
}

// SetCurrent makes version the current version of skill id (ErrNotFound
// when it is not installed). The holds (see HoldBack) of version and of
// every lower version end: they are superseded, not held back.
func (t *Tx) SetCurrent(id, version string) error {
	if err := t.check(); err != nil {
		return err
	}
	id, err := normalizeSkillID("skill_id", id)
	if err != nil {
		return err
	}
	if version, err = normalizeVersion("version", version); err != nil {
		return err
	}
	if err := t.clearCurrent(id, version); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(t.ctx, `UPDATE skills SET current = 1 WHERE skill_id = ? AND version = ?`, id, version)
	if err != nil {
		return wrap("set current", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return wrap("set current", err)
	} else if n == 0 {
		return notFound(id, version)
	}
	return t.endHoldsUpTo(id, version)
}

// endHoldsUpTo ends the hold of version of id and of every lower version:
// a version at or below the current one is superseded, not held back.
func (t *Tx) endHoldsUpTo(id, version string) error {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT version FROM skills WHERE skill_id = ? AND held_back_code IS NOT NULL`, id)
	if err != nil {
		return wrap("end holds", err)
	}
	var end []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return wrap("end holds", err)
		}
		if compareVersionStrings(v, version) <= 0 {
			end = append(end, v)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return wrap("end holds", err)
	}
	for _, v := range end {
		_, err := t.tx.ExecContext(t.ctx, `UPDATE skills SET held_back_code = NULL, held_back_reason = NULL,
    held_back_at_unix_ms = NULL WHERE skill_id = ? AND version = ?`, id, v)
		if err != nil {
			return wrap("end holds", err)
		}
	}
	return nil
}

// clearCurrent drops the current flag of every version of id but keep.
func (t *Tx) clearCurrent(id, keep string) error {
	_, err := t.tx.ExecContext(t.ctx,
		`UPDATE skills SET current = 0 WHERE skill_id = ? AND version <> ? AND current = 1`, id, keep)
	return wrap("clear current", err)
}

// ensureCurrent makes a version of id current when it has versions but
// none is current: the highest version that is not held back, else the
// highest. Holds at or below it end.
func (t *Tx) ensureCurrent(id string) error {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT version, current, held_back_code IS NOT NULL FROM skills WHERE skill_id = ?`, id)
	if err != nil {
		return wrap("fix current", err)
	}
	var (
		versions, free []string
		has            bool
	)
	for rows.Next() {
		var (
			v         string
			cur, held bool
		)
		if err := rows.Scan(&v, &cur, &held); err != nil {
			rows.Close()
			return wrap("fix current", err)
		}
		versions = append(versions, v)
		if !held {
			free = append(free, v)
		}
		has = has || cur
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return wrap("fix current", err)
	}
	if has || len(versions) == 0 {
		return nil
	}
	if len(free) > 0 {
		versions = free
	}
	highest := slices.MaxFunc(versions, compareVersionStrings)
	if _, err = t.tx.ExecContext(t.ctx, `UPDATE skills SET current = 1 WHERE skill_id = ? AND version = ?`, id, highest); err != nil {
		return wrap("fix current", err)
	}
	return t.endHoldsUpTo(id, highest)
}

// HoldBack records that version of skill id is installed but held back
// from becoming current, with the stable code and the message of why (an
// upgrade that failed its checks while an active version was current). An
// empty code ends the hold. The current version cannot be held back
// (ErrInvalidArgument); ErrNotFound when the version is not installed.
func (t *Tx) HoldBack(id, version, code, reason string) error {
	if err := t.check(); err != nil {
		return err
	}
	id, err := normalizeSkillID("skill_id", id)
	if err != nil {
		return err
	}
	if version, err = normalizeVersion("version", version); err != nil {
		return err
	}
	if reason, err = normalizeReason("reason", reason); err != nil {
		return err
	}
	var current bool
	err = t.tx.QueryRowContext(t.ctx, `SELECT current FROM skills WHERE skill_id = ? AND version = ?`, id, version).Scan(&current)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return notFound(id, version)
	case err != nil:
		return wrap("hold back", err)
	}
	code = strings.TrimSpace(code)
	if code == "" {
		_, err = t.tx.ExecContext(t.ctx, `UPDATE skills SET held_back_code = NULL, held_back_reason = NULL,
    held_back_at_unix_ms = NULL WHERE skill_id = ? AND version = ?`, id, version)
		return wrap("hold back", err)
	}
	if current {
		return invalid("version", "%s %s is current and cannot be held back", id, version)
	}
	_, err = t.tx.ExecContext(t.ctx, `UPDATE skills SET held_back_code = ?, held_back_reason = ?, held_back_at_unix_ms = ?
WHERE skill_id = ? AND version = ?`, code, reason, t.now().UnixMilli(), id, version)
	return wrap("hold back", err)
}

// ApproveReview clears the review hold of (id, version) (see
// Record.ReviewPending) and journals skill.review_approved with principal
// and reason, both required. A version that is not awaiting review is
// ErrNoReviewPending; an unknown one ErrNotFound. The status is not
// touched: the caller enables the version after its checks.
func (t *Tx) ApproveReview(id, version, reason, principal string) (int64, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return 0, err
	}
	if version == "" {
		return 0, invalid("version", "required")
	}
	if strings.TrimSpace(reason) == "" {
		return 0, invalid("reason", "required to approve a review")
	}
	var pending bool
	err = t.tx.QueryRowContext(t.ctx, `SELECT review_pending FROM skills WHERE skill_id = ? AND version = ?`, id, version).Scan(&pending)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, notFound(id, version)
	case err != nil:
		return 0, wrap("approve review", err)
	case !pending:
		return 0, fmt.Errorf("%w: %s %s", ErrNoReviewPending, id, version)
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE skills SET review_pending = 0 WHERE skill_id = ? AND version = ?`, id, version); err != nil {
		return 0, wrap("approve review", err)
	}
	return t.AppendEvent(Event{Kind: EventReviewApproved, SkillID: id, Version: version, Reason: reason, Principal: principal})
}

// AddPendingPin records a trust-on-first-use pin that the install of
// (p.SkillID, p.Version) commits with and that is saved in the trust store
// after the commit; DeletePendingPin drops it once saved. A pin recorded
// again for the same version replaces the first.
func (t *Tx) AddPendingPin(p PendingPin) error {
	if err := t.check(); err != nil {
		return err
	}
	id, version, err := normalizeKey(p.SkillID, p.Version)
	if err != nil {
		return err
	}
	if version == "" {
		return invalid("version", "must not be empty")
	}
	publisher, err := checkText("publisher", p.Publisher)
	if err != nil {
		return err
	}
	key := strings.ToLower(strings.TrimSpace(p.PublicKeyHex))
	if len(key) != 64 {
		return invalid("public_key_hex", "%d characters, want 64", len(key))
	}
	_, err = t.tx.ExecContext(t.ctx, `INSERT INTO pending_trust_pins (skill_id, version, publisher, public_key_hex, created_at_unix_ms)
VALUES (?, ?, ?, ?, ?) ON CONFLICT (skill_id, version) DO UPDATE SET
    publisher = excluded.publisher, public_key_hex = excluded.public_key_hex, created_at_unix_ms = excluded.created_at_unix_ms`,
		id, version, publisher, key, t.now().UnixMilli())
	return wrap("add pending pin", err)
}

// DeletePendingPin drops the pending pin of (id, version); none is not an
// error.
func (t *Tx) DeletePendingPin(id, version string) error {
	if err := t.check(); err != nil {
		return err
	}
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(t.ctx, `DELETE FROM pending_trust_pins WHERE skill_id = ? AND version = ?`, id, version)
	return wrap("delete pending pin", err)
}

// DeleteSkill removes version of skill id from the inventory, or every
// version when version is "", and returns the versions removed, lowest
// first (ErrNotFound when none was installed). When the current version
// goes, the highest remaining version that is not held back (else the
// highest) becomes current. Status rows stay,
// so a quarantined version is still quarantined if it is installed again;
// events stay too. Callers record the removal with AppendEvent
// (EventRemoved) in the same transaction.
func (t *Tx) DeleteSkill(id, version string) ([]string, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return nil, err
	}
	query, args := `DELETE FROM skills WHERE skill_id = ? RETURNING version`, []any{id}
	if version != "" {
		query, args = `DELETE FROM skills WHERE skill_id = ? AND version = ? RETURNING version`, []any{id, version}
	}
	rows, err := t.tx.QueryContext(t.ctx, query, args...)
	if err != nil {
		return nil, wrap("delete skill", err)
	}
	var removed []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, wrap("delete skill", err)
		}
		removed = append(removed, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap("delete skill", err)
	}
	if len(removed) == 0 {
		return nil, notFound(id, version)
	}
	slices.SortFunc(removed, compareVersionStrings)
	for _, v := range removed {
		if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM pending_trust_pins WHERE skill_id = ? AND version = ?`, id, v); err != nil {
			return nil, wrap("delete skill", err)
		}
	}
	return removed, t.ensureCurrent(id)
}

// SetStatus sets the status of one installed version (the current one when
// ch.Version is "") and writes exactly one event recording the change. The
// row is upserted: a new row gets created_at now, an existing row keeps its
// created_at and has every other column replaced. The skill id is trimmed
// and lower-cased and a blank reason is stored as NULL. It fails with
// ErrNotFound when the version is not installed, ErrInvalidStatus for an
// unknown status and ErrInvalidArgument for a missing principal.
func (t *Tx) SetStatus(ch StatusChange) error {
	if err := t.check(); err != nil {
		return err
	}
	id, version, err := normalizeKey(ch.SkillID, ch.Version)
	if err != nil {
		return err
	}
	if !ch.Status.Valid() {
		return fmt.Errorf("%w: %q (want active, quarantined, disabled or crashlooping)", ErrInvalidStatus, ch.Status)
	}
	reason, err := normalizeReason("reason", ch.Reason)
	if err != nil {
		return err
	}
	principal, err := checkText("operator_principal", ch.Principal)
	if err != nil {
		return err
	}
	kind := ch.Kind
	if kind == "" {
		kind = ch.Status.eventKind()
	}
	if err := checkEventKind(kind); err != nil {
		return err
	}
	details, err := checkJSON("details", ch.Details)
	if err != nil {
		return err
	}
	// The version must be installed; "" resolves to the current one.
	if version, err = resolveVersion(t.ctx, t.tx, id, version); err != nil {
		return err
	}

	now := t.now()
	detected := ch.DetectedAt
	if detected.IsZero() {
		detected = now
	}
	_, err = t.tx.ExecContext(t.ctx, `INSERT INTO skill_status (
    skill_id, version, status, reason, detected_at_ms, operator_principal, created_at_unix_ms, updated_at_unix_ms
) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (skill_id, version) DO UPDATE SET
    status = excluded.status, reason = excluded.reason, detected_at_ms = excluded.detected_at_ms,
    operator_principal = excluded.operator_principal, updated_at_unix_ms = excluded.updated_at_unix_ms`,
		id, version, string(ch.Status), nullIfEmpty(reason), detected.UnixMilli(), principal,
		now.UnixMilli(), now.UnixMilli())
	if err != nil {
		return wrap("set status", err)
	}
	_, err = t.insertEvent(Event{
		At: now, Kind: kind, SkillID: id, Version: version, Status: ch.Status,
		Reason: reason, Principal: principal,
	}, details)
	return err
}

// AppendEvent appends ev to the journal and returns its ID. ev.At defaults
// to now. ev.Status must be empty: only SetStatus writes events that carry
// a status, so StatusHistory lists real changes only.
func (t *Tx) AppendEvent(ev Event) (int64, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	if err := checkEventKind(ev.Kind); err != nil {
		return 0, err
	}
	var err error
	if ev.SkillID, ev.Version, err = normalizeKey(ev.SkillID, ev.Version); err != nil {
		return 0, err
	}
	if ev.Status != "" {
		return 0, invalid("status", "only SetStatus writes events with a status")
	}
	if ev.Reason, err = normalizeReason("reason", ev.Reason); err != nil {
		return 0, err
	}
	if ev.Principal, err = checkText("operator_principal", ev.Principal); err != nil {
		return 0, err
	}
	details, err := checkJSON("details", ev.Details)
	if err != nil {
		return 0, err
	}
	if ev.At.IsZero() {
		ev.At = t.now()
	}
	return t.insertEvent(ev, details)
}

// insertEvent writes a validated event; details is nil or a JSON string.
func (t *Tx) insertEvent(ev Event, details any) (int64, error) {
	var status any
	if ev.Status != "" {
		status = string(ev.Status)
	}
	res, err := t.tx.ExecContext(t.ctx, `INSERT INTO skill_events (
    at_unix_ms, kind, skill_id, version, status, reason, operator_principal, details_json
) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.At.UnixMilli(), string(ev.Kind), ev.SkillID, nullIfEmpty(ev.Version), status,
		nullIfEmpty(ev.Reason), ev.Principal, details)
	if err != nil {
		return 0, wrap("append event", err)
	}
	id, err := res.LastInsertId()
	return id, wrap("append event", err)
}

// Skill is DB.Skill inside the transaction: it sees the transaction's own
// writes.
func (t *Tx) Skill(id, version string) (Entry, error) {
	if err := t.check(); err != nil {
		return Entry{}, err
	}
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return Entry{}, err
	}
	return readSkill(t.ctx, t.tx, id, version)
}

// Skills is DB.Skills inside the transaction.
func (t *Tx) Skills(f Filter) ([]Entry, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	return readSkills(t.ctx, t.tx, f)
}

// Status is DB.Status inside the transaction. The installer uses it to see
// a status row left by a removed version before it writes a new one.
func (t *Tx) Status(id, version string) (StatusRecord, error) {
	if err := t.check(); err != nil {
		return StatusRecord{}, err
	}
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return StatusRecord{}, err
	}
	return readStatus(t.ctx, t.tx, id, version)
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
