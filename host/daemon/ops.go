package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/supervisor"
)

// Errors of the daemon's operations.
var (
	// ErrDocumentNotFound is a form submit for a document the daemon does
	// not hold (never returned, expired, or evicted).
	ErrDocumentNotFound = errcode.New("a2ui_document_not_found", "no such A2UI document (unknown or expired)")
	// ErrOverrideRequired is Palyra's admin enable without override: the
	// installer's sentinel, which the API answers before asking it.
	ErrOverrideRequired = install.ErrOverrideRequired
	// ErrDocumentChanged is an A2UI update that lost a race: the document
	// it patched was changed by another update meanwhile.
	ErrDocumentChanged = errcode.New("a2ui_document_changed", "the A2UI document changed while the update was computed; submit again")
)

// MaxCallTimeout caps the timeout a call request may ask for.
const MaxCallTimeout = 10 * time.Minute

// A2UIRef names a kept A2UI document. Patch is set when the tool replied
// with an update ({"a2ui_update": ...}) rather than a whole document: the
// document under DocumentID is now the patched one, and a client showing
// the document before applies Patch to it.
type A2UIRef struct {
	DocumentID string          `json:"document_id"`
	Surface    string          `json:"surface"`
	Patch      json.RawMessage `json:"patch,omitempty"`
}

// CallResponse is the outcome of a tool call over the API.
type CallResponse struct {
	InvocationID string                 `json:"invocation_id"`
	SkillID      string                 `json:"skill_id"`
	Version      string                 `json:"version"`
	ToolID       string                 `json:"tool_id"`
	Output       json.RawMessage        `json:"output"`
	ExitCode     int32                  `json:"exit_code"`
	Stats        supervisor.Stats       `json:"stats"`
	Logs         []supervisor.LogRecord `json:"logs,omitempty"`
	ToolError    *supervisor.ToolError  `json:"tool_error,omitempty"`
	A2UI         *A2UIRef               `json:"a2ui,omitempty"`
}

// CallError is a failed call: the error and what the sidecar reported (logs,
// tool error, stats), when it ran.
type CallError struct {
	Err    error
	Result *CallResponse
}

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// callTool runs a tool and validates an A2UI result.
func (d *Daemon) callTool(ctx context.Context, skillID, toolID string, input json.RawMessage, timeout time.Duration) (*CallResponse, error) {
	return d.runTool(ctx, skillID, toolID, input, timeout, nil)
}

// runTool runs a tool. An A2UI document result is validated and kept for
// form submits. An A2UI update result is applied to base (the document a
// form submit came from) or, without one, to the empty document of its
// surface; the patched document is validated and kept in base's place.
func (d *Daemon) runTool(ctx context.Context, skillID, toolID string, input json.RawMessage, timeout time.Duration, base *keptDoc) (*CallResponse, error) {
	if timeout < 0 || timeout > MaxCallTimeout {
		return nil, fmt.Errorf("%w: timeout %s is outside 0..%s", ErrBadRequest, timeout, MaxCallTimeout)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := d.host.Call(ctx, skillID, toolID, input)
	var out *CallResponse
	if res != nil {
		out = &CallResponse{
			InvocationID: res.InvocationID, SkillID: res.SkillID, Version: res.Version, ToolID: toolID,
			Output: res.Output, ExitCode: res.ExitCode, Stats: res.Stats, Logs: res.Logs, ToolError: res.ToolError,
		}
	}
	if err != nil {
		return nil, &CallError{Err: err, Result: out}
	}
	var prev *a2ui.Result
	if base != nil {
		prev = &a2ui.Result{Doc: base.doc, JSON: base.raw}
	}
	shown, err := a2ui.ReadResult(out.Output, prev)
	if err == nil && shown != nil {
		out.A2UI, err = d.keep(out, toolID, shown, base)
	}
	if err != nil {
		bad := *out
		bad.Output = nil
		return nil, &CallError{Err: fmt.Errorf("tool %s of %s returned A2UI the host refuses: %w", toolID, out.SkillID, err), Result: &bad}
	}
	return out, nil
}

// keep keeps the document a call showed, for form submits: under a new id,
// or in base's place when the call replied to one of base's forms with an
// update.
func (d *Daemon) keep(out *CallResponse, toolID string, shown *a2ui.Result, base *keptDoc) (*A2UIRef, error) {
	next := &keptDoc{skillID: out.SkillID, tool: toolID, version: out.Version, doc: shown.Doc, raw: shown.JSON}
	ref := &A2UIRef{Surface: shown.Doc.Surface}
	if shown.Patch != nil {
		patch, err := json.Marshal(shown.Patch)
		if err != nil {
			return nil, err
		}
		ref.Patch = patch
	}
	if shown.Patch == nil || base == nil {
		ref.DocumentID = d.docs.put(next)
		return ref, nil
	}
	if !d.docs.swap(base, next) {
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

// submitForm validates a form submit against the kept document's form and
// delivers it to the tool that returned the document.
func (d *Daemon) submitForm(ctx context.Context, documentID string, raw []byte) (*CallResponse, error) {
	kd := d.docs.get(documentID)
	if kd == nil {
		return nil, fmt.Errorf("%w: %q", ErrDocumentNotFound, documentID)
	}
	sub, err := a2ui.ParseSubmit(raw)
	if err != nil {
		return nil, err
	}
	values, err := kd.doc.ValidateSubmit(sub)
	if err != nil {
		return nil, err
	}
	in, err := json.Marshal(SubmitInput{Submit: SubmitEvent{DocumentID: documentID, Surface: kd.doc.Surface, ComponentID: sub.ComponentID, Values: values}})
	if err != nil {
		return nil, err
	}
	return d.runTool(ctx, kd.skillID, kd.tool, in, 0, kd)
}

// callResultOf returns the call result carried by err, if any.
func callResultOf(err error) *CallResponse {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Result
	}
	return nil
}
