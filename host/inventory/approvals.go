package inventory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
)

// ApprovalState is where an approval is in its life: pending until an
// operator decides it (approved, denied) or its time runs out (expired);
// an approved one becomes used when the call it approved runs.
type ApprovalState string

// The states of an approval.
const (
	ApprovalPending  ApprovalState = "pending"
	ApprovalApproved ApprovalState = "approved"
	ApprovalDenied   ApprovalState = "denied"
	ApprovalExpired  ApprovalState = "expired"
	ApprovalUsed     ApprovalState = "used"
)

// Valid reports whether s is one of the states.
func (s ApprovalState) Valid() bool {
	switch s {
	case ApprovalPending, ApprovalApproved, ApprovalDenied, ApprovalExpired, ApprovalUsed:
		return true
	}
	return false
}

// Journal kinds of approvals (details: approval_id, tool_id,
// input_sha256, and reasons on a request).
const (
	EventApprovalRequested EventKind = "skill.approval_requested"
	EventApprovalApproved  EventKind = "skill.approval_approved"
	EventApprovalDenied    EventKind = "skill.approval_denied"
	EventApprovalExpired   EventKind = "skill.approval_expired"
	EventApprovalUsed      EventKind = "skill.approval_used"
)

// PrincipalApprovals is the principal of the expiry of an approval.
const PrincipalApprovals = "system:approvals"

// ErrApprovalNotFound: no approval has the id (never made, or pruned).
var ErrApprovalNotFound = errcode.New("approval_not_found", "no such approval")

// ErrApprovalState: an approval is not in the state a change needs (a
// decision on one that is no longer pending, a use of one that is not
// approved). The Approval returned with it says which state it is in.
var ErrApprovalState = errcode.New("approval_state", "approval is not in the state the change needs")

// ApprovalReason is one reason a call needs approval: Kind is "manifest"
// (Detail requires_approval or default_sensitive), "profile" (Detail the
// capability class) or "hook" (Detail "<hook id>: <reason>").
type ApprovalReason struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// Approval is one row of the approvals table.
type Approval struct {
	ID      string `json:"id"`
	SkillID string `json:"skill_id"`
	Version string `json:"version"`
	ToolID  string `json:"tool_id"`
	// Input is the canonical input the approval is for; InputSHA256 its
	// sha256, which a call using the approval must match.
	Input       json.RawMessage  `json:"input"`
	InputSHA256 string           `json:"input_sha256"`
	Reasons     []ApprovalReason `json:"reasons"`
	RequestedBy string           `json:"requested_by"`
	RequestedAt time.Time        `json:"requested_at"`
	ExpiresAt   time.Time        `json:"expires_at"`
	State       ApprovalState    `json:"state"`
	DecidedBy   string           `json:"decided_by,omitempty"`
	DecidedAt   time.Time        `json:"decided_at,omitzero"`
	// Reason is the decider's reason (or why it expired).
	Reason string    `json:"reason,omitempty"`
	UsedBy string    `json:"used_by,omitempty"`
	UsedAt time.Time `json:"used_at,omitzero"`
}

// ApprovalFilter selects approvals; the zero value selects all, newest
// first.
type ApprovalFilter struct {
	State   ApprovalState
	SkillID string
	// Limit caps the rows returned (0: no cap).
	Limit int
}

const approvalColumns = `id, skill_id, version, tool_id, input_json, input_sha256, reasons_json, requested_by,
requested_at_unix_ms, expires_at_unix_ms, state, decided_by, decided_at_unix_ms, reason, used_by, used_at_unix_ms`

