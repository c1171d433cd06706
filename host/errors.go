package host

import (
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/supervisor"
)

// Sentinels of the call gate. The supervisor's (overloaded, timeout,
// sidecar_crashed, crashlooping) and the sidecar's outcomes (fuel_exhausted,
// trap, tool_error, ...) pass through with their own codes.
var (
	ErrSkillNotFound   = errcode.New("skill_not_found", "skill not found")
	ErrQuarantined     = errcode.New("skill_quarantined", "skill is quarantined")
	ErrDisabled        = errcode.New("skill_disabled", "skill is disabled")
	ErrCrashLooping    = supervisor.ErrCrashLooping
	ErrNoStatus        = errcode.New("skill_status_missing", "skill version has no status row")
	ErrUnknownTool     = errcode.New("unknown_tool", "the skill has no such tool")
	ErrInvalidInput    = errcode.New("invalid_input", "tool input does not match its input_schema")
	ErrInvalidOutput   = errcode.New("invalid_output", "tool output does not match its output_schema")
	ErrOutputTooLarge  = errcode.New("output_too_large", "tool output exceeds the host's cap")
	ErrPolicyViolation = policy.ErrViolation
	ErrNoModule        = errcode.New("skill_module_missing", "the skill names no module to run")
	ErrClosed          = errcode.New("host_closed", "the host is closed")
)
