package anomaly

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/tomltext"
)

// Kinds of anomaly: the keys of Policy.Thresholds.
const (
	// KindFuelExhausted: the call used its whole fuel budget
	// (fuel_exhausted).
	KindFuelExhausted = "fuel_exhausted"
	// KindTrap: the guest trapped (trap).
	KindTrap = "trap"
	// KindTimeout: the call ran past its deadline (timeout).
	KindTimeout = "timeout"
	// KindMemoryLimit: the guest's memory went over its limit
	// (memory_limit_exceeded).
	KindMemoryLimit = "memory_limit"
	// KindCapabilityDenied: the broker refused one of the call's capability
	// operations: egress to a host not allowed, a private address, a
	// storage write through a read root, ... (capability_denied,
	// egress_denied).
	KindCapabilityDenied = "capability_denied"
	// KindSidecarCrashed: the sidecar process died during the call
	// (sidecar_crashed).
	KindSidecarCrashed = "sidecar_crashed"
	// KindInvalidOutput: the output did not validate against the tool's
	// output_schema, was not JSON, or was over the output cap
	// (invalid_output, output_too_large).
	KindInvalidOutput = "invalid_output"
)

// kindOf maps the error codes that signal an anomaly to their kind. The
// codes are those of sidecar/internal/wasmrt, host/supervisor, host/broker,
// host/broker/egress and host (each declares or aliases its sentinels;
// host/errcode has the shared ones).
var kindOf = map[string]string{
	"fuel_exhausted":        KindFuelExhausted,
	"trap":                  KindTrap,
	"timeout":               KindTimeout,
	"memory_limit_exceeded": KindMemoryLimit,
	"capability_denied":     KindCapabilityDenied,
	"egress_denied":         KindCapabilityDenied,
	"sidecar_crashed":       KindSidecarCrashed,
	"invalid_output":        KindInvalidOutput,
	"output_too_large":      KindInvalidOutput,
}

// KindOf returns the kind of anomaly an error code signals, or "" when the
// code is not an anomaly (success, tool_error, invalid_input, overloaded,
// skill_quarantined, unknown codes, ...).
func KindOf(code string) string { return kindOf[code] }

// Kinds returns every kind, sorted.
func Kinds() []string {
	out := make([]string, 0, len(isKind))
	for k := range isKind {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// isKind is the set of kinds.
var isKind = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range kindOf {
		m[k] = true
	}
	return m
}()

// Limits of a Policy.
const (
	// MaxWindow is the longest window a Policy may have.
	MaxWindow = 24 * time.Hour
	// MaxThreshold is the highest threshold a kind may have.
	MaxThreshold = 1_000_000
	// DefaultWindow is DefaultPolicy's window.
	DefaultWindow = 5 * time.Minute
)

// ErrInvalidPolicy reports a Policy that Validate refuses.
var ErrInvalidPolicy = errcode.New("invalid_anomaly_policy", "invalid anomaly policy")

// Duration is a time.Duration written in TOML as a Go duration string
// ("5m", "90s"): the host's one such type (also the daemon's).
type Duration = tomltext.Duration

// Policy says how many anomalies of each kind within Window quarantine a
// skill version.
type Policy struct {
	// Window is the sliding window anomalies are counted in: more than 0,
	// at most MaxWindow.
	Window Duration `toml:"window"`
	// Thresholds by kind: the number of anomalies of that kind within
	// Window that trips the detector, from 0 (off) to MaxThreshold. A kind
	// not listed is off.
	Thresholds map[string]int `toml:"thresholds"`
}

// DefaultPolicy returns the recommended policy: within 5 minutes, 5
// fuel exhaustions, 5 traps, 5 timeouts, 5 memory limit hits, 5 invalid
// outputs or 10 capability denials quarantine a version. Crashes are off:
// the supervisor already marks a version that keeps crashing
// crashlooping, and a crash can be the host's doing (an OOM kill of the
// machine, for one). Denials get a higher threshold because a skill
// probing an allowlist it does not know (a user's URL) is common and
// mostly harmless; repeated, it is what exfiltration attempts look like.
func DefaultPolicy() Policy {
	return Policy{
		Window: Duration{Duration: DefaultWindow},
		Thresholds: map[string]int{
			KindFuelExhausted:    5,
			KindTrap:             5,
			KindTimeout:          5,
			KindMemoryLimit:      5,
			KindInvalidOutput:    5,
			KindCapabilityDenied: 10,
			KindSidecarCrashed:   0,
		},
	}
}

// Validate checks the window and every threshold; an unknown kind is
// refused by name.
func (p Policy) Validate() error {
	if p.Window.Duration <= 0 || p.Window.Duration > MaxWindow {
		return fmt.Errorf("%w: window is %v, must be more than 0 and at most %v", ErrInvalidPolicy, p.Window.Duration, MaxWindow)
	}
	keys := make([]string, 0, len(p.Thresholds))
	for k := range p.Thresholds {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first error is the same every time
	for _, k := range keys {
		n := p.Thresholds[k]
		if !isKind[k] {
			return fmt.Errorf("%w: thresholds: unknown kind %s (kinds: %s)", ErrInvalidPolicy, quote(k), strings.Join(Kinds(), ", "))
		}
		if n < 0 || n > MaxThreshold {
			return fmt.Errorf("%w: thresholds.%s is %d, must be from 0 (off) to %d", ErrInvalidPolicy, k, n, MaxThreshold)
		}
	}
	return nil
}

// quote quotes s, cut to 64 bytes: s comes from a configuration file.
func quote(s string) string {
	const maxQuoted = 64
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "..."
	}
	return strconv.Quote(s)
}
