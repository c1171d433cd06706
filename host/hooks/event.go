package hooks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/events"
)

// Event kinds a hook can be bound to. The gateway and skill events are
// notifications the daemon dispatches as they happen (the skill ones are the
// kinds of host/events where it has them). The run phases are fired by the
// host in every tool call through its call gate (see the package doc).
const (
	EventGatewayStartup    = "gateway:startup"
	EventSkillInstalled    = events.SkillInstalled
	EventSkillUpdated      = events.SkillUpdated
	EventSkillEnabled      = events.SkillEnabled
	EventSkillDisabled     = events.SkillDisabled
	EventSkillQuarantined  = events.SkillQuarantined
	EventSkillRemoved      = events.SkillRemoved
	EventSkillCrashLooping = "skill:crashlooping"

	EventRunBeforeRun      = "run:before_run"
	EventRunBeforeTool     = "run:before_tool"
	EventRunAfterTool      = "run:after_tool"
	EventRunBeforeDelivery = "run:before_delivery"
	EventRunAfterRun       = "run:after_run"
)

// runPrefix starts every run-phase event.
const runPrefix = "run:"

// MaxEventNameBytes is the longest event name NormalizeEvent looks at; the
// longest known name is far shorter.
const MaxEventNameBytes = 128

// knownEvents lists the bindable events, notifications first.
var knownEvents = []string{
	EventGatewayStartup,
	EventSkillInstalled,
	EventSkillUpdated,
	EventSkillEnabled,
	EventSkillDisabled,
	EventSkillQuarantined,
	EventSkillRemoved,
	EventSkillCrashLooping,
	EventRunBeforeRun,
	EventRunBeforeTool,
	EventRunAfterTool,
	EventRunBeforeDelivery,
	EventRunAfterRun,
}

// Events returns every bindable event kind: the gateway and skill
// notifications, then the run phases in the order a run goes through them.
func Events() []string { return slices.Clone(knownEvents) }

// IsRunPhase reports whether event (in normalized form) is one of the run
// phases.
func IsRunPhase(event string) bool {
	return strings.HasPrefix(event, runPrefix) && slices.Contains(knownEvents, event)
}

// NormalizeEvent returns the canonical name of an event, accepting the
// spellings Palyra accepts and the legacy ones found in old bindings files:
// surrounding white space is trimmed and the name lower-cased
// (" Skill:Enabled " is skill:enabled); a run phase may omit its "run:"
// prefix (before_tool is run:before_tool); and a journal-style dotted name
// without a colon has its first dot read as the colon (skill.quarantined is
// skill:quarantined, run.after_run is run:after_run). Any other name, and a
// name longer than MaxEventNameBytes, is an error wrapping ErrUnknownEvent
// that lists the known events.
func NormalizeEvent(s string) (string, error) {
	if len(s) > MaxEventNameBytes {
		return "", fmt.Errorf("%w: name is %d bytes, the limit is %d bytes (MaxEventNameBytes)", ErrUnknownEvent, len(s), MaxEventNameBytes)
	}
	e := strings.ToLower(strings.TrimSpace(s))
	if e == "" {
		return "", fmt.Errorf("%w: empty event name; known events: %s", ErrUnknownEvent, strings.Join(knownEvents, ", "))
	}
	if !strings.Contains(e, ":") {
		if i := strings.IndexByte(e, '.'); i >= 0 {
			e = e[:i] + ":" + e[i+1:]
		} else if IsRunPhase(runPrefix + e) {
			e = runPrefix + e
		}
	}
	if !slices.Contains(knownEvents, e) {
		return "", fmt.Errorf("%w %s; known events: %s", ErrUnknownEvent, quote(s), strings.Join(knownEvents, ", "))
	}
	return e, nil
}

// StartupPayload returns the payload Palyra sends with gateway:startup,
// {"source":"gateway.startup"}, for the daemon to pass to Fire or Enqueue
// when it starts.
func StartupPayload() json.RawMessage {
	return json.RawMessage(`{"source":"gateway.startup"}`)
}
