package audit

import (
	"slices"

	"github.com/palyra-go/palyra/host/manifest"
)

// Status is the outcome of one check, as Palyra spells it.
type Status string

// The statuses. Only StatusFail makes a report fail.
const (
	StatusPass    Status = "pass"
	StatusWarn    Status = "warn"
	StatusFail    Status = "fail"
	StatusSkipped Status = "skipped"
)

// Severity is the severity of one check, as Palyra spells it: info for a
// pass or a skipped check, warning for a warn, error for a fail.
type Severity string

// The severities.
const (
	SeverityInfo    Severity = "info"
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
)

// Check is one finding of the audit (Palyra's SkillSecurityAuditCheck).
// CheckID is stable; the package documentation lists every id. Message is
// for people: a failed check's message names the module, import, field or
// capability at fault, and becomes a quarantine reason. Details hold
// machine-readable facts; per-module checks always have
// details["module_path"].
type Check struct {
	CheckID  string         `json:"check_id"`
	Status   Status         `json:"status"`
	Severity Severity       `json:"severity"`
	Message  string         `json:"message"`
	Details  map[string]any `json:"details,omitempty"`
}

// Policy is Palyra's SkillSecurityAuditPolicy as the audit applied it:
// the two limits come from Options (or their defaults), the two allow flags
// from the operator profile's [capabilities] section.
type Policy struct {
	MaxModuleBytes            uint64 `json:"max_module_bytes"`
	MaxExportedFunctions      int    `json:"max_exported_functions"`
	AllowDeviceCapabilities   bool   `json:"allow_device_capabilities"`
	AllowWildcardCapabilities bool   `json:"allow_wildcard_capabilities"`
}

// Report is the result of Audit, in the shape of Palyra's
// SkillSecurityAuditReport. Passed is true when no check failed;
// ShouldQuarantine is its negation; QuarantineReasons are the messages of
// the failed checks in check order; VulnerabilityScan repeats the
// vulnerability_feed_hook check (the deny feed). Slices are never nil, so JSON shows [].
//
// A Report is plain data and safe for concurrent reads. Its JSON encoding
// is deterministic: the same input gives the same bytes.
type Report struct {
	SkillID           string             `json:"skill_id"`
	Version           string             `json:"version"`
	Publisher         string             `json:"publisher"`
	Accepted          bool               `json:"accepted"`
	Passed            bool               `json:"passed"`
	ShouldQuarantine  bool               `json:"should_quarantine"`
	TrustDecision     string             `json:"trust_decision"`
	PayloadSHA256     string             `json:"payload_sha256"`
	GeneratedAtUnixMS int64              `json:"generated_at_unix_ms"`
	Policy            Policy             `json:"policy"`
	ManifestWarnings  []manifest.Warning `json:"manifest_warnings"`
	Checks            []Check            `json:"checks"`
	QuarantineReasons []string           `json:"quarantine_reasons"`
	VulnerabilityScan Check              `json:"vulnerability_scan"`
}

// FailedChecks returns the ids of the failed checks, in check order
// (Palyra's security_scan.failed_checks). A per-module id appears once per
// module that failed it. The result is never nil.
func (r *Report) FailedChecks() []string { return r.idsWith(StatusFail) }

// WarningChecks returns the ids of the checks with status warn, in check
// order (Palyra's security_scan.warning_checks). The result is never nil.
func (r *Report) WarningChecks() []string { return r.idsWith(StatusWarn) }

func (r *Report) idsWith(s Status) []string {
	ids := []string{}
	for _, c := range r.Checks {
		if c.Status == s {
			ids = append(ids, c.CheckID)
		}
	}
	return ids
}

// Check returns the first check with the given id, and false when there is
// none. For a per-module id use Checks and details["module_path"].
func (r *Report) Check(id string) (Check, bool) {
	for _, c := range r.Checks {
		if c.CheckID == id {
			return c, true
		}
	}
	return Check{}, false
}

// Err returns nil when the report passed, else a *FailedError wrapping
// ErrAuditFailed whose message lists the quarantine reasons.
func (r *Report) Err() error {
	if r.Passed {
		return nil
	}
	return &FailedError{
		SkillID:      r.SkillID,
		Version:      r.Version,
		FailedChecks: r.FailedChecks(),
		Reasons:      slices.Clone(r.QuarantineReasons),
	}
}
