package inventory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

const entrySelect = `SELECT
    s.skill_id, s.version, s.publisher, s.current, s.artifact_sha256, s.payload_sha256,
    s.signature_key_id, s.trust_decision, s.source_kind, s.source_ref, s.installed_at_unix_ms,
    s.install_dir, s.manifest_json, s.tool_count, s.audit_report_json, s.grants_json,
    s.missing_secrets_json, s.held_back_code, s.held_back_reason, s.held_back_at_unix_ms, s.review_pending,
    st.status, st.reason, st.detected_at_ms, st.operator_principal, st.created_at_unix_ms,
    st.updated_at_unix_ms
FROM skills s
LEFT JOIN skill_status st ON st.skill_id = s.skill_id AND st.version = s.version`

type scanner interface{ Scan(dest ...any) error }

func scanEntry(sc scanner) (Entry, error) {
	var (
		e                             Entry
		current                       bool
		installedAt                   int64
		manifest                      string
		audit, grants                 sql.NullString
		missing                       string
		heldCode, heldReason          sql.NullString
		heldAt                        sql.NullInt64
		status, reason, principal     sql.NullString
		detected, createdAt, updateAt sql.NullInt64
	)
	err := sc.Scan(&e.SkillID, &e.Version, &e.Publisher, &current, &e.ArtifactSHA256, &e.PayloadSHA256,
		&e.SignatureKeyID, &e.TrustDecision, &e.SourceKind, &e.SourceRef, &installedAt,
		&e.InstallDir, &manifest, &e.ToolCount, &audit, &grants, &missing, &heldCode, &heldReason, &heldAt, &e.ReviewPending,
		&status, &reason, &detected, &principal, &createdAt, &updateAt)
	if err != nil {
		return Entry{}, err
	}
	e.Current = current
	e.InstalledAt = fromMillis(installedAt)
	e.Manifest = json.RawMessage(manifest)
	if audit.Valid {
		e.AuditReport = json.RawMessage(audit.String)
	}
	if grants.Valid {
		e.Grants = json.RawMessage(grants.String)
	}
	if err := json.Unmarshal([]byte(missing), &e.MissingSecrets); err != nil {
		return Entry{}, fmt.Errorf("missing_secrets_json of %s %s: %w", e.SkillID, e.Version, err)
	}
	if heldCode.Valid {
		e.HeldBack = &HeldBack{Code: heldCode.String, Reason: heldReason.String, At: fromMillis(heldAt.Int64)}
	}
	if status.Valid {
		e.Status = &StatusRecord{
			SkillID:    e.SkillID,
			Version:    e.Version,
			Status:     Status(status.String),
			Reason:     reason.String,
			DetectedAt: fromMillis(detected.Int64),
			Principal:  principal.String,
			CreatedAt:  fromMillis(createdAt.Int64),
			UpdatedAt:  fromMillis(updateAt.Int64),
		}
	}
	return e, nil
}

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// readSkill returns the entry of (id, version), or of the current version
// when version is "". id and version are already normalized.
func readSkill(ctx context.Context, q querier, id, version string) (Entry, error) {
	var row *sql.Row
	if version == "" {
		row = q.QueryRowContext(ctx, entrySelect+` WHERE s.skill_id = ? AND s.current = 1`, id)
	} else {
		row = q.QueryRowContext(ctx, entrySelect+` WHERE s.skill_id = ? AND s.version = ?`, id, version)
	}
	e, err := scanEntry(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, notFound(id, version)
	}
	if err != nil {
		return Entry{}, wrap("read skill", err)
	}
	return e, nil
}

func notFound(id, version string) error {
	if version == "" {
		return fmt.Errorf("%w: %s (no installed version)", ErrNotFound, id)
	}
	return fmt.Errorf("%w: %s %s", ErrNotFound, id, version)
}

// readSkills lists entries matching f, ordered by skill id, then by version
// (numerically, lowest first).
func readSkills(ctx context.Context, q querier, f Filter) ([]Entry, error) {
	var (
		where []string
		args  []any
	)
	if f.SkillID != "" {
		id, err := normalizeSkillID("skill_id", f.SkillID)
		if err != nil {
			return nil, err
		}
		where, args = append(where, "s.skill_id = ?"), append(args, id)
	}
	if f.Publisher != "" {
		where, args = append(where, "s.publisher = ?"), append(args, strings.TrimSpace(f.Publisher))
	}
	if f.CurrentOnly {
		where = append(where, "s.current = 1")
	}
	if f.Status != "" {
		if !f.Status.Valid() {
			return nil, fmt.Errorf("%w: filter status %q", ErrInvalidStatus, f.Status)
		}
		where, args = append(where, "st.status = ?"), append(args, string(f.Status))
	}
	query := entrySelect
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, wrap("list skills", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, wrap("list skills", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list skills", err)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := strings.Compare(a.SkillID, b.SkillID); c != 0 {
			return c
		}
		return compareVersionStrings(a.Version, b.Version)
	})
	return out, nil
}

