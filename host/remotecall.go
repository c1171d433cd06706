package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/inventory"
)

// A call that runs on another host (a node of a cluster that does not
// serve the skill) passes the same gate on the caller's side: PrepareCall
// before the request leaves, FinishRemoteCall on the result that comes
// back. No host trusts another's sidecar output blindly.

// CallCheck is a call that passed this host's checks and may be sent to
// another host to run.
type CallCheck struct {
	// SkillID and Version are the current version the call was checked
	// against.
	SkillID, Version string
	// ToolID is the tool called.
	ToolID string
	// Approved is set when the call needed approval and the approval it
	// came with (CallRequest.ApprovalID) was checked and used here: the
	// host that runs it runs it with CallApproved.
	Approved bool
	// Input is the input to send: the approved canonical input when
	// Approved, else the request's.
	Input []byte
}

// PrepareCall checks req against this host's view without running it:
// the timeout's range, the input's size, the skill's current version and
// its status, the artifact re-verified against the trust store, the
// policy, the tool, and the input against the tool's input schema. The
// errors are those Call returns for the same failures. The supervisor's
// state is not consulted: the call does not run here. The approval step
// runs here, where the call entered: a call that needs approval becomes a
// pending approval of this host (a *PendingError), and one that comes with
// an approval uses it here (CallCheck.Approved).
func (h *Host) PrepareCall(ctx context.Context, req CallRequest) (*CallCheck, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if req.Timeout < 0 || req.Timeout > MaxCallTimeout {
		return nil, fmt.Errorf("%w: timeout %s is outside 0..%s", ErrBadRequest, req.Timeout, MaxCallTimeout)
	}
	id := strings.ToLower(strings.TrimSpace(req.SkillID))
	p, err := h.check(ctx, id, req.ToolID, req.Input, false)
	if err != nil {
		return nil, err
	}
	reasons := h.approvalReasons(p, req.ToolID)
	if err := h.gateApprovals(ctx, p, req.ToolID, &callGate{approvalID: req.ApprovalID}); err != nil {
		return nil, err
	}
	return &CallCheck{SkillID: p.e.SkillID, Version: p.e.Version, ToolID: req.ToolID, Approved: len(reasons) > 0, Input: p.input}, nil
}

// CallApproved runs a call whose approval step another host of the same
// cluster ran (the node the call entered: PrepareCall there used the
// approval, CallCheck.Approved): every other check of Call runs here, the
// approval step does not. It is for a cluster node serving a call routed
// to it by an authenticated peer; an application calling its own host
// uses Call.
func (h *Host) CallApproved(ctx context.Context, req CallRequest) (*CallResult, error) {
	return h.callGated(ctx, req, nil, nil)
}

// CallRouted runs a call another host of the same cluster routed here
// after its approval step (PrepareCall there) found no reason to hold it:
// every other check of Call runs here, the approval step does not, and a
// run hook here that asks for approval fails the call with its
// *HookApprovalRequest (approval_requested_by_hook), as an approval made
// here would live where the caller, polling the node it called, cannot
// see it. It is for a cluster node serving an authenticated peer's call.
func (h *Host) CallRouted(ctx context.Context, req CallRequest) (*CallResult, error) {
	return h.callGated(ctx, req, nil, &callGate{routed: true})
}

// FinishRemoteCall checks the result of a call another host ran, as Call
// checks its own sidecar's: the output is capped and validated against
// the output schema of the version that ran it (re-verified here; a
// version this host does not have is refused with ErrInvalidOutput), and
// an A2UI document it carries is kept here for form submits. A failure
// returns the result without its output, with a *CallError.
func (h *Host) FinishRemoteCall(ctx context.Context, res *CallResult) (*CallResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("host: %w: no result", ErrInvalidOutput)
	}
	fail := func(err error) (*CallResult, error) {
		bad := *res
		bad.Output, bad.A2UI = nil, nil
		return &bad, &CallError{Err: err, Result: &bad}
	}
	e, err := h.in.Inventory().Skill(ctx, strings.ToLower(strings.TrimSpace(res.SkillID)), res.Version)
	if err != nil {
		if errors.Is(err, inventory.ErrNotFound) {
			return fail(fmt.Errorf("host: %w: %s %s ran elsewhere and is not installed here to check its output", ErrInvalidOutput, res.SkillID, res.Version))
		}
		return nil, fmt.Errorf("host: %w", err)
	}
	v, err := h.verify(ctx, e)
	if err != nil {
		return fail(err)
	}
	sch, ok := v.schemas[res.ToolID]
	if !ok {
		return fail(fmt.Errorf("host: %w: %s has no tool %q", ErrUnknownTool, e.SkillID, res.ToolID))
	}
	out := *res
	out.A2UI = nil
	r := &Result{Output: out.Output, ExitCode: res.ExitCode}
	if err := h.checkCallOutput(r, res.ToolID, sch, v.palyraABI); err != nil {
		return fail(err)
	}
	out.Output = r.Output
	return h.keepA2UI(&out, res.ToolID, nil)
}
