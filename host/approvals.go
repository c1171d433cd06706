package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
)

// Approvals. A call of a tool that needs a human's approval is not run:
// it becomes a pending approval (kept in the inventory, journaled with the
// principal who asked) and the call returns ErrApprovalPending with the
// approval (see PendingError). An operator approves or denies it
// (DecideApproval) before it expires (Config.ApprovalTTL); the caller then
// calls again with CallRequest.ApprovalID and the same input, and the call
// runs once. A call needs approval when its tool's manifest sets
// risk.requires_approval or risk.default_sensitive, when the operator
// profile's capabilities.require_approval names a capability class the
// skill is granted, or when a run hook asks for it. Calls made by hooks
// (a hook binding's tool) never need approval.

// Approval shapes, shared with the inventory that stores them.
type (
	// Approval is one approval (inventory.Approval).
	Approval = inventory.Approval
	// ApprovalReason is one reason a call needs approval
	// (inventory.ApprovalReason): kind manifest, profile or hook.
	ApprovalReason = inventory.ApprovalReason
	// ApprovalState is pending, approved, denied, expired or used.
	ApprovalState = inventory.ApprovalState
)

// The states of an approval.
const (
	ApprovalPending  = inventory.ApprovalPending
	ApprovalApproved = inventory.ApprovalApproved
	ApprovalDenied   = inventory.ApprovalDenied
	ApprovalExpired  = inventory.ApprovalExpired
	ApprovalUsed     = inventory.ApprovalUsed
)

// Kinds of ApprovalReason.
const (
	ReasonManifest = "manifest"
	ReasonProfile  = "profile"
	ReasonHook     = "hook"
)

// Bounds of approvals.
const (
	// DefaultApprovalTTL is how long an approval waits for its decision,
	// and then for its use, when Config.ApprovalTTL is zero.
	DefaultApprovalTTL = 15 * time.Minute
	// MinApprovalTTL and MaxApprovalTTL bound Config.ApprovalTTL.
	MinApprovalTTL = 10 * time.Second
	MaxApprovalTTL = 7 * 24 * time.Hour
	// MaxPendingApprovals caps the approvals pending at once; a call that
	// would add one more fails with ErrTooManyApprovals.
	MaxPendingApprovals = 1000
	// ApprovalRetention is how long a decided, expired or used approval is
	// kept before it is pruned (the journal keeps its history).
	ApprovalRetention = 7 * 24 * time.Hour
)

// Errors of approvals.
var (
	// ErrApprovalPending is a call that needs approval: it did not run. The
	// error is a *PendingError naming the approval.
	ErrApprovalPending = errcode.New("approval_pending", "the call needs approval and waits for it")
	// ErrApprovalDenied is a call with an approval an operator denied.
	ErrApprovalDenied = errcode.New("approval_denied", "the approval was denied")
	// ErrApprovalExpired is an approval used or decided after it expired.
	ErrApprovalExpired = errcode.New("approval_expired", "the approval expired")
	// ErrApprovalDecided is a decision on an approval decided already.
	ErrApprovalDecided = errcode.New("approval_already_decided", "the approval was decided already")
	// ErrApprovalUsed is a second call with an approval (one use each).
	ErrApprovalUsed = errcode.New("approval_used", "the approval was used already")
	// ErrApprovalInputMismatch is a call with an approval whose input
	// differs from the input approved (sha256 of the canonical JSON).
	ErrApprovalInputMismatch = errcode.New("approval_input_mismatch", "the input differs from the input approved")
	// ErrApprovalMismatch is a call with an approval of another skill,
	// version or tool (the version changed since the approval, say).
	ErrApprovalMismatch = errcode.New("approval_mismatch", "the approval is for another skill, version or tool")
	// ErrTooManyApprovals is a call that would make more than
	// MaxPendingApprovals approvals pending.
	ErrTooManyApprovals = errcode.New("approvals_full", "too many approvals are pending")
	// ErrApprovalNotFound is an approval id the host does not know.
	ErrApprovalNotFound = inventory.ErrApprovalNotFound
)

