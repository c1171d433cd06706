package supervisor

import "github.com/palyra-go/palyra/host/errcode"

// Sentinels of the supervisor. Failures the sidecar reports (fuel_exhausted,
// trap, tool_error, ...) come back as *sidecarplugin.Error, which matches
// any sentinel with the same code through errors.Is.
var (
	ErrOverloaded      = errcode.New("overloaded", "too many calls queued for this skill")
	ErrTimeout         = errcode.New("timeout", "the call did not finish before its deadline")
	ErrSidecarCrashed  = errcode.New("sidecar_crashed", "the skill's sidecar process died during the call")
	ErrCrashLooping    = errcode.New("crashlooping", "the skill's sidecar keeps crashing; calls are refused until it is reset")
	ErrClosed          = errcode.New("supervisor_closed", "the supervisor is closed")
	ErrSidecarStart    = errcode.New("sidecar_start_failed", "the skill's sidecar could not be started")
	ErrInvalidTarget   = errcode.New("invalid_target", "the call target is incomplete")
	ErrSidecarNotFound = errcode.New("sidecar_not_found", "the palyra-sidecar binary was not found")
	ErrCanceled        = errcode.New("canceled", "the call was canceled")
)
