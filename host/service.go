package host

import (
	"context"
	"encoding/json"
	"time"

	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/source"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/sdk/abi"
)

// Service is every operator verb of Palyra-Go, declared once. The local
// *Host implements it over a state directory; the daemon's Go client
// (host/daemon/client) implements it over the daemon's API. The daemon's
// HTTP and gRPC APIs, its MCP endpoint and the palyra CLI are adapters
// that translate their wire to these calls and back, and nothing else: a
// new verb is added here, on Host, on the client, and on the adapters that
// expose it.
//
// Who acts travels in the context ([WithPrincipal]); a verb that records
// a principal (install, status changes, remove, hook edits) takes it from
// there. Every error carries a stable code (errcode.Of), and errors.Is
// gives the same answer for a local error and for the same failure
// reported by a daemon.
type Service interface {
	// Install verifies, audits and admits an artifact (install or
	// quarantine). A refused capability escalation returns the result
	// with the diff and install.ErrCapabilityEscalation.
	Install(ctx context.Context, req InstallRequest) (*InstallResult, error)
	// List lists installed skill versions.
	List(ctx context.Context, req ListRequest) (*SkillList, error)
	// Info describes one installed version (the current one when
	// ref.Version is empty).
	Info(ctx context.Context, ref SkillRef) (*SkillInfo, error)
	// Verify re-verifies an installed version against the trust store.
	Verify(ctx context.Context, ref SkillRef) (*VerifyResult, error)
	// Audit re-audits an installed version.
	Audit(ctx context.Context, ref SkillRef) (*AuditResult, error)
	// Enable makes a version active after re-running verify, audit and
	// policy (Override lifts an audit-only quarantine).
	Enable(ctx context.Context, req EnableRequest) (*StatusResult, error)
	// ApproveReview approves the review of a version installed from
	// builder output awaiting review (quarantined with review_pending):
	// it records the principal and the reason (required) in the journal,
	// clears the review hold, then enables the version with Enable's
	// checks (verify, audit, policy). Enable alone refuses such a version
	// with ErrReviewPending.
	ApproveReview(ctx context.Context, req ReviewRequest) (*StatusResult, error)
	// Disable disables a version.
	Disable(ctx context.Context, req StatusRequest) (*StatusResult, error)
	// Quarantine quarantines a version with a reason.
	Quarantine(ctx context.Context, req StatusRequest) (*StatusResult, error)
	// Remove removes a version (every version when req.Version is
	// empty), and with PurgeStorage the skill's storage.
	Remove(ctx context.Context, req RemoveRequest) (*RemoveResult, error)
	// Reaudit re-audits every installed version and quarantines what now
	// fails.
	Reaudit(ctx context.Context) (*ReauditReport, error)
	// RotateTrust applies a publisher's signed key rotation statement to
	// the trust store (replay protection and clock skew checked).
	RotateTrust(ctx context.Context, req RotateTrustRequest) (*RotateTrustResult, error)
	// UpdateDenyFeed installs a signed deny feed (host/feed): it must
	// verify against the trust store (a key allowlisted for the feed's
	// issuer; no trust on first use) and be newer than the installed one.
	// Every installed version is then re-audited, and each one the feed
	// denies is quarantined with the entry's reason and reference.
	UpdateDenyFeed(ctx context.Context, req UpdateDenyFeedRequest) (*DenyFeedUpdate, error)
	// DenyFeed describes the installed deny feed: issuer, serial,
	// entries, when and by whom it was installed, and why it cannot be
	// used when it cannot.
	DenyFeed(ctx context.Context) (*DenyFeedInfo, error)
	// SetPolicy replaces the operator profile (policy.toml), live: the
	// next install, enable, re-audit and call judge by it.
	SetPolicy(ctx context.Context, req SetPolicyRequest) (*PolicyResult, error)

	// SkillConfig returns a skill's operator config (manifest [config]):
	// every key of the current version's schema and every value kept,
	// sensitive values redacted ("***" and a set flag, never the value),
	// and the keys missing or unfit.
	SkillConfig(ctx context.Context, skillID string) (*SkillConfig, error)
	// SetSkillConfig sets config values of a skill (per skill, not per
	// version), each checked against the schema of the current version
	// before any is stored (ErrConfigInvalid names the key and why);
	// sensitive values go to the vault. The next call sees them.
	SetSkillConfig(ctx context.Context, req SetConfigRequest) (*SkillConfig, error)
	// UnsetSkillConfig removes config values of a skill.
	UnsetSkillConfig(ctx context.Context, req UnsetConfigRequest) (*SkillConfig, error)

	// Call runs a tool of the current version of a skill, checked at
	// every call (status, trust, grants, input and output schemas). On a
	// failure the sidecar reported, the result comes with the error. A
	// call that needs approval does not run: it returns a result with
	// Pending set and a *PendingError (ErrApprovalPending); the same call
	// with ApprovalID runs once the approval is given (see Approval).
	Call(ctx context.Context, req CallRequest) (*CallResult, error)
	// SubmitForm delivers a form submit on an A2UI document a call
	// returned to the tool that returned it.
	SubmitForm(ctx context.Context, req SubmitRequest) (*CallResult, error)
	// RunInline runs a tool of an inline module: an unpackaged, unsigned
	// module given with the request, under the skill.toml given (or a
	// default one), with the checks of Call (grants and limits manifest ∩
	// profile, input and output schemas) and nothing installed. Refused
	// with ErrInlineNotAllowed unless the profile sets [dev] allow_inline
	// = true. A failure the sidecar reported comes with the result, as
	// with Call.
	RunInline(ctx context.Context, req InlineRunRequest) (*CallResult, error)
	// Tools lists the tools that can be called now (current, active,
	// eligible and not crashlooping versions) and a generation that
	// changes whenever that set may have changed.
	Tools(ctx context.Context) (*ToolCatalog, error)

	// Approvals lists the approvals kept (pending, and decided ones for
	// ApprovalRetention), newest first, marking the expired ones first.
	Approvals(ctx context.Context, req ApprovalsRequest) (*ApprovalList, error)
	// Approval shows one approval, with the grants of its version.
	Approval(ctx context.Context, id string) (*ApprovalInfo, error)
	// DecideApproval approves or denies a pending approval (a reason is
	// required to deny), recording the principal. An approval no longer
	// pending is refused with ErrApprovalExpired or ErrApprovalDecided.
	DecideApproval(ctx context.Context, req DecideRequest) (*ApprovalInfo, error)

	// Hooks lists the hook bindings.
	Hooks(ctx context.Context) ([]HookBinding, error)
	// BindHook adds a hook binding.
	BindHook(ctx context.Context, b HookBinding) (*HookBinding, error)
	// SetHookEnabled enables or disables a hook binding.
	SetHookEnabled(ctx context.Context, hookID string, enabled bool) (*HookBinding, error)
	// RemoveHook removes a hook binding.
	RemoveHook(ctx context.Context, hookID string) error
	// FireHooks runs the hooks bound to an event now and reports each
	// outcome and the resolution.
	FireHooks(ctx context.Context, req FireRequest) (*FireResult, error)

	// Sidecars reports the supervisor's view of every sidecar.
	Sidecars(ctx context.Context) ([]SidecarState, error)
	// SkillMetrics summarizes a skill's calls since the host opened.
	SkillMetrics(ctx context.Context, skillID string) (*SkillMetrics, error)
	// Events delivers the lifecycle and hook events to fn, in journal
	// order: those after req.After (req.After < 0: none of the past),
	// then, with req.Follow, live ones until ctx ends or the service
	// closes. An error of fn ends the stream with that error.
	Events(ctx context.Context, req EventsRequest, fn func(Event) error) error

	// Outdated lists installed skills whose source (the registry index or
	// OCI repository they were installed from) has a newer version.
	Outdated(ctx context.Context, req OutdatedRequest) (*OutdatedReport, error)
	// Update installs the newest (or the named) version of a skill from
	// its source. It shows the version change and the capability diff
	// first: a dry run changes nothing, and an escalation is refused
	// unless accepted, as with Install.
	Update(ctx context.Context, req UpdateRequest) (*UpdateResult, error)
	// Apply converges the host on a desired-state document (package
	// desired): it installs, updates and (with Prune) removes skills and
	// binds hooks; a dry run returns the plan only. A second Apply of the
	// same document changes nothing.
	Apply(ctx context.Context, req ApplyRequest) (*ApplyResult, error)

	// Cluster reports the cluster the service belongs to: its nodes, the
	// version each runs, the skills each serves, its sidecars alive, its
	// call rate and the ops-stream position it has applied. A service
	// that is not clustered is a cluster of one.
	Cluster(ctx context.Context) (*ClusterStatus, error)
}