// PendingApproval is what a caller needs of a pending approval: its id
// (to poll it, and to call again once approved), when it expires and why
// it is needed.
type PendingApproval struct {
	ID          string           `json:"id"`
	SkillID     string           `json:"skill_id"`
	Version     string           `json:"version"`
	ToolID      string           `json:"tool_id"`
	InputSHA256 string           `json:"input_sha256"`
	Reasons     []ApprovalReason `json:"reasons"`
	ExpiresAt   time.Time        `json:"expires_at"`
}

// PendingOf is the PendingApproval of a.
func PendingOf(a Approval) *PendingApproval {
	return &PendingApproval{ID: a.ID, SkillID: a.SkillID, Version: a.Version, ToolID: a.ToolID, InputSHA256: a.InputSHA256, Reasons: a.Reasons, ExpiresAt: a.ExpiresAt}
}

// PendingError is the error of a call that waits for approval: errors.Is
// it ErrApprovalPending. The call's result carries the same approval in
// CallResult.Pending.
type PendingError struct {
	Approval *PendingApproval
}

// Error says which approval the call waits for.
func (e *PendingError) Error() string {
	return fmt.Sprintf("%s: approval %s of %s %s tool %s (expires %s; %s)", ErrApprovalPending.Error(), e.Approval.ID,
		e.Approval.SkillID, e.Approval.Version, e.Approval.ToolID, e.Approval.ExpiresAt.UTC().Format(time.RFC3339), ReasonsText(e.Approval.Reasons))
}

// Unwrap returns ErrApprovalPending.
func (e *PendingError) Unwrap() error { return ErrApprovalPending }

// PendingApprovalOf returns the approval a call waits for, nil when err
// is not a pending call.
func PendingApprovalOf(err error) *PendingApproval {
	var pe *PendingError
	if errors.As(err, &pe) {
		return pe.Approval
	}
	return nil
}

// ReasonsText is reasons as one line: "manifest: requires_approval,
// profile: http".
func ReasonsText(reasons []ApprovalReason) string {
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = r.Kind + ": " + r.Detail
	}
	return strings.Join(parts, ", ")
}

// ApprovalsRequest filters a list of approvals; the zero value lists all
// that are kept, newest first.
type ApprovalsRequest struct {
	State   ApprovalState `json:"state,omitempty"`
	SkillID string        `json:"skill_id,omitempty"`
}

// ApprovalList is a list of approvals.
type ApprovalList struct {
	Count     int            `json:"count"`
	Approvals []ApprovalInfo `json:"approvals"`
}

// ApprovalInfo is an approval and what the call it approves may reach:
// the grants of that version under the profile now (nil when the version
// is gone or does not pass the policy).
type ApprovalInfo struct {
	Approval
	Grants *policy.Grants `json:"grants,omitempty"`
}

// DecideRequest approves (Approve) or denies an approval, with a reason
// (required to deny).
type DecideRequest struct {
	ID      string `json:"id"`
	Approve bool   `json:"approve"`
	Reason  string `json:"reason,omitempty"`
}

// now is the host's clock.
func (h *Host) now() time.Time {
	if h.cfg.Clock != nil {
		return h.cfg.Clock()
	}
	return time.Now()
}

// approvalTTL is Config.ApprovalTTL, defaulted.
func (h *Host) approvalTTL() time.Duration {
	if h.cfg.ApprovalTTL == 0 {
		return DefaultApprovalTTL
	}
	return h.cfg.ApprovalTTL
}

// checkApprovalTTL validates Config.ApprovalTTL.
func checkApprovalTTL(d time.Duration) error {
	if d != 0 && (d < MinApprovalTTL || d > MaxApprovalTTL) {
		return fmt.Errorf("host: %w: Config.ApprovalTTL %s is outside %s..%s", ErrBadRequest, d, MinApprovalTTL, MaxApprovalTTL)
	}
	return nil
}

