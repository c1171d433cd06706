package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/textutil"
)

// Run-phase hooks in the call path. Every call of an installed skill's
// tool through the gate (Call, SubmitForm, and a cluster call on the node
// that runs it) fires the hooks bound to the run phases, in this order:
//
//	run:before_run, run:before_tool  after the gate's checks, before the sidecar
//	run:after_tool                   when the sidecar answered (or failed)
//	run:before_delivery              before a successful result is handed back
//	run:after_run                    at the end, also when the call failed
//
// A call the gate refuses before the sidecar (unknown skill, quarantined,
// invalid input, ...) is no run: no run hook fires for it. A hook's own
// tool call fires none either (hooks.HookCallFrom), nor does an inline run.
// When no enabled binding names a run phase the cost is one stat of the
// bindings file (hooks.Store.Snapshot).

// Errors of calls ended by run-phase hooks.
var (
	// ErrBlockedByHook is a call a run hook blocked (decision block, exit
	// code 30). The *HookDecisionError in the chain names the hook and its
	// reason.
	ErrBlockedByHook = errcode.New("blocked_by_hook", "the call was blocked by a hook")
	// ErrFailedByHook is a call a run hook failed (decision fail_run:
	// exit code below 0 or from 50 up). The *HookDecisionError in the
	// chain names the hook, its exit code and its reason.
	ErrFailedByHook = errcode.New("run_failed_by_hook", "the call was failed by a hook")
	// ErrApprovalRequested is a call a run hook held for approval
	// (decision request_approval, exit code 20): it did not run (or, at
	// run:before_delivery, its result was withheld). The
	// *HookApprovalRequest in the chain says who asked and why.
	ErrApprovalRequested = errcode.New("approval_requested_by_hook", "a hook requested approval for the call")
	// ErrRunHookFailed is a call failed because a run hook bound
	// fail-closed failed (an error, a timeout, a decision its phase does
	// not allow, output that is not JSON), or because the bindings could
	// not be read. The *HookFailureError in the chain names the hook and
	// its failure's code.
	ErrRunHookFailed = errcode.New("run_hook_failed", "a fail-closed run hook failed")
)

// Bounds of what run hooks see and say.
const (
	// MaxHookInlineBytes is the largest tool input or output a run hook's
	// payload carries in full (summary field "json"); a larger one is
	// summarized by its size and sha256 only.
	MaxHookInlineBytes = 4 << 10
	// MaxHookReasonBytes bounds the reason, annotation message and preview
	// text taken from a hook's output.
	MaxHookReasonBytes = 4 << 10
	// MaxAnnotationDataBytes is the largest hook output an annotation
	// carries as data.
	MaxAnnotationDataBytes = 4 << 10
)

// EventHookDecision is the stream event (not journaled) that tells of a
// run-phase decision that changed a call: a block, a fail_run, a
// request_approval, or a fail-closed hook failure.
const EventHookDecision = "hook:decision"

// HookAnnotation is what a run hook said about a call: the message of an
// annotate decision, or a fail-open hook's failure (Code and Error set).
type HookAnnotation struct {
	// HookID and Event name the hook and the phase it ran in.
	HookID string `json:"hook_id"`
	Event  string `json:"event"`
	// Message is the hook's text (see HookReason).
	Message string `json:"message,omitempty"`
	// Data is the hook's JSON output, when at most MaxAnnotationDataBytes.
	Data json.RawMessage `json:"data,omitempty"`
	// Code and Error are set when the hook failed and its binding is
	// fail-open: the call went on without it.
	Code  string `json:"code,omitempty"`
	Error string `json:"error,omitempty"`
}

// HookPreview is the preview a run:before_delivery hook set with its
// transform_preview decision (exit code 40): a text for people to read
// in place of the raw output (the console and the CLI show it above the
// output). The tool's output itself is never changed.
type HookPreview struct {
	HookID string `json:"hook_id"`
	Text   string `json:"text"`
}

