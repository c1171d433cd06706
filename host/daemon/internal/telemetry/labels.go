package telemetry

import (
	"regexp"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/textutil"
)

// Limits on label values.
const (
	// MaxLabelBytes caps any label value; a longer one is cut at a rune
	// boundary.
	MaxLabelBytes = 128
	// MaxCodeBytes caps an error code or a broker reason.
	MaxCodeBytes = 64
	// MaxSkills caps the skill ids one scrape exports.
	MaxSkills = 4096
)

// Label values the package substitutes.
const (
	// OKCode is the code label of a call that succeeded.
	OKCode = "ok"
	// UnregisteredCode replaces a code or reason that is not known to
	// this program, so that a sidecar cannot mint label values.
	UnregisteredCode = "unregistered"
)

// sidecarCodes are the codes the palyra-sidecar process reports: the call
// outcomes of sdk/ABI.md §7 and the sidecar's own failures. The host never
// links sidecar/internal/wasmrt (it is cgo), so errcode.All in the daemon
// lists only those of them the host also registers (errcode's shared
// sentinels: timeout, canceled, unknown_tool, invalid_input,
// invalid_output, output_too_large); the list names them all.
var sidecarCodes = []string{
	// sidecar/internal/wasmrt
	"fuel_exhausted", "timeout", "memory_limit_exceeded", "trap",
	"tool_error", "invalid_input", "invalid_output", "output_too_large",
	"missing_export", "link_error", "canceled", "invalid_module",
	"runtime_closed", "invalid_config",
	// sidecar
	"module_hash_mismatch", "invalid_request", "skill_already_loaded",
	"skill_not_loaded", "unknown_tool", "sidecar_stopping",
	"broker_unavailable", "module_read_failed", "invalid_tool_schema",
}

var reasonRE = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// codes is the set of error codes exported as they are.
type codes map[string]bool

// knownCodes returns the codes registered with errcode when it is called
// (every package's sentinels exist once main runs) and sidecarCodes.
func knownCodes() codes {
	c := codes{errcode.Internal: true}
	for _, e := range errcode.All() {
		c[e.Code] = true
	}
	for _, s := range sidecarCodes {
		c[s] = true
	}
	return c
}

// code returns the label value of an error code: OKCode for "", the code
// when it is known, UnregisteredCode otherwise.
func (c codes) code(s string) string {
	switch {
	case s == "":
		return OKCode
	case c[s]:
		return s
	default:
		return UnregisteredCode
	}
}

// reason returns the label value of a broker reason or capability kind:
// the reason when it is a snake_case word of at most MaxCodeBytes,
// UnregisteredCode otherwise.
func reason(s string) string {
	if len(s) > MaxCodeBytes || !reasonRE.MatchString(s) {
		return UnregisteredCode
	}
	return s
}

// label makes s a valid label value: valid UTF-8, at most MaxLabelBytes.
func label(s string) string { return textutil.TruncateValid(s, MaxLabelBytes) }
