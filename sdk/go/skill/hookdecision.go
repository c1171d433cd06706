package skill

import "fmt"

// Exit codes of a hook's decisions, as the host reads a hook tool's exit
// code (Palyra's table; docs/hooks.md): 0 continue, 10 annotate, 20
// request_approval, 30 block, 40 transform_preview, 50 fail_run.
const (
	ExitAnnotate         int32 = 10
	ExitRequestApproval  int32 = 20
	ExitBlock            int32 = 30
	ExitTransformPreview int32 = 40
	ExitFailRun          int32 = 50
)

// HookDecision is an error a hook's handler returns to decide the run
// phase it was called for: the tool ends with the decision's exit code and
// a tool error whose message is Reason, which the host shows as the hook's
// reason (the block's, the approval's, the annotation's text, or the
// preview). A handler that returns nil continues; any other error
// annotates (exit code 1). Which decisions a phase allows is the host's
// rule (a block in run:after_tool is a failure of the hook).
type HookDecision struct {
	// ExitCode is one of the Exit* constants.
	ExitCode int32
	// Reason is the decision's text, cut to 4 KiB when reported.
	Reason string
}

// Error returns "hook decision <exit code>: <reason>".
func (d *HookDecision) Error() string {
	return fmt.Sprintf("hook decision %d: %s", d.ExitCode, d.Reason)
}

// code is the tool error code the decision is reported with.
func (d *HookDecision) code() string {
	switch d.ExitCode {
	case ExitAnnotate:
		return "hook_annotate"
	case ExitRequestApproval:
		return "hook_request_approval"
	case ExitBlock:
		return "hook_block"
	case ExitTransformPreview:
		return "hook_transform_preview"
	case ExitFailRun:
		return "hook_fail_run"
	}
	return "hook_decision"
}

// Block ends a run:before_* phase's call: it fails with blocked_by_hook,
// naming the hook and reason.
func Block(reason string) error { return &HookDecision{ExitCode: ExitBlock, Reason: reason} }

// RequestApproval holds the call for an operator's approval, with reason
// among the approval's reasons.
func RequestApproval(reason string) error {
	return &HookDecision{ExitCode: ExitRequestApproval, Reason: reason}
}

// Annotate attaches text to the call's result (its annotations).
func Annotate(text string) error { return &HookDecision{ExitCode: ExitAnnotate, Reason: text} }

// TransformPreview sets the preview shown with the result
// (run:before_delivery only); the tool's output is never changed.
func TransformPreview(text string) error {
	return &HookDecision{ExitCode: ExitTransformPreview, Reason: text}
}

// FailRun fails the call with run_failed_by_hook.
func FailRun(reason string) error { return &HookDecision{ExitCode: ExitFailRun, Reason: reason} }