// HookDecisionError is a call ended by a run hook's block or fail_run
// decision. It wraps ErrBlockedByHook or ErrFailedByHook.
type HookDecisionError struct {
	Decision hooks.Decision
	// HookID and PluginID name the hook and its skill; Event is the phase.
	HookID, PluginID, Event string
	// ExitCode is the hook tool's exit code.
	ExitCode int32
	// Reason is the hook's text (see HookReason); may be empty.
	Reason string
}

// Error says which hook ended the call and why.
func (e *HookDecisionError) Error() string {
	what := "blocked"
	if e.Decision == hooks.DecisionFailRun {
		what = fmt.Sprintf("failed (exit code %d)", e.ExitCode)
	}
	return fmt.Sprintf("%s: the call was %s by hook %s at %s%s", errcode.Of(e.Unwrap()), what, e.HookID, e.Event, reasonSuffix(e.Reason))
}

// Unwrap returns ErrFailedByHook for fail_run, else ErrBlockedByHook.
func (e *HookDecisionError) Unwrap() error {
	if e.Decision == hooks.DecisionFailRun {
		return ErrFailedByHook
	}
	return ErrBlockedByHook
}

// HookApprovalRequest is a call a run hook held for approval: it is a
// value, the input of a pending approval (the call's skill, version, tool
// and input digest, and the hook's reason). It wraps
// ErrApprovalRequested.
type HookApprovalRequest struct {
	// HookID and PluginID name the hook and its skill; Event is the phase.
	HookID, PluginID, Event string
	// Reason is the hook's text (see HookReason); may be empty.
	Reason string
	// RunID names the run; SkillID, Version and ToolID the call.
	RunID, SkillID, Version, ToolID string
	// InputSHA256 is the hex sha256 of the call's input (as validated).
	InputSHA256 string
}

// Error says which hook asked for approval and why.
func (e *HookApprovalRequest) Error() string {
	return fmt.Sprintf("%s: hook %s at %s requested approval for %s %s tool %s%s", ErrApprovalRequested.Error(), e.HookID, e.Event, e.SkillID, e.Version, e.ToolID, reasonSuffix(e.Reason))
}

// Unwrap returns ErrApprovalRequested.
func (e *HookApprovalRequest) Unwrap() error { return ErrApprovalRequested }

// HookFailureError is a call ended by a fail-closed run hook's failure
// (or by bindings that cannot be read: HookID is then empty). It wraps
// ErrRunHookFailed.
type HookFailureError struct {
	HookID, PluginID, Event string
	// Code is the failure's code (hook_timeout, hook_decision_not_allowed,
	// ...); Err its message.
	Code, Err string
}

// Error names the hook and its failure.
func (e *HookFailureError) Error() string {
	if e.HookID == "" {
		return fmt.Sprintf("%s: %s hooks cannot be read (%s): %s", ErrRunHookFailed.Error(), e.Event, e.Code, e.Err)
	}
	return fmt.Sprintf("%s: hook %s at %s is fail-closed and failed (%s): %s", ErrRunHookFailed.Error(), e.HookID, e.Event, e.Code, e.Err)
}

// Unwrap returns ErrRunHookFailed.
func (e *HookFailureError) Unwrap() error { return ErrRunHookFailed }

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}

// RunHookPayload is the payload a run-phase hook receives (HookInput's
// payload). Every phase has the run, the call and the input's summary;
// run:after_tool, run:before_delivery and run:after_run add the result's.
type RunHookPayload struct {
	// RunID is the same in every phase of one call.
	RunID string `json:"run_id"`
	// Principal is who made the call.
	Principal string `json:"principal"`
	// SkillID, Version and ToolID name the tool called.
	SkillID string `json:"skill_id"`
	Version string `json:"version"`
	ToolID  string `json:"tool_id"`
	// Input summarizes the tool's input.
	Input DataSummary `json:"input"`
	// Result summarizes the call's result (not in the before phases).
	Result *RunResultSummary `json:"result,omitempty"`
}

