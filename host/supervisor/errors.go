package supervisor

import (
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/toolschema"
)

// Sentinels of the supervisor. Failures the sidecar reports (fuel_exhausted,
// trap, tool_error, ...) come back as *sidecarplugin.Error, which unwraps
// to the one sentinel of its code, so errors.Is matches it. timeout and
// canceled are errcode's shared sentinels.
var (
	ErrOverloaded      = errcode.New("overloaded", "too many calls queued for this skill")
	ErrTimeout         = errcode.ErrTimeout
	ErrSidecarCrashed  = errcode.New("sidecar_crashed", "the skill's sidecar process died during the call")
	ErrCrashLooping    = errcode.New("crashlooping", "the skill's sidecar keeps crashing; calls are refused until it is reset")
	ErrClosed          = errcode.New("supervisor_closed", "the supervisor is closed")
	ErrSidecarStart    = errcode.New("sidecar_start_failed", "the skill's sidecar could not be started")
	ErrInvalidTarget   = errcode.New("invalid_target", "the call target is incomplete")
	ErrSidecarNotFound = errcode.New("sidecar_not_found", "the palyra-sidecar binary was not found")
	ErrCanceled        = errcode.ErrCanceled
	// ErrInvalidInput and ErrInvalidOutput: a call's input or its output
	// does not match the schema its Target's tool carries (schemas.go).
	ErrInvalidInput  = errcode.ErrInvalidInput
	ErrInvalidOutput = errcode.ErrInvalidOutput
	// ErrInvalidToolSchema: a Target's tool schema does not compile.
	ErrInvalidToolSchema = toolschema.ErrInvalidSchema
	// ErrCompileBudgetExceeded: Precompile's child ran out of its CPU-time
	// or memory cap (Config.PrecompileCPUTime, PrecompileMemoryBytes); the
	// message names the cap.
	ErrCompileBudgetExceeded = errcode.ErrCompileBudgetExceeded
)