func scanApproval(sc scanner) (Approval, error) {
	var (
		a                         Approval
		input, reasons            string
		req, exp                  int64
		decidedBy, reason, usedBy sql.NullString
		decidedAt, usedAt         sql.NullInt64
	)
	if err := sc.Scan(&a.ID, &a.SkillID, &a.Version, &a.ToolID, &input, &a.InputSHA256, &reasons, &a.RequestedBy,
		&req, &exp, &a.State, &decidedBy, &decidedAt, &reason, &usedBy, &usedAt); err != nil {
		return Approval{}, err
	}
	a.Input = json.RawMessage(input)
	if err := json.Unmarshal([]byte(reasons), &a.Reasons); err != nil {
		return Approval{}, fmt.Errorf("inventory: approval %s: reasons: %w", a.ID, err)
	}
	a.RequestedAt, a.ExpiresAt = fromMillis(req), fromMillis(exp)
	a.DecidedBy, a.Reason, a.UsedBy = decidedBy.String, reason.String, usedBy.String
	if decidedAt.Valid {
		a.DecidedAt = fromMillis(decidedAt.Int64)
	}
	if usedAt.Valid {
		a.UsedAt = fromMillis(usedAt.Int64)
	}
	return a, nil
}

func readApproval(ctx context.Context, q querier, id string) (Approval, error) {
	a, err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, fmt.Errorf("%w: %q", ErrApprovalNotFound, id)
	}
	return a, wrap("read approval", err)
}

func readApprovals(ctx context.Context, q querier, f ApprovalFilter) ([]Approval, error) {
	query := `SELECT ` + approvalColumns + ` FROM approvals WHERE 1 = 1`
	var args []any
	if f.State != "" {
		if !f.State.Valid() {
			return nil, invalid("state", "%q is not pending, approved, denied, expired or used", f.State)
		}
		query += ` AND state = ?`
		args = append(args, string(f.State))
	}
	if f.SkillID != "" {
		id, err := normalizeSkillID("skill_id", f.SkillID)
		if err != nil {
			return nil, err
		}
		query += ` AND skill_id = ?`
		args = append(args, id)
	}
	query += ` ORDER BY requested_at_unix_ms DESC, id`
	if f.Limit > 0 {
		query += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, wrap("read approvals", err)
	}
	defer rows.Close()
	out := []Approval{}
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, wrap("read approvals", err)
		}
		out = append(out, a)
	}
	return out, wrap("read approvals", rows.Err())
}

// Approval returns the approval with id.
func (d *DB) Approval(ctx context.Context, id string) (Approval, error) {
	return readApproval(ctx, d.sql, id)
}

// Approvals returns the approvals f selects, newest first. The state is
// the stored one: a pending approval past its expiry reads pending until
// Tx.ExpireApprovals marks it.
func (d *DB) Approvals(ctx context.Context, f ApprovalFilter) ([]Approval, error) {
	return readApprovals(ctx, d.sql, f)
}

// Approval is DB.Approval inside the transaction.
func (t *Tx) Approval(id string) (Approval, error) {
	if err := t.check(); err != nil {
		return Approval{}, err
	}
	return readApproval(t.ctx, t.tx, id)
}