// DataSummary describes a JSON document without necessarily carrying it:
// its size and sha256 always, the document itself when it is at most
// MaxHookInlineBytes.
type DataSummary struct {
	Bytes  int             `json:"bytes"`
	SHA256 string          `json:"sha256"`
	JSON   json.RawMessage `json:"json,omitempty"`
}

// RunResultSummary is what run:after_tool, run:before_delivery and
// run:after_run hooks learn of a call's result.
type RunResultSummary struct {
	// InvocationID is the sidecar invocation ("" when it never ran).
	InvocationID string `json:"invocation_id,omitempty"`
	// Code is "ok", or the error code the call ends with so far.
	Code string `json:"code"`
	// Error is the error's message, at most MaxHookReasonBytes.
	Error string `json:"error,omitempty"`
	// ExitCode is the tool's exit code.
	ExitCode int32 `json:"exit_code"`
	// DurationMs is how long the tool ran, in the sidecar, in ms.
	DurationMs int64 `json:"duration_ms"`
	// Output summarizes the tool's output.
	Output DataSummary `json:"output"`
}

func summarizeDoc(doc json.RawMessage) DataSummary {
	sum := sha256.Sum256(doc)
	s := DataSummary{Bytes: len(doc), SHA256: hex.EncodeToString(sum[:])}
	if len(doc) > 0 && len(doc) <= MaxHookInlineBytes && json.Valid(doc) {
		s.JSON = doc
	}
	return s
}

// HookReason reads the text a hook gave with its decision from its
// output: a JSON string, or the "message" or "reason" string of a JSON
// object (a tool that exits non-zero with {"code","message"}, as the Go
// SDK writes, gives its message), cut to MaxHookReasonBytes.
func HookReason(output json.RawMessage) string {
	if len(output) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(output, &s) == nil {
		return cut(s, MaxHookReasonBytes)
	}
	var obj struct {
		Message *string `json:"message"`
		Reason  *string `json:"reason"`
	}
	if json.Unmarshal(output, &obj) == nil {
		if obj.Message != nil && *obj.Message != "" {
			return cut(*obj.Message, MaxHookReasonBytes)
		}
		if obj.Reason != nil {
			return cut(*obj.Reason, MaxHookReasonBytes)
		}
	}
	return ""
}

func cut(s string, n int) string {
	return textutil.Ellipsize(s, n, "…")
}

// runHooks is the run-phase state of one call.
type runHooks struct {
	h         *Host
	runID     string
	principal string
	skillID   string
	version   string
	toolID    string
	input     DataSummary
	// started: the before phases ran, so run:after_run must.
	started bool
	// called: the sidecar was called, so run:after_tool must run.
	called bool
	// toolStart is when the sidecar was called.
	toolStart   time.Time
	annotations []HookAnnotation
	preview     *HookPreview
}

// runHooksFor returns the run-hook state of a call made with ctx, or nil
// when no run hook can fire for it: a hook's own tool call, or no enabled
// binding on a run phase. Bindings that cannot be read fail the call:
// the run hooks an operator bound cannot be known, so they cannot be
// skipped.
func (h *Host) runHooksFor(ctx context.Context) (*runHooks, error) {
	if _, ok := hooks.HookCallFrom(ctx); ok {
		return nil, nil
	}
	snap, err := h.hooks.Snapshot()
	if err != nil {
		return nil, &HookFailureError{Event: "run", Code: errcode.Of(err), Err: err.Error()}
	}
	if !snap.HasRunHooks() {
		return nil, nil
	}
	return &runHooks{h: h, runID: supervisor.NewInvocationID(), principal: PrincipalFrom(ctx)}, nil
}

