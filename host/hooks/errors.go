package hooks

import (
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"
)

// Sentinels. Every error this package returns wraps one of them, so callers
// use errors.Is (and errcode.Of for the stable code), never the message text.
var (
	// ErrInvalidBindings: the bindings file is too large, is not valid JSON,
	// or holds an entry that does not validate. A *FieldError in the chain
	// names the entry and the field.
	ErrInvalidBindings = errcode.New("invalid_hook_bindings", "invalid hook bindings file")
	// ErrSchemaTooNew: the bindings file has a schema_version newer than
	// SchemaVersion; it was written by a newer program and is left alone.
	ErrSchemaTooNew = errcode.New("hook_bindings_schema_too_new", "hook bindings schema version is newer than supported")
	// ErrInvalidBinding: a binding or hook id given to an API call does not
	// validate. A *FieldError in the chain names the field.
	ErrInvalidBinding = errcode.New("invalid_hook_binding", "invalid hook binding")
	// ErrUnknownEvent: an event name is not one of Events().
	ErrUnknownEvent = errcode.New("unknown_hook_event", "unknown hook event")
	// ErrHookExists: Bind was given a hook id that is already bound.
	ErrHookExists = errcode.New("hook_exists", "hook already exists")
	// ErrHookNotFound: no binding has the hook id.
	ErrHookNotFound = errcode.New("hook_not_found", "hook not found")
	// ErrTooManyHooks: Bind would make the file hold more than MaxEntries
	// bindings.
	ErrTooManyHooks = errcode.New("too_many_hooks", "too many hook bindings")
	// ErrLocked: the bindings lock could not be taken before the context was
	// done. The error also wraps the context's error.
	ErrLocked = errcode.New("hook_bindings_locked", "hook bindings file is locked")
	// ErrHookTimeout: a hook's tool did not answer within the hook's time
	// limit. Outcome.Code is its code.
	ErrHookTimeout = errcode.New("hook_timeout", "hook timed out")
	// ErrHookCanceled: a hook call was cut short because the caller's context
	// ended or the Dispatcher was closed. Outcome.Code is its code.
	ErrHookCanceled = errcode.New("hook_canceled", "hook call canceled")
	// ErrDecisionNotAllowed: a hook's decision is not allowed for the event it
	// ran for (see Allowed). Outcome.Code is its code; this is Palyra's
	// hook.failed for a decision outside its phase.
	ErrDecisionNotAllowed = errcode.New("hook_decision_not_allowed", "hook decision not allowed for the event")
	// ErrInvalidHookOutput: a hook's tool returned output that is larger than
	// MaxOutputBytes or is not JSON. Outcome.Code is its code.
	ErrInvalidHookOutput = errcode.New("invalid_hook_output", "invalid hook output")
	// ErrInvalidPayload: an event payload cannot be encoded as JSON, or
	// encodes to more than MaxPayloadBytes.
	ErrInvalidPayload = errcode.New("invalid_hook_payload", "invalid hook event payload")
	// ErrHookQueueFull: an enqueued event found SkillQueueDepth events of
	// its hook's skill already waiting, so the hook was not run for it.
	// Outcome.Code is its code: the overflow is reported as each such
	// hook's outcome (and counted, see Dispatcher.Overflowed), never lost
	// in silence.
	ErrHookQueueFull = errcode.New("hook_queue_full", "hook queue of the skill is full")
	// ErrDispatcherClosed: Fire was called after Close.
	ErrDispatcherClosed = errcode.New("hook_dispatcher_closed", "hook dispatcher is closed")
)

// FieldError locates a problem in a bindings file or in a binding given to
// an API call. It is wrapped together with ErrInvalidBindings or
// ErrInvalidBinding; get it with errors.As.
type FieldError struct {
	// Index is the position of the entry in the file's entries (or in the
	// bare legacy array), or -1 for a top-level field of the file or a field
	// of a binding given to an API call.
	Index int
	// Field is the JSON key at fault ("operator.notes" for a nested one), or
	// "" when the problem is the whole entry or file.
	Field string
	// Err says what is wrong. It may wrap ErrUnknownEvent.
	Err error
}

// Error implements error: "entries[3].event: ...".
func (e *FieldError) Error() string {
	switch {
	case e.Index >= 0 && e.Field != "":
		return fmt.Sprintf("entries[%d].%s: %v", e.Index, e.Field, e.Err)
	case e.Index >= 0:
		return fmt.Sprintf("entries[%d]: %v", e.Index, e.Err)
	case e.Field != "":
		return fmt.Sprintf("%s: %v", e.Field, e.Err)
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// maxQuoted bounds how much of a hostile value an error message repeats.
const maxQuoted = 80

// quote returns s quoted with %q, cut to maxQuoted bytes first.
func quote(s string) string {
	if len(s) > maxQuoted {
		return fmt.Sprintf("%q... (%d bytes)", s[:maxQuoted], len(s))
	}
	return fmt.Sprintf("%q", s)
}