// Compile-time check: the local host is a Service.
var _ Service = (*Host)(nil)

// Results the service shares with the packages that produce them. They are
// aliases, so an embedding app needs no import beyond host to use them.
type (
	// InstallResult is what an install did (install.InstallResult).
	InstallResult = install.InstallResult
	// SkillListing is one installed version in a list (install.Listing).
	SkillListing = install.Listing
	// SkillInfo describes one installed version (install.Info).
	SkillInfo = install.Info
	// VerifyResult is a re-verification (install.VerifyResult).
	VerifyResult = install.VerifyResult
	// AuditResult is a re-audit of one version (install.AuditResult).
	AuditResult = install.AuditResult
	// StatusResult is a status change (install.StatusResult).
	StatusResult = install.StatusResult
	// ReauditReport is a re-audit of every version (install.ReauditReport).
	ReauditReport = install.ReauditReport
	// DenyFeedInfo describes the installed deny feed
	// (install.FeedInfo).
	DenyFeedInfo = install.FeedInfo
	// DenyFeedUpdate is what a deny feed update did, with the re-audit
	// that followed (install.FeedUpdateResult).
	DenyFeedUpdate = install.FeedUpdateResult
	// TrustedKey is a publisher key given with an install
	// (install.TrustedKey).
	TrustedKey = install.TrustedKey
	// InstallSource records where an artifact came from (install.Source).
	InstallSource = install.Source
	// SourceRef names an artifact in a registry (source.Ref).
	SourceRef = source.Ref
	// HookBinding is a hook binding (hooks.Binding).
	HookBinding = hooks.Binding
	// HookOutcome is what one hook did (hooks.Outcome).
	HookOutcome = hooks.Outcome
	// HookResolution is the resolved decision of fired hooks
	// (hooks.Resolution).
	HookResolution = hooks.Resolution
	// SidecarState is the supervisor's view of one sidecar
	// (supervisor.State).
	SidecarState = supervisor.State
	// Event is a lifecycle or hook event (events.Event).
	Event = events.Event
	// Stats are a call's resource figures (supervisor.Stats).
	Stats = supervisor.Stats
	// LogRecord is a log line a tool wrote (supervisor.LogRecord).
	LogRecord = supervisor.LogRecord
	// ToolError is the error document a tool reported
	// (supervisor.ToolError).
	ToolError = supervisor.ToolError
)

