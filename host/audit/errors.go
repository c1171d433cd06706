package audit

import (
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
)

// The sentinels of the package. Audit findings are checks in the Report,
// never errors; Audit itself fails only on bad input (ErrInvalidInput, an
// invalid policy profile, a cancelled context). Report.Err turns a failed
// report into an error wrapping ErrAuditFailed, for callers that want one.
var (
	// ErrAuditFailed: the report has at least one failed check, so the
	// skill must be quarantined. The error is a *FailedError listing the
	// quarantine reasons.
	ErrAuditFailed = errcode.New("audit_failed", "security audit failed")
	// ErrInvalidInput: Audit was called without an inspection or a
	// manifest, without the trust decision of verification, or with
	// negative limits in Options.
	ErrInvalidInput = errcode.New("invalid_audit_input", "invalid audit input")
	// ErrModuleTooComplex: a module declares more of something that drives
	// compile cost (functions, body size, locals, types, imports, exports,
	// globals, tables, segments) than ModuleLimits allow. It is the code
	// of a failed wasm_module_complexity check (details["error_code"]), and
	// a *FailedError of such a report matches it with errors.Is (its
	// errcode.Of stays audit_failed).
	ErrModuleTooComplex = errcode.New("module_too_complex", "module too complex to compile within the compile budget")
)

// FailedError is the error of a report that did not pass: it names the
// skill and carries the failed check ids and the quarantine reasons, in
// check order. It unwraps to ErrAuditFailed, so errcode.Of reports
// audit_failed (and to ErrModuleTooComplex as well when a module failed
// wasm_module_complexity).
type FailedError struct {
	SkillID, Version string
	// FailedChecks are the ids of the failed checks (Report.FailedChecks).
	FailedChecks []string
	// Reasons are the messages of the failed checks
	// (Report.QuarantineReasons).
	Reasons []string
}

// Error returns "audit: skill <id> <version> failed the security audit:
// <reason>; <reason>...".
func (e *FailedError) Error() string {
	var b strings.Builder
	b.WriteString("audit: skill ")
	b.WriteString(e.SkillID)
	b.WriteString(" ")
	b.WriteString(e.Version)
	b.WriteString(" failed the security audit")
	if len(e.Reasons) > 0 {
		b.WriteString(": ")
		b.WriteString(strings.Join(e.Reasons, "; "))
	}
	return b.String()
}

// Unwrap returns ErrAuditFailed, then ErrModuleTooComplex when the
// wasm_module_complexity check failed; errcode.Of reports the first,
// audit_failed.
func (e *FailedError) Unwrap() []error {
	errs := []error{ErrAuditFailed}
	if slices.Contains(e.FailedChecks, "wasm_module_complexity") {
		errs = append(errs, ErrModuleTooComplex)
	}
	return errs
}