// approvalReasons returns why a call p (a call that passed the gate's
// checks) needs approval: its tool's manifest risk flags and the
// capability classes the profile marks require_approval that the skill is
// granted. Hook reasons (a before_run or before_tool hook asking for
// approval) are added by the caller. None means the call runs.
func (h *Host) approvalReasons(p *checked, toolID string) []ApprovalReason {
	var out []ApprovalReason
	if p.m != nil {
		for _, t := range p.m.Entrypoints.Tools {
			if t.ID != toolID {
				continue
			}
			if t.Risk.RequiresApproval {
				out = append(out, ApprovalReason{Kind: ReasonManifest, Detail: "requires_approval"})
			}
			if t.Risk.DefaultSensitive {
				out = append(out, ApprovalReason{Kind: ReasonManifest, Detail: "default_sensitive"})
			}
		}
	}
	if p.dec != nil {
		for _, c := range h.in.Policy().ApprovalClasses(p.dec.Grants) {
			out = append(out, ApprovalReason{Kind: ReasonProfile, Detail: c})
		}
	}
	return out
}

// HookApprovalReason is the reason a run hook (run:before_run or
// run:before_tool) gives when its decision is request_approval: the run-hook
// step of the gate adds it to callGate.hookReasons before the approval
// step, so the call waits for approval as for the manifest's and the
// profile's reasons, and the same call with the approval then runs.
func HookApprovalReason(hookID, reason string) ApprovalReason {
	d := hookID
	if reason = strings.TrimSpace(reason); reason != "" {
		d += ": " + reason
	}
	return ApprovalReason{Kind: ReasonHook, Detail: d}
}

// canonicalInput is input as the approval keeps it and hashes it: decoded
// and encoded again (object keys sorted, insignificant space dropped,
// numbers as written), so that the same document sent by another client
// hashes alike.
func canonicalInput(input json.RawMessage) (json.RawMessage, string, error) {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "", fmt.Errorf("host: %w: input: %v", ErrInvalidInput, err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, "", fmt.Errorf("host: %w: input: %v", ErrInvalidInput, err)
	}
	out := bytes.TrimRight(b.Bytes(), "\n")
	sum := sha256.Sum256(out)
	return out, hex.EncodeToString(sum[:]), nil
}

// InputSHA256 returns the sha256 an approval records for input (of its
// canonical JSON): a caller can check which input an approval is for.
func InputSHA256(input json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("null")
	}
	_, sum, err := canonicalInput(input)
	return sum, err
}

// newApprovalID returns a fresh unguessable id: "apr_" and 128 random
// bits in hex.
func newApprovalID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return "apr_" + hex.EncodeToString(b[:])
}

// approvalGate is the approval step of the gate on a call p that passed
// its checks: with no reasons the call runs; without an approval id it
// becomes (or finds again) a pending approval and fails with a
// *PendingError; with one, the approval must be approved, unexpired,
// unused, of the same skill version and tool, for the same input: then it
// is used (once) and p's input becomes the approved canonical input.
func (h *Host) approvalGate(ctx context.Context, p *checked, toolID, approvalID string, reasons []ApprovalReason) error {
	if len(reasons) == 0 {
		return nil
	}
	input, sum, err := canonicalInput(p.input)
	if err != nil {
		return err
	}
	if approvalID == "" {
		a, err := h.requestApproval(ctx, Approval{
			SkillID: p.e.SkillID, Version: p.e.Version, ToolID: toolID, Input: input, InputSHA256: sum, Reasons: reasons,
			RequestedBy: PrincipalFrom(ctx),
		})
		if err != nil {
			return err
		}
		return &PendingError{Approval: PendingOf(a)}
	}
	if err := h.useApproval(ctx, approvalID, p.e.SkillID, p.e.Version, toolID, sum); err != nil {
		return err
	}
	p.input = input
	return nil
}