// PutApproval stores a new pending approval and journals
// skill.approval_requested with a.RequestedBy as the principal.
func (t *Tx) PutApproval(a Approval) error {
	if err := t.check(); err != nil {
		return err
	}
	var err error
	if a.SkillID, a.Version, err = normalizeKey(a.SkillID, a.Version); err != nil {
		return err
	}
	if a.Version == "" {
		return invalid("version", "required")
	}
	if a.ID, err = checkText("id", a.ID); err != nil {
		return err
	}
	if a.ToolID, err = checkText("tool_id", a.ToolID); err != nil {
		return err
	}
	if a.RequestedBy, err = checkText("requested_by", a.RequestedBy); err != nil {
		return err
	}
	if len(a.InputSHA256) != 64 {
		return invalid("input_sha256", "must be 64 hex digits")
	}
	if len(a.Input) > MaxJSONBytes || !json.Valid(a.Input) {
		return invalid("input", "not valid JSON of at most %d bytes", MaxJSONBytes)
	}
	if a.Reasons == nil {
		a.Reasons = []ApprovalReason{}
	}
	reasons, err := json.Marshal(a.Reasons)
	if err != nil {
		return invalid("reasons", "%v", err)
	}
	if !a.ExpiresAt.After(a.RequestedAt) {
		return invalid("expires_at", "must be after requested_at")
	}
	_, err = t.tx.ExecContext(t.ctx, `INSERT INTO approvals (
    id, skill_id, version, tool_id, input_json, input_sha256, reasons_json, requested_by,
    requested_at_unix_ms, expires_at_unix_ms, state
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
		a.ID, a.SkillID, a.Version, a.ToolID, string(a.Input), a.InputSHA256, string(reasons), a.RequestedBy,
		a.RequestedAt.UnixMilli(), a.ExpiresAt.UnixMilli())
	if err != nil {
		return wrap("put approval", err)
	}
	_, err = t.journalApproval(EventApprovalRequested, a, a.RequestedBy, "", map[string]any{
		"reasons": a.Reasons, "expires_at": a.ExpiresAt.UTC().Format(time.RFC3339Nano),
	})
	return err
}

// FindPending returns a pending, unexpired approval for the same call
// (skill version, tool, input hash) asked by the same principal: a caller
// that asks again gets the approval it already waits for.
func (t *Tx) FindPending(a Approval, now time.Time) (Approval, bool, error) {
	if err := t.check(); err != nil {
		return Approval{}, false, err
	}
	got, err := scanApproval(t.tx.QueryRowContext(t.ctx, `SELECT `+approvalColumns+` FROM approvals
WHERE state = 'pending' AND skill_id = ? AND version = ? AND tool_id = ? AND input_sha256 = ? AND requested_by = ? AND expires_at_unix_ms > ?
ORDER BY requested_at_unix_ms DESC LIMIT 1`, a.SkillID, a.Version, a.ToolID, a.InputSHA256, a.RequestedBy, now.UnixMilli()))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, false, nil
	}
	if err != nil {
		return Approval{}, false, wrap("find approval", err)
	}
	return got, true, nil
}

// CountPending returns the number of pending approvals.
func (t *Tx) CountPending() (int, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	var n int
	err := t.tx.QueryRowContext(t.ctx, `SELECT count(*) FROM approvals WHERE state = 'pending'`).Scan(&n)
	return n, wrap("count approvals", err)
}

// ExpireApprovals marks expired every pending approval whose expiry is
// at or before now, and every approved one not used by then, journaling
// skill.approval_expired for each (principal PrincipalApprovals). It
// returns them as they are now.
func (t *Tx) ExpireApprovals(now time.Time) ([]Approval, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	rows, err := t.tx.QueryContext(t.ctx, `SELECT `+approvalColumns+` FROM approvals
WHERE state IN ('pending', 'approved') AND expires_at_unix_ms <= ? ORDER BY requested_at_unix_ms`, now.UnixMilli())
	if err != nil {
		return nil, wrap("expire approvals", err)
	}
	var due []Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			rows.Close()
			return nil, wrap("expire approvals", err)
		}
		due = append(due, a)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, wrap("expire approvals", err)
	}
	for i, a := range due {
		why := "not decided before it expired"
		if a.State == ApprovalApproved {
			why = "approved but not used before it expired"
		}
		if _, err := t.tx.ExecContext(t.ctx, `UPDATE approvals SET state = 'expired', reason = coalesce(reason, ?) WHERE id = ?`, why, a.ID); err != nil {
			return nil, wrap("expire approvals", err)
		}
		if _, err := t.journalApproval(EventApprovalExpired, a, PrincipalApprovals, why, nil); err != nil {
			return nil, err
		}
		due[i].State = ApprovalExpired
		if due[i].Reason == "" {
			due[i].Reason = why
		}
	}
	return due, nil
}

// PruneApprovals deletes the approvals that are no longer pending or
// approved and were requested before before (the journal keeps their
// history). It returns how many it deleted.
func (t *Tx) PruneApprovals(before time.Time) (int64, error) {
	if err := t.check(); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(t.ctx, `DELETE FROM approvals WHERE state IN ('denied', 'expired', 'used') AND requested_at_unix_ms < ?`, before.UnixMilli())
	if err != nil {
		return 0, wrap("prune approvals", err)
	}
	n, err := res.RowsAffected()
	return n, wrap("prune approvals", err)
}

// DecideApproval approves (approve) or denies a pending approval with
// principal and reason, journaling skill.approval_approved or
// skill.approval_denied. One that is not pending fails with
// ErrApprovalState, returned with the approval as it is.
func (t *Tx) DecideApproval(id string, approve bool, reason, principal string, now time.Time) (Approval, error) {
	if err := t.check(); err != nil {
		return Approval{}, err
	}
	var err error
	if principal, err = checkText("decided_by", principal); err != nil {
		return Approval{}, err
	}
	if reason, err = normalizeReason("reason", reason); err != nil {
		return Approval{}, err
	}
	a, err := readApproval(t.ctx, t.tx, id)
	if err != nil {
		return Approval{}, err
	}
	if a.State != ApprovalPending {
		return a, fmt.Errorf("%w: approval %s is %s", ErrApprovalState, id, a.State)
	}
	state, kind := ApprovalDenied, EventApprovalDenied
	if approve {
		state, kind = ApprovalApproved, EventApprovalApproved
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE approvals SET state = ?, decided_by = ?, decided_at_unix_ms = ?, reason = ? WHERE id = ? AND state = 'pending'`,
		string(state), principal, now.UnixMilli(), nullIfEmpty(reason), id); err != nil {
		return Approval{}, wrap("decide approval", err)
	}
	a.State, a.DecidedBy, a.DecidedAt, a.Reason = state, principal, now.UTC().Truncate(time.Millisecond), reason
	_, err = t.journalApproval(kind, a, principal, reason, nil)
	return a, err
}

