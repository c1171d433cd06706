package hooks

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Decision is what a hook asks the host to do, read from its tool's exit
// code. The values are Palyra's lifecycle decision names.
type Decision string

// Decisions, in increasing priority (see Priority).
const (
	DecisionContinue         Decision = "continue"
	DecisionAnnotate         Decision = "annotate"
	DecisionTransformPreview Decision = "transform_preview"
	DecisionRequestApproval  Decision = "request_approval"
	DecisionBlock            Decision = "block"
	DecisionFailRun          Decision = "fail_run"
)

// RuntimeSource is the source of the synthetic continue that Resolve returns
// when no hook decided anything.
const RuntimeSource = "runtime"

// DecisionFromExitCode reads an exit code as Palyra does: 0 continue, 10
// annotate, 20 request_approval, 30 block, 40 transform_preview, below 0 or
// from 50 up fail_run, and any other code from 1 to 49 annotate.
func DecisionFromExitCode(code int32) Decision {
	switch {
	case code == 0:
		return DecisionContinue
	case code == 20:
		return DecisionRequestApproval
	case code == 30:
		return DecisionBlock
	case code == 40:
		return DecisionTransformPreview
	case code < 0 || code >= 50:
		return DecisionFailRun
	}
	return DecisionAnnotate // 10 and every other code from 1 to 49
}

// Priority orders decisions for Resolve: continue 10, annotate 20,
// transform_preview 30, request_approval 40, block 50, fail_run 60. An
// unknown decision has priority 0.
func (d Decision) Priority() int {
	switch d {
	case DecisionContinue:
		return 10
	case DecisionAnnotate:
		return 20
	case DecisionTransformPreview:
		return 30
	case DecisionRequestApproval:
		return 40
	case DecisionBlock:
		return 50
	case DecisionFailRun:
		return 60
	}
	return 0
}

// Terminal reports whether the decision stops what the event is about:
// request_approval, block and fail_run.
func (d Decision) Terminal() bool {
	return d == DecisionRequestApproval || d == DecisionBlock || d == DecisionFailRun
}

// Allowed reports whether a hook may make decision d for event (in
// normalized form). Continue and annotate are allowed for every event;
// request_approval and block in run:before_run, run:before_tool and
// run:before_delivery; transform_preview only in run:before_delivery;
// fail_run in every run phase except run:after_run. The gateway and skill
// events are notifications: only continue and annotate are allowed.
func Allowed(event string, d Decision) bool {
	switch d {
	case DecisionContinue, DecisionAnnotate:
		return true
	case DecisionRequestApproval, DecisionBlock:
		return event == EventRunBeforeRun || event == EventRunBeforeTool || event == EventRunBeforeDelivery
	case DecisionTransformPreview:
		return event == EventRunBeforeDelivery
	case DecisionFailRun:
		return IsRunPhase(event) && event != EventRunAfterRun
	}
	return false
}

