package artifact

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/palyra-go/palyra/host/manifest"
)

// EventKind is the audit event kind of a successful verification.
const EventKind = "skill.artifact.verified"

// TrustDecider decides whether a publisher's key is trusted: step 12 of
// the verification order (see the package doc). Decide returns the decision
// ("allowlisted", "tofu_pinned" or "tofu_newly_pinned") or an error for
// an untrusted publisher or a key mismatch; a newly pinned key must be
// persisted by the decider or its owner. host/trust's store implements it
// through a thin adapter (see TrustDeciderFunc).
type TrustDecider interface {
	Decide(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error)
}

// TrustDeciderFunc adapts a function to TrustDecider.
type TrustDeciderFunc func(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error)

// Decide calls f.
func (f TrustDeciderFunc) Decide(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error) {
	return f(ctx, publisher, key, allowTOFU)
}

// VerifyOptions configure Verify. Trust is required: there is no
// "verified but untrusted" result.
type VerifyOptions struct {
	// Trust decides step 12. A nil Trust fails with ErrTrustRequired.
	Trust TrustDecider
	// AllowTOFU lets Trust pin the key of a publisher it has never seen.
	AllowTOFU bool
	// Now gives the verification time for the audit event; nil means
	// time.Now.
	Now func() time.Time
}

// VerifyReport is Palyra's SkillVerificationReport. It is returned only
// for an accepted artifact, so Accepted is always true.
type VerifyReport struct {
	Accepted         bool                      `json:"accepted"`
	TrustDecision    string                    `json:"trust_decision"`
	PayloadSHA256    string                    `json:"payload_sha256"`
	Manifest         *manifest.Manifest        `json:"manifest"`
	ManifestWarnings []manifest.Warning        `json:"manifest_warnings"`
	CapabilityGrants manifest.CapabilityGrants `json:"capability_grants"`
	PolicyBindings   []manifest.PolicyBinding  `json:"policy_bindings"`
	AuditEvent       AuditEvent                `json:"audit_event"`
	// Inspection holds the verified entries and signature, for the
	// installer; it is not part of the JSON report.
	Inspection *Inspection `json:"-"`
}

// AuditEvent is the journal record of a successful verification.
type AuditEvent struct {
	EventKind        string                   `json:"event_kind"` // always EventKind
	SkillID          string                   `json:"skill_id"`
	Publisher        string                   `json:"publisher"`
	Version          string                   `json:"version"`
	PayloadSHA256    string                   `json:"payload_sha256"`
	TrustDecision    string                   `json:"trust_decision"`
	VerifiedAtUnixMS int64                    `json:"verified_at_unix_ms"`
	PolicyBindings   []manifest.PolicyBinding `json:"policy_bindings"`
}

// Verify decodes, inspects and trust-checks the artifact in data: steps
// 1–12 of the verification order. ctx is passed to the TrustDecider and
// checked before work starts; decoding itself is bounded by the limits.
func Verify(ctx context.Context, data []byte, opts VerifyOptions) (*VerifyReport, error) {
	if err := checkVerifyStart(ctx, opts); err != nil {
		return nil, err
	}
	in, err := Inspect(data)
	if err != nil {
		return nil, err
	}
	return in.Verify(ctx, opts)
}

// Verify runs step 12 on an inspected artifact and builds the report; use
// it when the entries were already read and inspected (for example from
// an Archive), to avoid decoding twice.
func (in *Inspection) Verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	if err := checkVerifyStart(ctx, opts); err != nil {
		return nil, err
	}
	m := in.Manifest
	decision, err := opts.Trust.Decide(ctx, m.Publisher, in.PublicKey, opts.AllowTOFU)
	if err != nil {
		return nil, fmt.Errorf("artifact: trust: %w", err)
	}
	if decision == "" {
		return nil, &Error{Err: ErrTrustRequired, Detail: "trust decider returned no decision"}
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	grants := m.CapabilityGrants()
	grants.HTTPHosts = nonNil(grants.HTTPHosts)
	grants.SecretKeys = nonNil(grants.SecretKeys)
	grants.StoragePrefixes = nonNil(grants.StoragePrefixes)
	grants.Channels = nonNil(grants.Channels)
	bindings := nonNil(m.PolicyBindings())
	return &VerifyReport{
		Accepted:         true,
		TrustDecision:    decision,
		PayloadSHA256:    in.PayloadSHA256,
		Manifest:         m,
		ManifestWarnings: nonNil(in.Warnings),
		CapabilityGrants: grants,
		PolicyBindings:   bindings,
		AuditEvent: AuditEvent{
			EventKind:        EventKind,
			SkillID:          m.SkillID,
			Publisher:        m.Publisher,
			Version:          m.Version,
			PayloadSHA256:    in.PayloadSHA256,
			TrustDecision:    decision,
			VerifiedAtUnixMS: now().UnixMilli(),
			PolicyBindings:   bindings,
		},
		Inspection: in,
	}, nil
}

func checkVerifyStart(ctx context.Context, opts VerifyOptions) error {
	if opts.Trust == nil {
		return &Error{Err: ErrTrustRequired, Detail: "VerifyOptions.Trust is nil"}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("artifact: %w", err)
	}
	return nil
}