// UseApproval marks an approved approval used by principal (the call it
// approved runs now) and journals skill.approval_used. One that is not
// approved fails with ErrApprovalState, returned with the approval.
func (t *Tx) UseApproval(id, principal string, now time.Time) (Approval, error) {
	if err := t.check(); err != nil {
		return Approval{}, err
	}
	var err error
	if principal, err = checkText("used_by", principal); err != nil {
		return Approval{}, err
	}
	a, err := readApproval(t.ctx, t.tx, id)
	if err != nil {
		return Approval{}, err
	}
	if a.State != ApprovalApproved {
		return a, fmt.Errorf("%w: approval %s is %s", ErrApprovalState, id, a.State)
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE approvals SET state = 'used', used_by = ?, used_at_unix_ms = ? WHERE id = ? AND state = 'approved'`,
		principal, now.UnixMilli(), id); err != nil {
		return Approval{}, wrap("use approval", err)
	}
	a.State, a.UsedBy, a.UsedAt = ApprovalUsed, principal, now.UTC().Truncate(time.Millisecond)
	_, err = t.journalApproval(EventApprovalUsed, a, principal, "", nil)
	return a, err
}

// journalApproval appends an approval event of a's skill version.
func (t *Tx) journalApproval(kind EventKind, a Approval, principal, reason string, extra map[string]any) (int64, error) {
	details := map[string]any{"approval_id": a.ID, "tool_id": a.ToolID, "input_sha256": a.InputSHA256}
	for k, v := range extra {
		details[k] = v
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return 0, fmt.Errorf("inventory: approval event: %w", err)
	}
	if len(reason) > MaxReasonBytes {
		reason = strings.ToValidUTF8(reason[:MaxReasonBytes], "")
	}
	return t.AppendEvent(Event{Kind: kind, SkillID: a.SkillID, Version: a.Version, Reason: reason, Principal: principal, Details: raw})
}

// ApprovalsDue reports whether Tx.ExpireApprovals at now or
// Tx.PruneApprovals before pruneBefore would change anything: a reader
// sweeps (a write) only then.
func (d *DB) ApprovalsDue(ctx context.Context, now, pruneBefore time.Time) (bool, error) {
	var due bool
	err := d.sql.QueryRowContext(ctx, `SELECT EXISTS (
    SELECT 1 FROM approvals WHERE state IN ('pending', 'approved') AND expires_at_unix_ms <= ?
    UNION ALL
    SELECT 1 FROM approvals WHERE state IN ('denied', 'expired', 'used') AND requested_at_unix_ms < ?
)`, now.UnixMilli(), pruneBefore.UnixMilli()).Scan(&due)
	return due, wrap("approvals due", err)
}