// before is the preSidecar of a call with run hooks: run:before_run, then
// run:before_tool.
func (rh *runHooks) before(ctx context.Context, p *checked) error {
	rh.skillID, rh.version = p.e.SkillID, p.e.Version
	rh.input = summarizeDoc(p.input)
	rh.started = true
	// A request for approval does not end the before phases: the later
	// phase's hooks still run (one of them may block), and a call run
	// again with its approval passes every before hook, not just the
	// ones up to the first that asked.
	var ask error
	for _, phase := range []string{hooks.EventRunBeforeRun, hooks.EventRunBeforeTool} {
		err := rh.fire(ctx, phase, nil)
		var ar *HookApprovalRequest
		switch {
		case err == nil:
		case errors.As(err, &ar):
			if ask == nil {
				ask = err
			}
		default:
			return err
		}
	}
	// With a request for approval the tool runs only if the call carries
	// its approval; the after phases then see it as called (a call held
	// pending skips them: see Host.callGated).
	rh.called, rh.toolStart = true, time.Now()
	return ask
}

// resultSummary summarizes out and err for the after phases.
func (rh *runHooks) resultSummary(out *CallResult, err error, dur time.Duration) *RunResultSummary {
	s := &RunResultSummary{Code: "ok", DurationMs: dur.Milliseconds()}
	if out != nil {
		s.InvocationID, s.ExitCode, s.Output = out.InvocationID, out.ExitCode, summarizeDoc(out.Output)
		if out.Stats.WallTime > 0 {
			s.DurationMs = out.Stats.WallTime.Milliseconds()
		}
	} else {
		s.Output = summarizeDoc(nil)
	}
	if err != nil {
		s.Code, s.Error = errcode.Of(err), cut(err.Error(), MaxHookReasonBytes)
	}
	return s
}

// fire runs the hooks of phase and applies their decisions: annotations
// and the preview are kept; a terminal decision or a fail-closed failure
// is returned as the call's error.
func (rh *runHooks) fire(ctx context.Context, phase string, result *RunResultSummary) error {
	payload := RunHookPayload{RunID: rh.runID, Principal: rh.principal, SkillID: rh.skillID, Version: rh.version, ToolID: rh.toolID, Input: rh.input, Result: result}
	outs, res, err := rh.h.disp.Fire(ctx, phase, payload)
	if err != nil {
		ferr := &HookFailureError{Event: phase, Code: errcode.Of(err), Err: err.Error()}
		rh.decided(phase, "failed", ferr)
		return ferr
	}
	var closed *HookFailureError
	for _, o := range outs {
		switch {
		case o.Failed() && o.OnFailure == hooks.OnFailureClosed:
			if closed == nil {
				closed = &HookFailureError{HookID: o.HookID, PluginID: o.PluginID, Event: phase, Code: o.Code, Err: o.Err}
			}
		case o.Failed():
			rh.annotations = append(rh.annotations, HookAnnotation{HookID: o.HookID, Event: phase, Code: o.Code, Error: cut(o.Err, MaxHookReasonBytes)})
		case o.Decision == hooks.DecisionAnnotate:
			a := HookAnnotation{HookID: o.HookID, Event: phase, Message: HookReason(o.Output)}
			if len(o.Output) <= MaxAnnotationDataBytes {
				a.Data = o.Output
			}
			rh.annotations = append(rh.annotations, a)
		}
	}
	// A fail-closed hook that could not decide outweighs every decision:
	// the check it stands for did not run.
	if closed != nil {
		rh.decided(phase, "failed", closed)
		return closed
	}
	var win hooks.Outcome
	for _, o := range outs {
		if o.HookID == res.HookID && !o.Failed() {
			win = o
		}
	}
	switch res.Decision {
	case hooks.DecisionBlock, hooks.DecisionFailRun:
		err := &HookDecisionError{Decision: res.Decision, HookID: win.HookID, PluginID: win.PluginID, Event: phase, ExitCode: win.ExitCode, Reason: HookReason(win.Output)}
		rh.decided(phase, string(res.Decision), err)
		return err
	case hooks.DecisionRequestApproval:
		err := &HookApprovalRequest{HookID: win.HookID, PluginID: win.PluginID, Event: phase, Reason: HookReason(win.Output),
			RunID: rh.runID, SkillID: rh.skillID, Version: rh.version, ToolID: rh.toolID, InputSHA256: rh.input.SHA256}
		rh.decided(phase, string(res.Decision), err)
		return err
	case hooks.DecisionTransformPreview:
		text := HookReason(win.Output)
		if text == "" && len(win.Output) > 0 {
			text = cut(string(win.Output), MaxHookReasonBytes)
		}
		rh.preview = &HookPreview{HookID: win.HookID, Text: text}
	}
	return nil
}