// requestApproval stores a pending approval for a (or returns the one the
// same principal already waits for on the same call).
func (h *Host) requestApproval(ctx context.Context, a Approval) (Approval, error) {
	now := h.now()
	a.RequestedAt, a.ExpiresAt = now, now.Add(h.approvalTTL())
	var out Approval
	var found bool
	err := h.in.Inventory().Update(ctx, func(tx *inventory.Tx) error {
		if err := h.sweepApprovals(tx, now); err != nil {
			return err
		}
		var err error
		if out, found, err = tx.FindPending(a, now); err != nil || found {
			return err
		}
		n, err := tx.CountPending()
		if err != nil {
			return err
		}
		if n >= MaxPendingApprovals {
			return fmt.Errorf("host: %w: %d approvals are pending; decide or let some expire", ErrTooManyApprovals, n)
		}
		a.ID = newApprovalID()
		out = a
		return tx.PutApproval(a)
	})
	if err != nil {
		return Approval{}, fmt.Errorf("host: %w", err)
	}
	if !found {
		h.wakeJournal(out, inventory.EventApprovalRequested)
		h.log.Info("call waits for approval", "approval_id", out.ID, "skill_id", out.SkillID, "skill_version", out.Version, "tool_id", out.ToolID,
			"principal", out.RequestedBy, "reasons", ReasonsText(out.Reasons))
	}
	return out, nil
}