// InstallRequest is an artifact to install and how.
type InstallRequest struct {
	// Artifact is the .palyra-skill file's bytes.
	Artifact []byte `json:"-"`
	// AllowTOFU lets an unknown publisher's key be pinned on first use.
	AllowTOFU bool `json:"allow_tofu,omitempty"`
	// Force reinstalls a version that is already installed.
	Force bool `json:"force,omitempty"`
	// AcceptCapabilities accepts a capability escalation over the current
	// version.
	AcceptCapabilities bool `json:"accept_capabilities,omitempty"`
	// TrustedPublishers are added to the trust store's allowlist first.
	TrustedPublishers []TrustedKey `json:"trusted_publishers,omitempty"`
	// Source is recorded with the install.
	Source InstallSource `json:"source,omitzero"`
	// From fetches the artifact from a registry instead (Artifact must be
	// empty); the source recorded is then the one it came from.
	From *SourceRef `json:"from,omitempty"`
	// DryRun runs every check and returns what the install would do,
	// with Installed false, changing nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// ListRequest filters a list.
type ListRequest struct {
	SkillID         string `json:"skill_id,omitempty"`
	Publisher       string `json:"publisher,omitempty"`
	CurrentOnly     bool   `json:"current_only,omitempty"`
	QuarantinedOnly bool   `json:"quarantined_only,omitempty"`
	EligibleOnly    bool   `json:"eligible_only,omitempty"`
}

// SkillList is a list's answer.
type SkillList struct {
	// SkillsRoot is where the installed skills live.
	SkillsRoot string         `json:"skills_root"`
	Count      int            `json:"count"`
	Entries    []SkillListing `json:"entries"`
}

// SkillRef names an installed version; an empty Version means the
// current one.
type SkillRef struct {
	SkillID string `json:"skill_id"`
	Version string `json:"version,omitempty"`
}

// StatusRequest is a quarantine or disable: which version and why.
type StatusRequest struct {
	SkillID string `json:"skill_id"`
	Version string `json:"version,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

// EnableRequest is an enable: which version, why, and whether to override
// an audit-only quarantine.
type EnableRequest struct {
	SkillID  string `json:"skill_id"`
	Version  string `json:"version,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Override bool   `json:"override,omitempty"`
}

// ReviewRequest is a review approval: which version ("" = current) and
// why (required).
type ReviewRequest struct {
	SkillID string `json:"skill_id"`
	Version string `json:"version,omitempty"`
	Reason  string `json:"reason"`
}

// RemoveRequest is a remove: which version ("" = every version), whether
// to purge the skill's storage and operator config (vault entries
// included) once no version is left, and whether to
// disable the enabled hook bindings that run the skill (Force) rather than
// refuse with ErrSkillReferencedByHook when no version would be left.
type RemoveRequest struct {
	SkillID      string `json:"skill_id"`
	Version      string `json:"version,omitempty"`
	PurgeStorage bool   `json:"purge_storage,omitempty"`
	Force        bool   `json:"force,omitempty"`
}

// CallRequest is a tool call.
type CallRequest struct {
	SkillID string          `json:"skill_id"`
	ToolID  string          `json:"tool_id"`
	Input   json.RawMessage `json:"input,omitempty"`
	// Timeout, when positive, bounds the call (at most MaxCallTimeout);
	// the manifest's and the policy's limits apply either way.
	Timeout time.Duration `json:"timeout,omitempty"`
	// ApprovalID runs a call that needs approval with the approval an
	// operator gave (the id of the pending approval the same call
	// returned): it must be approved, unexpired and unused, of the same
	// skill version and tool, and for the same input (sha256 of its
	// canonical JSON); it is then used up. Ignored by a call that needs no
	// approval.
	ApprovalID string `json:"approval_id,omitempty"`
}

// MaxInputBytes caps a tool's input (sdk/ABI.md §3: the input document is
// at most 1 MiB). A larger input is refused with ErrInputTooLarge on the
// trusted side, before anything is sent to a sidecar.
const MaxInputBytes = abi.MaxInputBytes

// MaxCallTimeout caps the timeout a call request may ask for.
const MaxCallTimeout = 10 * time.Minute

// CallResult is a call's outcome: the tool's output and what the sidecar
// reported. A2UI is set when the output is an A2UI document (kept for
// form submits) or an update applied to one.
type CallResult struct {
	InvocationID string          `json:"invocation_id"`
	SkillID      string          `json:"skill_id"`
	Version      string          `json:"version"`
	ToolID       string          `json:"tool_id"`
	Output       json.RawMessage `json:"output"`
	ExitCode     int32           `json:"exit_code"`
	Stats        Stats           `json:"stats"`
	Logs         []LogRecord     `json:"logs,omitempty"`
	LogsDropped  uint32          `json:"logs_dropped,omitempty"`
	ToolError    *ToolError      `json:"tool_error,omitempty"`
	TrapCode     string          `json:"trap_code,omitempty"`
	// SidecarPID is the pid of the sidecar process that ran the call.
	SidecarPID int      `json:"sidecar_pid,omitempty"`
	A2UI       *A2UIRef `json:"a2ui,omitempty"`
	// Annotations are what run-phase hooks said about the call: their
	// annotate decisions, and the failures of fail-open hooks.
	Annotations []HookAnnotation `json:"annotations,omitempty"`
	// Preview is the text a run:before_delivery hook set with its
	// transform_preview decision, shown in place of the raw output by
	// the console and the CLI; Output is never changed by a hook.
	Preview *HookPreview `json:"preview,omitempty"`
	// Pending is set, with an error that is a *PendingError
	// (ErrApprovalPending), when the call needs approval and did not run:
	// SkillID, Version and ToolID name the call, and nothing else is set.
	Pending *PendingApproval `json:"pending,omitempty"`
}

// A2UIRef names a kept A2UI document. Patch is set when the tool replied
// with an update ({"a2ui_update": ...}) rather than a whole document: the
// document under DocumentID is now the patched one, and a client showing
// the document before applies Patch to it, and a client that shows nothing
// yet takes Document, the whole document after the update (nil when Output
// is the document).
type A2UIRef struct {
	DocumentID string          `json:"document_id"`
	Surface    string          `json:"surface"`
	Patch      json.RawMessage `json:"patch,omitempty"`
	Document   json.RawMessage `json:"document,omitempty"`
}

// SubmitRequest is a form submit on a kept A2UI document.
type SubmitRequest struct {
	DocumentID  string         `json:"document_id"`
	ComponentID string         `json:"componentId"`
	Values      map[string]any `json:"values"`
	// ApprovalID is CallRequest.ApprovalID for a submit whose tool needs
	// approval.
	ApprovalID string `json:"approval_id,omitempty"`
}

// ToolCatalog is the set of tools that can be called now.
type ToolCatalog struct {
	// Generation changes whenever the set may have changed.
	Generation string        `json:"generation"`
	Tools      []CatalogTool `json:"tools"`
}

// FireRequest fires an event's hooks now.
type FireRequest struct {
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// FireResult is what fired hooks did and the resolved decision.
type FireResult struct {
	Event      string         `json:"event"`
	Outcomes   []HookOutcome  `json:"outcomes"`
	Resolution HookResolution `json:"resolution"`
}

// EventsRequest selects the events a stream delivers.
type EventsRequest struct {
	// After is the last event id the caller saw: journal events after it
	// are replayed first. Negative means no replay.
	After int64 `json:"after"`
	// Follow keeps the stream open for live events.
	Follow bool `json:"follow"`
}

type principalKey struct{}

// DefaultPrincipal is who acts when the context names nobody.
const DefaultPrincipal = "admin"

// WithPrincipal returns ctx naming who acts; the verbs that record a
// principal take it from there.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFrom returns who acts in ctx, DefaultPrincipal when nobody is
// named.
func PrincipalFrom(ctx context.Context) string {
	if p, _ := ctx.Value(principalKey{}).(string); p != "" {
		return p
	}
	return DefaultPrincipal
}

// NamedPrincipal returns the principal ctx names and whether it names one
// (PrincipalFrom gives DefaultPrincipal either way). A remote Service
// sends only a named principal, so the far end applies its own default.
func NamedPrincipal(ctx context.Context) (string, bool) {
	p, _ := ctx.Value(principalKey{}).(string)
	return p, p != ""
}
