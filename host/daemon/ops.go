package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/supervisor"
)

// Errors of the daemon's operations.
var (
	// ErrDocumentNotFound is a form submit for a document the daemon does
	// not hold (never returned, expired, or evicted).
	ErrDocumentNotFound = errcode.New("a2ui_document_not_found", "no such A2UI document (unknown or expired)")
	// ErrOverrideRequired is Palyra's admin enable without override.
	ErrOverrideRequired = errcode.New("override_required", "enable needs override: true")
)

// MaxCallTimeout caps the timeout a call request may ask for.
const MaxCallTimeout = 10 * time.Minute

// A2UIRef names a kept A2UI document.
type A2UIRef struct {
	DocumentID string `json:"document_id"`
	Surface    string `json:"surface"`
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
	if a2ui.IsDocument(out.Output) {
		doc, err := a2ui.Validate(out.Output)
		if err != nil {
			bad := *out
			bad.Output = nil
			return nil, &CallError{Err: fmt.Errorf("tool %s of %s returned an invalid A2UI document: %w", toolID, out.SkillID, err), Result: &bad}
		}
		id := d.docs.put(&keptDoc{skillID: out.SkillID, tool: toolID, version: out.Version, doc: doc, raw: out.Output})
		out.A2UI = &A2UIRef{DocumentID: id, Surface: doc.Surface}
	}
	return out, nil
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
	return d.callTool(ctx, kd.skillID, kd.tool, in, 0)
}

// callResultOf returns the call result carried by err, if any.
func callResultOf(err error) *CallResponse {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Result
	}
	return nil
}