// Outcome is the result of one hook call. It is JSON-encodable for the
// daemon's journal and the CLI.
type Outcome struct {
	// HookID, PluginID (the skill id) and ToolID ("" for the skill's default
	// tool) come from the binding.
	HookID   string `json:"hook_id"`
	PluginID string `json:"plugin_id"`
	ToolID   string `json:"tool_id,omitempty"`
	// Event is the event the hook ran for.
	Event string `json:"event"`
	// ExitCode is the tool's exit code; 0 when the call failed.
	ExitCode int32 `json:"exit_code"`
	// Decision is read from ExitCode; empty when the call failed before the
	// tool answered.
	Decision Decision `json:"decision,omitempty"`
	// Output is the tool's JSON output, at most MaxOutputBytes; nil when
	// there was none or it was refused.
	Output json.RawMessage `json:"output,omitempty"`
	// Err says why the hook failed; empty when it did not. Code is its
	// stable code: hook_timeout, hook_canceled, hook_decision_not_allowed,
	// invalid_hook_output, hook_queue_full, or the code of the CallFunc's
	// error (for example the daemon's code for a missing or quarantined
	// skill).
	Err  string `json:"error,omitempty"`
	Code string `json:"code,omitempty"`
	// Duration is how long the call took (until it was cut, for a timeout).
	Duration time.Duration `json:"duration_ns"`
	// Payload is the input sent to the tool: the HookInput as JSON.
	Payload json.RawMessage `json:"payload"`
	// OnFailure is what a failure of this hook does to the call it ran
	// for (Binding.EffectiveOnFailure): OnFailureOpen or OnFailureClosed
	// for a run phase, empty for a notification.
	OnFailure string `json:"on_failure,omitempty"`
	// EventID is the journal id of the event, for an event delivered from
	// the journal (0 otherwise). Attempt counts the tries of the hook for
	// that event, from 1; GaveUp is set on the last failed try, after which
	// the binding's cursor moves past the event.
	EventID int64 `json:"event_id,omitempty"`
	Attempt int   `json:"attempt,omitempty"`
	GaveUp  bool  `json:"gave_up,omitempty"`
}

// Failed reports whether the hook failed (Err is set). A failed hook's
// decision does not count in Resolve.
func (o Outcome) Failed() bool { return o.Err != "" }

// Vote is one hook's decision, as listed in a Resolution.
type Vote struct {
	HookID   string   `json:"hook_id"`
	PluginID string   `json:"plugin_id"`
	Decision Decision `json:"decision"`
}

// Resolution combines the decisions of the hooks of one event.
type Resolution struct {
	// Decision is the winning decision: the one of highest priority.
	Decision Decision `json:"decision"`
	// Source is "hook" when a hook made the decision, RuntimeSource when no
	// hook did and the decision is the synthetic continue.
	Source string `json:"source"`
	// HookID and PluginID name the winning hook; empty for RuntimeSource.
	HookID   string `json:"hook_id,omitempty"`
	PluginID string `json:"plugin_id,omitempty"`
	// Terminal is Decision.Terminal().
	Terminal bool `json:"terminal"`
	// Conflicts lists the other hooks whose decision differs from the
	// winning one, highest priority first.
	Conflicts []Vote `json:"conflicts,omitempty"`
	// Failed lists the hook ids of the failed outcomes, which did not vote.
	Failed []string `json:"failed,omitempty"`
}

// Resolve combines outcomes into one decision as Palyra does: failed
// outcomes do not vote; among the rest the decision of highest Priority
// wins, ties going to the lowest hook id, then the lowest plugin id; the
// others whose decision differs are listed as conflicts. With no votes the
// result is a continue from RuntimeSource. Callers that must fail closed on
// a failed hook look at Failed.
func Resolve(outcomes []Outcome) Resolution {
	var votes []Vote
	var failed []string
	for _, o := range outcomes {
		if o.Failed() {
			failed = append(failed, o.HookID)
			continue
		}
		votes = append(votes, Vote{HookID: o.HookID, PluginID: o.PluginID, Decision: o.Decision})
	}
	slices.Sort(failed)
	if len(votes) == 0 {
		return Resolution{Decision: DecisionContinue, Source: RuntimeSource, Failed: failed}
	}
	slices.SortStableFunc(votes, func(a, b Vote) int {
		if pa, pb := a.Decision.Priority(), b.Decision.Priority(); pa != pb {
			return pb - pa
		}
		if c := strings.Compare(a.HookID, b.HookID); c != 0 {
			return c
		}
		return strings.Compare(a.PluginID, b.PluginID)
	})
	win := votes[0]
	r := Resolution{
		Decision: win.Decision,
		Source:   "hook",
		HookID:   win.HookID,
		PluginID: win.PluginID,
		Terminal: win.Decision.Terminal(),
		Failed:   failed,
	}
	for _, v := range votes[1:] {
		if v.Decision != win.Decision {
			r.Conflicts = append(r.Conflicts, v)
		}
	}
	return r
}