const statusColumns = `st.skill_id, st.version, st.status, st.reason, st.detected_at_ms,
    st.operator_principal, st.created_at_unix_ms, st.updated_at_unix_ms`

func scanStatus(sc scanner) (StatusRecord, error) {
	var (
		r                            StatusRecord
		status                       string
		reason                       sql.NullString
		detected, created, updatedAt int64
	)
	if err := sc.Scan(&r.SkillID, &r.Version, &status, &reason, &detected, &r.Principal, &created, &updatedAt); err != nil {
		return StatusRecord{}, err
	}
	r.Status = Status(status)
	r.Reason = reason.String
	r.DetectedAt, r.CreatedAt, r.UpdatedAt = fromMillis(detected), fromMillis(created), fromMillis(updatedAt)
	return r, nil
}

// readStatus returns the status row of (id, version); with version "" it
// is the row of the current version, read in the same statement that finds
// the current version.
func readStatus(ctx context.Context, q querier, id, version string) (StatusRecord, error) {
	var (
		r   StatusRecord
		err error
	)
	if version == "" {
		var (
			cur                          string
			rowID, rowVersion, status    sql.NullString
			reason, principal            sql.NullString
			detected, created, updatedAt sql.NullInt64
		)
		err = q.QueryRowContext(ctx, `SELECT s.version, `+statusColumns+`
FROM skills s LEFT JOIN skill_status st ON st.skill_id = s.skill_id AND st.version = s.version
WHERE s.skill_id = ? AND s.current = 1`, id).Scan(&cur,
			&rowID, &rowVersion, &status, &reason, &detected, &principal, &created, &updatedAt)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return StatusRecord{}, notFound(id, "")
		case err != nil:
			return StatusRecord{}, wrap("read status", err)
		case !status.Valid:
			return StatusRecord{}, fmt.Errorf("%w: %s %s", ErrNoStatus, id, cur)
		}
		return StatusRecord{
			SkillID: rowID.String, Version: rowVersion.String, Status: Status(status.String),
			Reason: reason.String, DetectedAt: fromMillis(detected.Int64), Principal: principal.String,
			CreatedAt: fromMillis(created.Int64), UpdatedAt: fromMillis(updatedAt.Int64),
		}, nil
	}
	r, err = scanStatus(q.QueryRowContext(ctx,
		`SELECT `+statusColumns+` FROM skill_status st WHERE st.skill_id = ? AND st.version = ?`, id, version))
	if errors.Is(err, sql.ErrNoRows) {
		return StatusRecord{}, fmt.Errorf("%w: %s %s", ErrNoStatus, id, version)
	}
	if err != nil {
		return StatusRecord{}, wrap("read status", err)
	}
	return r, nil
}

// resolveVersion returns version when (id, version) is installed, or the
// current version of id when version is "" (ErrNotFound otherwise).
func resolveVersion(ctx context.Context, q querier, id, version string) (string, error) {
	var (
		v   string
		err error
	)
	if version == "" {
		err = q.QueryRowContext(ctx, `SELECT version FROM skills WHERE skill_id = ? AND current = 1`, id).Scan(&v)
	} else {
		err = q.QueryRowContext(ctx, `SELECT version FROM skills WHERE skill_id = ? AND version = ?`, id, version).Scan(&v)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return "", notFound(id, version)
	}
	if err != nil {
		return "", wrap("resolve version", err)
	}
	return v, nil
}

const eventColumns = `id, at_unix_ms, kind, skill_id, version, status, reason, operator_principal, details_json`

func readEvents(ctx context.Context, q querier, query string, args ...any) ([]Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+` FROM skill_events `+query, args...)
	if err != nil {
		return nil, wrap("read events", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			ev                              Event
			at                              int64
			version, status, reason, detail sql.NullString
		)
		if err := rows.Scan(&ev.ID, &at, &ev.Kind, &ev.SkillID, &version, &status, &reason, &ev.Principal, &detail); err != nil {
			return nil, wrap("read events", err)
		}
		ev.At = fromMillis(at)
		ev.Version, ev.Status, ev.Reason = version.String, Status(status.String), reason.String
		if detail.Valid {
			ev.Details = json.RawMessage(detail.String)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("read events", err)
	}
	return out, nil
}

// Skill returns the installed version of skill id, or its current version
// when version is "", together with the status row of that same version.
// This is the read the execution gate makes: the status it sees is the
// status of the version that will run. It fails with ErrNotFound when no
// such version is installed.
//
// Entries are served from memory while no writer has committed since they
// were read (see MaxSkillCacheAge): a status change made through DB.Update
// by this or any other process is seen by the next call.
func (d *DB) Skill(ctx context.Context, id, version string) (Entry, error) {
	return d.skill(ctx, id, version, Entry.clone)
}