// useApproval uses approval id for a call of skill version tool with
// input hash sum, or says why it cannot.
func (h *Host) useApproval(ctx context.Context, id, skillID, version, toolID, sum string) error {
	now := h.now()
	var refused error
	err := h.in.Inventory().Update(ctx, func(tx *inventory.Tx) error {
		if err := h.sweepApprovals(tx, now); err != nil {
			return err
		}
		a, err := tx.Approval(id)
		if err != nil {
			return err
		}
		switch {
		case a.SkillID != skillID || a.Version != version || a.ToolID != toolID:
			refused = fmt.Errorf("host: %w: approval %s is for %s %s tool %s, the call is of %s %s tool %s", ErrApprovalMismatch, id, a.SkillID, a.Version, a.ToolID, skillID, version, toolID)
		case a.InputSHA256 != sum:
			refused = fmt.Errorf("host: %w: approval %s is for input sha256 %s, the call's is %s", ErrApprovalInputMismatch, id, a.InputSHA256, sum)
		case a.State != ApprovalApproved:
			refused = stateError(a)
		default:
			_, err = tx.UseApproval(id, PrincipalFrom(ctx), now)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	if refused != nil {
		return refused
	}
	h.wakeJournal(Approval{SkillID: skillID, Version: version}, inventory.EventApprovalUsed)
	return nil
}

// stateError is why an approval in a's state cannot be used or decided.
func stateError(a Approval) error {
	switch a.State {
	case ApprovalPending:
		return &PendingError{Approval: PendingOf(a)}
	case ApprovalDenied:
		why := a.Reason
		if why == "" {
			why = "no reason given"
		}
		return fmt.Errorf("host: %w: approval %s was denied by %s: %s", ErrApprovalDenied, a.ID, a.DecidedBy, why)
	case ApprovalExpired:
		return fmt.Errorf("host: %w: approval %s expired at %s", ErrApprovalExpired, a.ID, a.ExpiresAt.UTC().Format(time.RFC3339))
	case ApprovalUsed:
		return fmt.Errorf("host: %w: approval %s was used at %s by %s", ErrApprovalUsed, a.ID, a.UsedAt.UTC().Format(time.RFC3339), a.UsedBy)
	default:
		return fmt.Errorf("host: %w: approval %s was %s by %s", ErrApprovalDecided, a.ID, a.State, a.DecidedBy)
	}
}

// sweepApprovals expires the approvals due at now and prunes the old
// finished ones, in tx.
func (h *Host) sweepApprovals(tx *inventory.Tx, now time.Time) error {
	expired, err := tx.ExpireApprovals(now)
	if err != nil {
		return err
	}
	for _, a := range expired {
		h.log.Info("approval expired", "approval_id", a.ID, "skill_id", a.SkillID, "tool_id", a.ToolID)
	}
	_, err = tx.PruneApprovals(now.Add(-ApprovalRetention))
	return err
}

// sweepIfDue sweeps the approvals when something is due: a reader writes
// (and so invalidates every process's inventory cache) only then.
func (h *Host) sweepIfDue(ctx context.Context) error {
	now := h.now()
	due, err := h.in.Inventory().ApprovalsDue(ctx, now, now.Add(-ApprovalRetention))
	if err != nil || !due {
		return err
	}
	return h.in.Inventory().Update(ctx, func(tx *inventory.Tx) error { return h.sweepApprovals(tx, now) })
}

// wakeJournal wakes the journal follower after an approval change.
func (h *Host) wakeJournal(a Approval, kind inventory.EventKind) {
	h.wake.Publish(events.Event{Kind: strings.Replace(string(kind), ".", ":", 1), SkillID: a.SkillID, Version: a.Version})
}

// Approvals implements Service: expired approvals are marked first.
func (h *Host) Approvals(ctx context.Context, req ApprovalsRequest) (*ApprovalList, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if req.State != "" && !req.State.Valid() {
		return nil, fmt.Errorf("%w: state %q is not pending, approved, denied, expired or used", ErrBadRequest, req.State)
	}
	if err := h.sweepIfDue(ctx); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	list, err := h.in.Inventory().Approvals(ctx, inventory.ApprovalFilter{State: req.State, SkillID: req.SkillID})
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	out := &ApprovalList{Count: len(list), Approvals: make([]ApprovalInfo, len(list))}
	for i, a := range list {
		out.Approvals[i] = h.approvalInfo(ctx, a)
	}
	return out, nil
}

// Approval implements Service.
func (h *Host) Approval(ctx context.Context, id string) (*ApprovalInfo, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if err := h.sweepIfDue(ctx); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	a, err := h.in.Inventory().Approval(ctx, strings.TrimSpace(id))
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	info := h.approvalInfo(ctx, a)
	return &info, nil
}

// DecideApproval implements Service: the principal of ctx decides.
func (h *Host) DecideApproval(ctx context.Context, req DecideRequest) (*ApprovalInfo, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	reason := strings.TrimSpace(req.Reason)
	if !req.Approve && reason == "" {
		return nil, fmt.Errorf("%w: a reason is required to deny an approval", ErrBadRequest)
	}
	now := h.now()
	var a Approval
	var refused error
	err := h.in.Inventory().Update(ctx, func(tx *inventory.Tx) error {
		if err := h.sweepApprovals(tx, now); err != nil {
			return err
		}
		var err error
		a, err = tx.DecideApproval(strings.TrimSpace(req.ID), req.Approve, reason, PrincipalFrom(ctx), now)
		if errors.Is(err, inventory.ErrApprovalState) {
			refused = decidedError(a)
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if refused != nil {
		return nil, refused
	}
	kind := inventory.EventApprovalDenied
	if req.Approve {
		kind = inventory.EventApprovalApproved
	}
	h.wakeJournal(a, kind)
	h.log.Info("approval decided", "approval_id", a.ID, "state", a.State, "principal", a.DecidedBy, "skill_id", a.SkillID, "tool_id", a.ToolID)
	info := h.approvalInfo(ctx, a)
	return &info, nil
}

// decidedError is why a no longer pending approval cannot be decided.
func decidedError(a Approval) error {
	if a.State == ApprovalExpired {
		return fmt.Errorf("host: %w: approval %s expired at %s", ErrApprovalExpired, a.ID, a.ExpiresAt.UTC().Format(time.RFC3339))
	}
	by := a.DecidedBy
	if a.State == ApprovalUsed {
		by += " and used by " + a.UsedBy
	}
	return fmt.Errorf("host: %w: approval %s is %s (by %s)", ErrApprovalDecided, a.ID, a.State, by)
}

// approvalInfo adds to a the grants its version has under the profile now.
func (h *Host) approvalInfo(ctx context.Context, a Approval) ApprovalInfo {
	info := ApprovalInfo{Approval: a}
	e, err := h.in.Inventory().Skill(ctx, a.SkillID, a.Version)
	if err != nil {
		return info
	}
	v, err := h.verify(ctx, e)
	if err != nil {
		return info
	}
	dec, err := h.in.Policy().Evaluate(v.manifest)
	if err == nil && dec.Allowed() {
		g := dec.Grants
		info.Grants = &g
	}
	return info
}
