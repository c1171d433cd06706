package inventory

import (
	"encoding/json"
	"time"
)

// Status is the execution status of one installed skill version, the value
// of skill_status.status. Only StatusActive lets a version run.
type Status string

// The statuses. The database refuses any other value (a CHECK constraint).
const (
	// StatusActive: the version may run.
	StatusActive Status = "active"
	// StatusQuarantined: an audit or an operator blocked the version.
	StatusQuarantined Status = "quarantined"
	// StatusDisabled: an operator turned the version off.
	StatusDisabled Status = "disabled"
	// StatusCrashlooping: the supervisor stopped restarting the version's
	// sidecar after repeated crashes.
	StatusCrashlooping Status = "crashlooping"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusActive, StatusQuarantined, StatusDisabled, StatusCrashlooping:
		return true
	}
	return false
}

// eventKind returns the event a change to status s records by default.
func (s Status) eventKind() EventKind {
	switch s {
	case StatusActive:
		return EventEnabled
	case StatusQuarantined:
		return EventQuarantined
	case StatusDisabled:
		return EventDisabled
	default:
		return EventCrashlooping
	}
}

// SourceKind says where an installed artifact came from (Palyra's
// source.kind). Other values are accepted and stored as given.
type SourceKind string

// Palyra's source kinds.
const (
	SourceLocalArtifact   SourceKind = "local_artifact"
	SourceLocalRegistry   SourceKind = "local_registry"
	SourceRemoteRegistry  SourceKind = "remote_registry"
	SourceManagedArtifact SourceKind = "managed_artifact"
	// SourceOCI is an artifact pulled from an OCI registry; its reference
	// is oci://REGISTRY/REPOSITORY:TAG@sha256:DIGEST.
	SourceOCI SourceKind = "oci"
)

// SecretRef names one secret a skill's manifest asks for: a vault scope and
// a key within it.
type SecretRef struct {
	Scope string `json:"scope"`
	Key   string `json:"key"`
}

// Record is one installed (skill id, version): the row of the skills table.
// The installer fills it in and passes it to Tx.PutSkill; reads return it
// inside an Entry.
type Record struct {
	// SkillID is the manifest's skill id. It is trimmed and lower-cased on
	// the way in, and must then be an identifier ([a-z0-9._:-]).
	SkillID string `json:"skill_id"`
	// Version is MAJOR.MINOR.PATCH; it is stored in canonical form
	// ("01.2.0" becomes "1.2.0").
	Version string `json:"version"`
	// Publisher is the manifest's publisher.
	Publisher string `json:"publisher"`
	// Current marks the version that runs when a caller names no version.
	// Exactly one version of a skill is current whenever any is installed.
	// PutSkill with Current set makes this version current; a skill left
	// without a current version (its first install, or DeleteSkill of the
	// current one) gets its highest version that is not held back made
	// current. Tx.SetCurrent switches.
	Current bool `json:"current"`
	// ArtifactSHA256 is the hex SHA-256 of the .palyra-skill file.
	ArtifactSHA256 string `json:"artifact_sha256"`
	// PayloadSHA256 is the hex payload hash that the signature covers.
	PayloadSHA256 string `json:"payload_sha256"`
	// SignatureKeyID is the id of the key that signed the artifact.
	SignatureKeyID string `json:"signature_key_id"`
	// TrustDecision is the trust store's decision at install (e.g.
	// "allowlisted", "tofu_pinned").
	TrustDecision string `json:"trust_decision"`
	// SourceKind and SourceRef say where the artifact came from.
	SourceKind SourceKind `json:"source_kind"`
	SourceRef  string     `json:"source_ref"`
	// InstalledAt is when the version was installed; the zero value means
	// now. It is stored with millisecond precision.
	InstalledAt time.Time `json:"installed_at"`
	// InstallDir is where the version's files live, relative to the state
	// directory, with '/' separators (e.g. "skills/acme.echo/1.0.0").
	InstallDir string `json:"install_dir"`
	// Manifest is the parsed skill.toml as a JSON object, for info and list.
	Manifest json.RawMessage `json:"manifest"`
	// ToolCount is the number of tools the manifest declares.
	ToolCount int `json:"tool_count"`
	// AuditReport is the static audit's report as JSON (nil when absent).
	AuditReport json.RawMessage `json:"audit_report,omitempty"`
	// Grants is the effective grant set computed at install, as JSON (nil
	// when absent). Grants are recomputed before every call; this copy is a
	// record of what the operator accepted.
	Grants json.RawMessage `json:"grants,omitempty"`
	// MissingSecrets lists the secrets the manifest asks for that were not
	// in the vault at install. They do not block the install.
	MissingSecrets []SecretRef `json:"missing_secrets"`
	// ReviewPending is set on a version whose manifest is builder output
	// awaiting review (manifest.Manifest.RequiresReview): it installs
	// quarantined and stays so until an operator approves the review
	// (Tx.ApproveReview); enable refuses it meanwhile.
	ReviewPending bool `json:"review_pending,omitempty"`
}

// PutOptions tunes Tx.PutSkill.
type PutOptions struct {
	// Replace lets PutSkill overwrite an installed (skill id, version)
	// instead of failing with ErrAlreadyInstalled. A replaced version that
	// was current stays current.
	Replace bool
}

// InstallState tells whether an installed version is the current one.
type InstallState string

// The install states of Palyra's CLI inventory.
const (
	InstalledCurrent    InstallState = "installed_current"
	InstalledSuperseded InstallState = "installed_superseded"
)

