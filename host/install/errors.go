package install

import (
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
)

// The sentinels of the package. Every error an Installer returns wraps one
// of them, or a sentinel of the package that decided (host/artifact,
// host/trust, host/manifest, host/inventory), so callers branch with
// errors.Is and report errcode.Of(err), never the text.
//
// Several are re-exported from the package that owns the code, so that a
// caller of install needs no other import to branch on them.
var (
	// ErrAlreadyInstalled: the (skill id, version) is installed and
	// InstallOptions.Force was not set. Code already_installed.
	ErrAlreadyInstalled = inventory.ErrAlreadyInstalled
	// ErrNotFound: no installed version matches the skill id (and version).
	// Code skill_not_found.
	ErrNotFound = inventory.ErrNotFound
	// ErrCapabilityEscalation: the new version would be granted more than
	// the current one and InstallOptions.AcceptCapabilities was not set.
	// The error is a *policy.EscalationError listing the diff. Code
	// capability_escalation.
	ErrCapabilityEscalation = policy.ErrCapabilityEscalation
	// ErrPolicyViolation: the manifest requests something outside the
	// operator profile. Install keeps the skill, quarantined, and returns
	// the result with this error; Enable refuses with it. Code
	// policy_violation.
	ErrPolicyViolation = policy.ErrViolation
	// ErrAuditFailed: the static audit failed. Install keeps the skill,
	// quarantined, and returns the result with this error; Enable refuses
	// with it. Code audit_failed.
	ErrAuditFailed = audit.ErrAuditFailed

	// ErrOverrideRequired: Enable of a quarantined version without
	// EnableOptions.Override.
	ErrOverrideRequired = errcode.New("override_required", "enabling a quarantined skill needs an override")
	// ErrReviewPending: the version is dynamic tool builder output awaiting
	// review (manifest [builder] review_status neither "approved" nor
	// "signed"). Install keeps it quarantined with this code, and Enable
	// refuses it, until an operator approves the review (ApproveReview).
	ErrReviewPending = errcode.New("review_pending", "skill version is awaiting review")
	// ErrQuarantined: Disable of a quarantined version. A quarantine is
	// left only through Enable with an override, never through disable.
	ErrQuarantined = errcode.New("skill_quarantined", "skill is quarantined")
	// ErrLocked: another operation held the skill's lock until the context
	// ended or Config.LockTimeout passed. The error also wraps the
	// context's error when that ended the wait.
	ErrLocked = errcode.New("install_locked", "skill is locked by another operation")
	// ErrInstalledArtifact: the installed artifact of a version is missing,
	// or its SHA-256 is not the one recorded at install (changed on disk).
	ErrInstalledArtifact = errcode.New("installed_artifact_invalid", "installed artifact missing or modified")
	// ErrReservedEntry: the artifact has an entry whose path the install
	// directory reserves for itself (artifact.palyra-skill,
	// install-metadata.json), or one that clashes with another entry
	// (a file "a" and a file "a/b").
	ErrReservedEntry = errcode.New("reserved_artifact_entry", "artifact entry clashes with the install layout")
	// ErrInvalidArgument: a skill id, version, principal or option given
	// to the Installer is not usable.
	ErrInvalidArgument = errcode.New("install_invalid_argument", "invalid install argument")
	// ErrPrecompileFailed: Config.Precompile failed on a module of the
	// artifact. Install keeps the skill, quarantined with the reason
	// "precompile_failed: <message>", and returns the result with this
	// error. Code precompile_failed.
	ErrPrecompileFailed = errcode.New("precompile_failed", "precompiling a module failed")
	// ErrCompileBudgetExceeded: Config.Precompile failed because compiling
	// a module ran past its CPU-time or memory cap (the hook's error wraps
	// it). Install keeps the skill, quarantined with the reason
	// "compile_budget_exceeded: <module>: <message naming the cap>", and
	// returns an error with this code instead of precompile_failed.
	ErrCompileBudgetExceeded = errcode.ErrCompileBudgetExceeded
	// ErrClosed: the Installer was closed.
	ErrClosed = errcode.New("installer_closed", "installer is closed")
)