// SkillHead is Skill without the entry's documents: Manifest, AuditReport
// and Grants are nil. It is what a call's checks need (status, install
// dir, artifact digest), served from the cache without copying the
// documents, which a call would copy on every call otherwise.
func (d *DB) SkillHead(ctx context.Context, id, version string) (Entry, error) {
	return d.skill(ctx, id, version, Entry.head)
}

// skill is Skill and SkillHead: a cached entry comes back as view makes
// its copy.
func (d *DB) skill(ctx context.Context, id, version string, view func(Entry) Entry) (Entry, error) {
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return Entry{}, err
	}
	if d.closed.Load() {
		return Entry{}, errClosed
	}
	key := skillKey{id, version}
	gen, cacheable := uint64(0), false
	if d.wlock != nil { // nil when opened read-only: no change counter to trust
		gen, cacheable = d.wlock.generation()
	}
	if cacheable {
		if e, ok := d.cache.get(gen, key, d.now(), view); ok {
			return e, nil
		}
	}
	at := d.now()
	e, err := readSkill(ctx, d.sql, id, version)
	if err == nil && cacheable {
		d.cache.put(gen, key, e, at)
	}
	if err != nil {
		return e, err
	}
	return view(e), nil
}

// Skills lists the installed versions that match f, ordered by skill id and
// then by version, lowest first.
func (d *DB) Skills(ctx context.Context, f Filter) ([]Entry, error) {
	return readSkills(ctx, d.sql, f)
}

// Status returns the status row of skill id at version. With version "" it
// is the row of the current version (ErrNotFound when none is installed).
// A version without a row gives ErrNoStatus, which callers must treat as
// "may not run". With an explicit version the row is returned even when
// that version is no longer installed: DeleteSkill keeps status rows, so a
// quarantine outlives a remove and reinstall.
func (d *DB) Status(ctx context.Context, id, version string) (StatusRecord, error) {
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return StatusRecord{}, err
	}
	return readStatus(ctx, d.sql, id, version)
}

// Events returns a page of the journal, oldest first: the events with an ID
// above f.AfterID, of f.SkillID when set. Following the journal is a loop
// that passes the last ID seen as the next AfterID.
func (d *DB) Events(ctx context.Context, f EventFilter) ([]Event, error) {
	limit := f.Limit
	switch {
	case limit < 0:
		return nil, invalid("limit", "%d is negative", limit)
	case limit == 0:
		limit = DefaultEventLimit
	case limit > MaxEventLimit:
		limit = MaxEventLimit
	}
	if f.SkillID == "" {
		return readEvents(ctx, d.sql, `WHERE id > ? ORDER BY id LIMIT ?`, f.AfterID, limit)
	}
	id, err := normalizeSkillID("skill_id", f.SkillID)
	if err != nil {
		return nil, err
	}
	return readEvents(ctx, d.sql, `WHERE skill_id = ? AND id > ? ORDER BY id LIMIT ?`, id, f.AfterID, limit)
}

// StatusHistory returns every status change of skill id (all versions),
// oldest first: the events that Tx.SetStatus wrote.
func (d *DB) StatusHistory(ctx context.Context, id string) ([]Event, error) {
	id, err := normalizeSkillID("skill_id", id)
	if err != nil {
		return nil, err
	}
	return readEvents(ctx, d.sql, `WHERE skill_id = ? AND status IS NOT NULL ORDER BY id`, id)
}

// normalizeKey normalizes a skill id and an optional version.
func normalizeKey(id, version string) (string, string, error) {
	id, err := normalizeSkillID("skill_id", id)
	if err != nil {
		return "", "", err
	}
	version, err = normalizeOptionalVersion("version", version)
	if err != nil {
		return "", "", err
	}
	return id, version, nil
}

// LastEventID returns the ID of the newest journal event (0 when the journal
// is empty): where a follower that wants only new events starts.
func (d *DB) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := d.sql.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM skill_events`).Scan(&id); err != nil {
		return 0, wrap("last event id", err)
	}
	return id, nil
}

// PendingPins lists the trust-on-first-use pins that committed installs
// recorded and that are not known to be saved in the trust store yet
// (Tx.AddPendingPin), oldest first.
func (d *DB) PendingPins(ctx context.Context) ([]PendingPin, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT skill_id, version, publisher, public_key_hex, created_at_unix_ms
FROM pending_trust_pins ORDER BY created_at_unix_ms, skill_id, version`)
	if err != nil {
		return nil, wrap("list pending pins", err)
	}
	defer rows.Close()
	var out []PendingPin
	for rows.Next() {
		var (
			p  PendingPin
			at int64
		)
		if err := rows.Scan(&p.SkillID, &p.Version, &p.Publisher, &p.PublicKeyHex, &at); err != nil {
			return nil, wrap("list pending pins", err)
		}
		p.CreatedAt = fromMillis(at)
		out = append(out, p)
	}
	return out, wrap("list pending pins", rows.Err())
}