// StatusRecord is one row of skill_status: the status of one skill version.
type StatusRecord struct {
	SkillID string `json:"skill_id"`
	Version string `json:"version"`
	Status  Status `json:"status"`
	// Reason says why; "" when none was given (NULL in the database).
	Reason string `json:"reason,omitempty"`
	// DetectedAt is when the condition was detected.
	DetectedAt time.Time `json:"detected_at"`
	// Principal is who set the status (e.g. "user:local", "system:daemon").
	Principal string `json:"operator_principal"`
	// CreatedAt is when the row was first written; later changes keep it.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the row was last written.
	UpdatedAt time.Time `json:"updated_at"`
}

// StatusChange asks Tx.SetStatus to set the status of one skill version.
type StatusChange struct {
	// SkillID is trimmed and lower-cased.
	SkillID string
	// Version is the version to change; "" means the current version.
	Version string
	Status  Status
	// Reason is trimmed; a blank reason is stored as NULL.
	Reason string
	// Principal is who makes the change; required.
	Principal string
	// DetectedAt is when the condition was detected; the zero value means
	// now.
	DetectedAt time.Time
	// Kind is the kind of the event the change writes. "" picks the kind
	// that matches Status (skill.enabled, skill.quarantined, skill.disabled,
	// skill.crashlooping); the installer passes EventInstalled or
	// EventUpdated so that an install is one event, not two.
	Kind EventKind
	// Details is optional JSON stored with the event.
	Details json.RawMessage
}

// Entry is an installed skill version as reads return it: its Record and
// the status row of that same version.
type Entry struct {
	Record
	// Status is the version's status row, nil when it has none (see
	// ErrNoStatus).
	Status *StatusRecord `json:"status"`
	// HeldBack is set on a version an upgrade installed without making it
	// current (Tx.HoldBack); nil otherwise.
	HeldBack *HeldBack `json:"held_back,omitempty"`
}

// HeldBack says why an installed version was not made current: an upgrade
// that failed its checks (audit, policy, precompile) while an active
// version was current is kept, quarantined, and held back, so that the
// active version keeps serving. The hold ends when the version becomes
// current (Tx.SetCurrent: an explicit enable of that version).
type HeldBack struct {
	// Code is the stable error code of why (e.g. audit_failed).
	Code string `json:"code"`
	// Reason is the message.
	Reason string `json:"reason"`
	// At is when the version was held back.
	At time.Time `json:"at"`
}

// PendingPin is a trust-on-first-use pin that belongs to a committed
// install and may not be in the trust store yet (Tx.AddPendingPin).
type PendingPin struct {
	SkillID   string `json:"skill_id"`
	Version   string `json:"version"`
	Publisher string `json:"publisher"`
	// PublicKeyHex is the publisher's Ed25519 key, lower-case hex.
	PublicKeyHex string    `json:"public_key_hex"`
	CreatedAt    time.Time `json:"created_at"`
}

// InstallState returns InstalledCurrent for the current version and
// InstalledSuperseded for the others.
func (e Entry) InstallState() InstallState {
	if e.Current {
		return InstalledCurrent
	}
	return InstalledSuperseded
}

// Filter selects entries for DB.Skills. Zero fields select everything.
type Filter struct {
	// SkillID selects one skill (trimmed and lower-cased).
	SkillID string
	// Publisher selects one publisher.
	Publisher string
	// CurrentOnly drops superseded versions.
	CurrentOnly bool
	// Status selects versions whose status row has this status; versions
	// without a status row never match a non-empty Status.
	Status Status
}

// EventKind names an event of the skill journal, "skill.<verb>".
type EventKind string

// The event kinds this package and its callers write. Other kinds of the
// form "skill.<name>" are accepted.
const (
	EventInstalled    EventKind = "skill.installed"
	EventUpdated      EventKind = "skill.updated"
	EventEnabled      EventKind = "skill.enabled"
	EventDisabled     EventKind = "skill.disabled"
	EventQuarantined  EventKind = "skill.quarantined"
	EventCrashlooping EventKind = "skill.crashlooping"
	EventRemoved      EventKind = "skill.removed"
	EventVerified     EventKind = "skill.verified"
	EventAudited      EventKind = "skill.audited"
	// EventReviewApproved records an operator's approval of a version
	// awaiting review (Tx.ApproveReview), with the principal and reason.
	EventReviewApproved EventKind = "skill.review_approved"
)

// Event is one row of the skill journal (skill_events).
type Event struct {
	// ID orders events; it is assigned by the database and never reused.
	ID int64 `json:"id"`
	// At is when the event was recorded; the zero value means now.
	At   time.Time `json:"at"`
	Kind EventKind `json:"kind"`
	// SkillID is trimmed and lower-cased.
	SkillID string `json:"skill_id"`
	// Version is "" for an event about the skill as a whole.
	Version string `json:"version,omitempty"`
	// Status is the status the event set; it is "" except on events written
	// by Tx.SetStatus, so StatusHistory is exactly the list of changes.
	Status Status `json:"status,omitempty"`
	// Reason is optional.
	Reason string `json:"reason,omitempty"`
	// Principal is who caused the event; required.
	Principal string `json:"operator_principal"`
	// Details is optional JSON.
	Details json.RawMessage `json:"details,omitempty"`
}

// Event page sizes for DB.Events.
const (
	// DefaultEventLimit is the page size when EventFilter.Limit is 0.
	DefaultEventLimit = 100
	// MaxEventLimit caps EventFilter.Limit.
	MaxEventLimit = 1000
)

// EventFilter selects events for DB.Events.
type EventFilter struct {
	// SkillID selects one skill; "" selects all.
	SkillID string
	// AfterID returns only events with a larger ID, for paging and for
	// following the journal.
	AfterID int64
	// Limit caps the page: 0 means DefaultEventLimit, and values above
	// MaxEventLimit are lowered to it.
	Limit int
}
