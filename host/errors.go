package host

import (
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/supervisor"
)

// Sentinels of the call gate. The supervisor's (overloaded, timeout,
// sidecar_crashed, crashlooping) and the sidecar's outcomes (fuel_exhausted,
// trap, tool_error, ...) pass through with their own codes. Most are
// re-exports of the package that owns the code, so a caller of host needs
// no other import to branch on them, and errors.Is gives the same answer
// with either name.
var (
	ErrSkillNotFound  = inventory.ErrNotFound
	ErrQuarantined    = install.ErrQuarantined
	ErrDisabled       = errcode.New("skill_disabled", "skill is disabled")
	ErrCrashLooping   = supervisor.ErrCrashLooping
	ErrNoStatus       = inventory.ErrNoStatus
	ErrUnknownTool    = manifest.ErrUnknownTool
	ErrInvalidInput   = manifest.ErrInputSchema
	ErrInvalidOutput  = manifest.ErrOutputSchema
	ErrOutputTooLarge = errcode.ErrOutputTooLarge
	// ErrInputTooLarge is a tool input over MaxInputBytes, refused before
	// anything is sent to a sidecar.
	ErrInputTooLarge   = errcode.New("input_too_large", "input too large")
	ErrPolicyViolation = policy.ErrViolation
	ErrNoModule        = errcode.New("skill_module_missing", "the skill names no module to run")
	ErrClosed          = errcode.New("host_closed", "the host is closed")
)