// decided logs a decision that changed the call and tells the event
// stream of it.
func (rh *runHooks) decided(phase, decision string, err error) {
	var hookID string
	var de *HookDecisionError
	var ar *HookApprovalRequest
	var fe *HookFailureError
	switch {
	case errors.As(err, &de):
		hookID = de.HookID
	case errors.As(err, &ar):
		hookID = ar.HookID
	case errors.As(err, &fe):
		hookID = fe.HookID
	}
	rh.h.log.Warn("run hook decided the call", "run_id", rh.runID, "event", phase, "decision", decision, "hook_id", hookID,
		"skill_id", rh.skillID, "skill_version", rh.version, "tool_id", rh.toolID, "principal", rh.principal, "code", errcode.Of(err))
	rh.h.stream.Publish(Event{Kind: EventHookDecision, SkillID: rh.skillID, Version: rh.version, Principal: rh.principal, At: time.Now().UTC(),
		Details: map[string]any{"run_id": rh.runID, "event": phase, "decision": decision, "hook_id": hookID, "tool_id": rh.toolID, "code": errcode.Of(err), "error": err.Error()}})
}

// after runs the phases after the sidecar on a call's outcome: out and
// err are what the gate returned; deliver is called when the call
// succeeded so far, to finish the result (A2UI) before
// run:before_delivery. It returns the result and error to hand back, with
// the hooks' annotations and preview attached to the result.
func (rh *runHooks) after(ctx context.Context, out *CallResult, err error, deliver func(*CallResult) (*CallResult, error)) (*CallResult, error) {
	// The after phases run even when the caller gave up: what ran must be
	// told. Each hook has its own time limit.
	actx := context.WithoutCancel(ctx)
	var dur time.Duration
	if rh.called {
		dur = time.Since(rh.toolStart)
	}
	if rh.called {
		if herr := rh.fire(actx, hooks.EventRunAfterTool, rh.resultSummary(out, err, dur)); herr != nil && err == nil {
			err = herr
		}
	}
	if err == nil {
		out, err = deliver(out)
		if err == nil {
			if herr := rh.fire(ctx, hooks.EventRunBeforeDelivery, rh.resultSummary(out, nil, dur)); herr != nil {
				err = herr
			}
		}
	}
	if rh.started {
		if herr := rh.fire(actx, hooks.EventRunAfterRun, rh.resultSummary(out, err, dur)); herr != nil && err == nil {
			err = herr
		}
	}
	if out != nil {
		if hookEnded(err) {
			// A hook refused the result after the tool ran: it is not
			// delivered, only what the sidecar reported about the run.
			withheld := *out
			withheld.Output, withheld.A2UI = nil, nil
			out = &withheld
		}
		out.Annotations = rh.annotations
		if err == nil {
			out.Preview = rh.preview
		}
	}
	if err != nil {
		var ce *CallError
		if out != nil && !errors.As(err, &ce) {
			err = &CallError{Err: err, Result: out}
		} else if ce != nil && out != nil {
			ce.Result = out
		}
		return out, err
	}
	return out, nil
}

// hookEnded reports whether err is a run hook's refusal.
func hookEnded(err error) bool {
	return errors.Is(err, ErrBlockedByHook) || errors.Is(err, ErrFailedByHook) || errors.Is(err, ErrApprovalRequested) || errors.Is(err, ErrRunHookFailed)
}

// hookToolError is the output a hook's tool gave with a non-zero exit
// code: its tool error, as JSON ({"code","message"}), so that the hook's
// reason reaches the Outcome.
func hookToolError(res *Result) json.RawMessage {
	if res == nil || res.ToolError == nil {
		return nil
	}
	data, err := json.Marshal(res.ToolError)
	if err != nil {
		return nil
	}
	return data
}
