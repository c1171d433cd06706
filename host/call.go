package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/host/errcode"
)

// Errors of calls and form submits.
var (
	// ErrBadRequest is a request the service cannot act on as given (a
	// timeout out of range, a malformed field).
	ErrBadRequest = errcode.New("bad_request", "malformed request")
	// ErrDocumentNotFound is a form submit for a document the host does
	// not hold (never returned, expired, or evicted).
	ErrDocumentNotFound = errcode.New("a2ui_document_not_found", "no such A2UI document (unknown or expired)")
	// ErrDocumentChanged is an A2UI update that lost a race: the document
	// it patched was changed by another update meanwhile.
	ErrDocumentChanged = errcode.New("a2ui_document_changed", "the A2UI document changed while the update was computed; submit again")
)

// CallError is a failed call that reached the sidecar: the error, and
// what the sidecar reported (logs, tool error, stats) in Result.
type CallError struct {
	Err    error
	Result *CallResult
}

// Error returns the call's error message.
func (e *CallError) Error() string { return e.Err.Error() }

// Unwrap returns the call's error.
func (e *CallError) Unwrap() error { return e.Err }

// CallResultOf returns the call result a failed call carries (nil when
// the call never reached a sidecar).
func CallResultOf(err error) *CallResult {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Result
	}
	return nil
}

// Call implements Service. An A2UI document result is validated and kept
// for form submits (A2UI names it); an update ({"a2ui_update": ...}) is
// applied to the empty document of its surface. A failed call that reached
// the sidecar returns the result with the error, and the error is a
// *CallError carrying it.
func (h *Host) Call(ctx context.Context, req CallRequest) (*CallResult, error) {
	return h.callTool(ctx, req, nil)
}

// callTool runs a call; base is the kept document a form submit came
// from (nil for a plain call): an update the tool replies with is applied
// to it and the patched document replaces it.
func (h *Host) callTool(ctx context.Context, req CallRequest, base *keptDoc) (*CallResult, error) {
	return h.callGated(ctx, req, base, &callGate{approvalID: req.ApprovalID})
}

// callGated is callTool with the approval step g (nil: none).
func (h *Host) callGated(ctx context.Context, req CallRequest, base *keptDoc, g *callGate) (*CallResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if req.Timeout < 0 || req.Timeout > MaxCallTimeout {
		return nil, fmt.Errorf("%w: timeout %s is outside 0..%s", ErrBadRequest, req.Timeout, MaxCallTimeout)
	}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	rh, err := h.runHooksFor(ctx)
	if err != nil {
		return nil, err
	}
	var pre preSidecar
	if rh != nil {
		rh.toolID = req.ToolID
		pre = rh.before
	}
	res, err := h.run(ctx, req.SkillID, req.ToolID, req.Input, pre, g)
	var out *CallResult
	if res != nil {
		out = &CallResult{
			InvocationID: res.InvocationID, SkillID: res.SkillID, Version: res.Version, ToolID: req.ToolID,
			Output: res.Output, ExitCode: res.ExitCode, Stats: res.Stats, Logs: res.Logs, LogsDropped: res.LogsDropped,
			ToolError: res.ToolError, TrapCode: res.TrapCode, SidecarPID: res.PID,
		}
	}
	if pa := PendingApprovalOf(err); pa != nil {
		// Held for approval: the call did not run, and its run goes on
		// when it is called again with the approval, so the run hooks'
		// after phases do not fire now.
		return &CallResult{SkillID: pa.SkillID, Version: pa.Version, ToolID: pa.ToolID, Pending: pa}, err
	}
	deliver := func(out *CallResult) (*CallResult, error) { return h.keepA2UI(out, req.ToolID, base) }
	if rh != nil {
		return rh.after(ctx, out, err, deliver)
	}
	if err != nil {
		if out == nil {
			return nil, err
		}
		return out, &CallError{Err: err, Result: out}
	}
	return deliver(out)
}

// keepA2UI keeps the A2UI document (or applies the update) a successful
// call's output carries, for form submits on this host.
func (h *Host) keepA2UI(out *CallResult, toolID string, base *keptDoc) (*CallResult, error) {
	var prev *a2ui.Result
	if base != nil {
		prev = &a2ui.Result{Doc: base.doc, JSON: base.raw}
	}
	shown, err := a2ui.ReadResult(out.Output, prev)
	if err == nil && shown != nil {
		out.A2UI, err = h.keep(out, toolID, shown, base)
	}
	if err != nil {
		bad := *out
		bad.Output = nil
		return &bad, &CallError{Err: fmt.Errorf("tool %s of %s returned A2UI the host refuses: %w", toolID, out.SkillID, err), Result: &bad}
	}
	return out, nil
}

// keep keeps the document a call showed, for form submits: under a new id,
// or in base's place when the call replied to one of base's forms with an
// update.
func (h *Host) keep(out *CallResult, toolID string, shown *a2ui.Result, base *keptDoc) (*A2UIRef, error) {
	next := &keptDoc{skillID: out.SkillID, tool: toolID, version: out.Version, doc: shown.Doc, raw: shown.JSON}
	ref := &A2UIRef{Surface: shown.Doc.Surface}
	if shown.Patch != nil {
		patch, err := json.Marshal(shown.Patch)
		if err != nil {
			return nil, err
		}
		ref.Patch = patch
		ref.Document = shown.JSON
	}
	if shown.Patch == nil || base == nil {
		ref.DocumentID = h.docs.put(next)
		return ref, nil
	}
	if !h.docs.swap(base, next) {
		return nil, fmt.Errorf("%w: %s", ErrDocumentChanged, base.id)
	}
	ref.DocumentID = base.id
	return ref, nil
}

// SubmitInput is the input a tool receives for a form submit on a document
// it returned: {"a2ui_submit": {...}}.
type SubmitInput struct {
	Submit SubmitEvent `json:"a2ui_submit"`
}

// SubmitEvent is a validated form submit.
type SubmitEvent struct {
	DocumentID  string         `json:"document_id"`
	Surface     string         `json:"surface"`
	ComponentID string         `json:"component_id"`
	Values      map[string]any `json:"values"`
}

// SubmitForm implements Service: the submit is validated against the kept
// document's form and delivered to the tool that returned the document.
func (h *Host) SubmitForm(ctx context.Context, req SubmitRequest) (*CallResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	kd := h.docs.get(req.DocumentID)
	if kd == nil {
		return nil, fmt.Errorf("%w: %q", ErrDocumentNotFound, req.DocumentID)
	}
	raw, err := json.Marshal(struct {
		ComponentID string         `json:"componentId"`
		Values      map[string]any `json:"values"`
	}{req.ComponentID, req.Values})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	sub, err := a2ui.ParseSubmit(raw)
	if err != nil {
		return nil, err
	}
	values, err := kd.doc.ValidateSubmit(sub)
	if err != nil {
		return nil, err
	}
	in, err := json.Marshal(SubmitInput{Submit: SubmitEvent{DocumentID: req.DocumentID, Surface: kd.doc.Surface, ComponentID: sub.ComponentID, Values: values}})
	if err != nil {
		return nil, err
	}
	return h.callTool(ctx, CallRequest{SkillID: kd.skillID, ToolID: kd.tool, Input: in, ApprovalID: req.ApprovalID}, kd)
}
