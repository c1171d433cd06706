package policy

import (
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
)

// The sentinels of the package. Every error the package returns wraps
// exactly one of them, so callers branch with errors.Is and report
// errcode.Of(err), never the message text.
var (
	// ErrInvalidProfile: a profile file is too large, not UTF-8, not TOML,
	// has an unknown key or a value of the wrong type, or breaks a rule of
	// Validate. The error is a *ProfileError naming the key.
	ErrInvalidProfile = errcode.New("invalid_policy_profile", "invalid policy profile")
	// ErrViolation: a manifest requests a capability or a quota outside the
	// operator's profile. The installer quarantines such a skill; the error
	// is a *ViolationError listing every violation.
	ErrViolation = errcode.New("policy_violation", "capability request outside the operator profile")
	// ErrCapabilityEscalation: a new version of an installed skill is granted
	// more than the installed version. The error is an *EscalationError.
	ErrCapabilityEscalation = errcode.New("capability_escalation", "new version escalates capabilities")
	// ErrInlineNotAllowed: an inline (unpackaged, unsigned) module was
	// given to run and the profile's [dev] allow_inline is false. The
	// error names the setting (InlineNotAllowed).
	ErrInlineNotAllowed = errcode.New("inline_not_allowed", "inline modules are not allowed by the operator profile")
)

// InlineNotAllowed returns the error of an inline run the profile p
// refuses (nil when p allows inline modules): it wraps ErrInlineNotAllowed
// and names the setting that allows them.
func (p *Profile) InlineNotAllowed() error {
	if p != nil && p.Dev.AllowInline {
		return nil
	}
	return fmt.Errorf("%w: set [dev] allow_inline = true in policy.toml (palyra policy set) to run unsigned modules on this host", ErrInlineNotAllowed)
}

// ProfileError reports a problem with one key of a profile. Parse, Load,
// Validate and Marshal return it; use errors.As to read the Path. It wraps
// ErrInvalidProfile and, when there is one, Cause.
type ProfileError struct {
	// File is the profile's path when the error comes from Load, else "".
	File string
	// Path names the key in TOML terms, with array indices:
	// "http.allowed_hosts[1]", "quotas.max_fuel". It is "" when the problem
	// is with the whole document (too large, not UTF-8, not TOML).
	Path string
	// Line and Column locate a TOML syntax error, counting from 1; both are
	// 0 for other problems.
	Line, Column int
	// Reason says what is wrong, in lower case with no trailing period.
	Reason string
	// Cause is the underlying error (the TOML decoder's), or nil.
	Cause error
}

// Error returns "policy: [<file>: ][<path>: ]<reason>".
func (e *ProfileError) Error() string {
	var b strings.Builder
	b.WriteString("policy: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns Cause (when set) and ErrInvalidProfile.
func (e *ProfileError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Cause, ErrInvalidProfile}
	}
	return []error{ErrInvalidProfile}
}

// ViolationError is the error of a Decision that is not allowed: it lists
// every violation, in the Decision's order. It unwraps to ErrViolation, so
// errcode.Of reports policy_violation.
type ViolationError struct {
	Violations []Violation
}

// Error returns "capability request outside the operator profile: "
// followed by every violation's String, separated by "; ".
func (e *ViolationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return ErrViolation.Error() + ": " + strings.Join(parts, "; ")
}

// Unwrap returns ErrViolation.
func (e *ViolationError) Unwrap() error { return ErrViolation }

// EscalationError is the error of a non-empty Escalation: the new version
// of a skill would be granted more than the installed one. It unwraps to
// ErrCapabilityEscalation.
type EscalationError struct {
	Escalation Escalation
}

// Error returns "new version escalates capabilities: " followed by
// the Escalation's Lines, separated by "; ".
func (e *EscalationError) Error() string {
	return ErrCapabilityEscalation.Error() + ": " + strings.Join(e.Escalation.Lines(), "; ")
}

// Unwrap returns ErrCapabilityEscalation.
func (e *EscalationError) Unwrap() error { return ErrCapabilityEscalation }
