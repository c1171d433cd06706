package install

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
)

// admission is the verdict on one verified artifact: its audit report and
// policy decision, and whether it must be quarantined.
type admission struct {
	verify   *artifact.VerifyReport
	report   *audit.Report
	decision *policy.Decision
	// reasons are the quarantine reasons: the audit's failed checks (which
	// include one per policy violation). Empty when admitted.
	reasons []string
	// err is nil when admitted, else an error wrapping ErrAuditFailed
	// (some check other than the policy's failed) or ErrPolicyViolation
	// (only policy checks failed).
	err error
	// review is set when the manifest is builder output awaiting review:
	// the version is quarantined (reasons has review_pending) and recorded
	// as inventory.Record.ReviewPending.
	review bool
}

// holdForReview marks a when m is builder output awaiting review: the
// review_pending reason joins the quarantine reasons, and a version that
// passed every other check is quarantined with ErrReviewPending.
func (a *admission) holdForReview(m *manifest.Manifest) {
	if !m.RequiresReview() {
		return
	}
	a.review = true
	status := strings.TrimSpace(m.Builder.ReviewStatus)
	if status == "" {
		status = "unset"
	}
	a.reasons = append(a.reasons, fmt.Sprintf("review_pending: builder output with review_status %q awaits an operator's review", status))
	if a.err == nil {
		a.err = fmt.Errorf("%w: review_status %q; approve it with palyra skills review approve %s --version %s --reason ...",
			ErrReviewPending, status, m.SkillID, m.Version)
	}
}

// quarantine reports whether the artifact must be quarantined.
func (a *admission) quarantine() bool { return a.err != nil }

// evaluate audits a verified artifact (artifactSHA256: the hex SHA-256
// of its file) against the installed deny feed and evaluates it against
// the operator profile.
func (in *Installer) evaluate(ctx context.Context, vr *artifact.VerifyReport, artifactSHA256 string) (*admission, error) {
	prof := in.Policy()
	denyFeed, feedErr, err := in.denyFeed(ctx)
	if err != nil {
		return nil, err
	}
	rep, err := audit.Audit(ctx, audit.Input{
		Inspection:     vr.Inspection,
		TrustDecision:  vr.TrustDecision,
		Profile:        prof,
		Options:        audit.Options{Now: in.now},
		ArtifactSHA256: artifactSHA256,
		DenyFeed:       denyFeed,
		DenyFeedError:  feedErr,
	})
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	dec, err := prof.Evaluate(vr.Inspection.Manifest)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	a := &admission{verify: vr, report: rep, decision: dec}
	a.reasons = slices.Clone(rep.QuarantineReasons)
	for _, r := range dec.Reasons() { // already among the audit's, normally
		if !slices.Contains(a.reasons, r) {
			a.reasons = append(a.reasons, r)
		}
	}
	nonPolicy := slices.ContainsFunc(rep.FailedChecks(), func(id string) bool {
		return !strings.HasPrefix(id, "policy:")
	})
	switch {
	case nonPolicy:
		a.err = rep.Err()
	case !dec.Allowed():
		a.err = dec.Err()
	case !rep.Passed: // a policy check failed that the decision does not show
		a.err = rep.Err()
	}
	return a, nil
}

// denyFeed loads the installed deny feed (<state>/feed/deny-feed.json),
// verified against the trust store as it is now: nil when none is
// installed. A feed that cannot be used (corrupt, or no longer signed by a
// key the store allowlists for its issuer) is returned as feedErr, which
// fails the audit's vulnerability_feed_hook (fail closed); err is set
// only when the trust store itself cannot be read, or ctx is done.
func (in *Installer) denyFeed(ctx context.Context) (f *feed.Signed, feedErr, err error) {
	store, err := in.trust.Load(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("install: %w", err)
	}
	loaded, lerr := feed.Load(ctx, in.layout.DenyFeed(), store)
	switch {
	case lerr != nil && ctx.Err() != nil:
		return nil, nil, fmt.Errorf("install: %w", lerr)
	case lerr != nil:
		return nil, lerr, nil
	case loaded == nil:
		return nil, nil, nil
	}
	return loaded.Signed, nil, nil
}

// DenyFeedPath is the installed deny feed of the state directory
// (statedir.Layout.DenyFeed).
func (in *Installer) DenyFeedPath() string { return in.layout.DenyFeed() }

// verifyBytes inspects data and decides trust with decider.
func (in *Installer) verifyBytes(ctx context.Context, data []byte, decider artifact.TrustDecider, allowTOFU bool) (*artifact.VerifyReport, error) {
	ins, err := artifact.Inspect(data)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	vr, err := ins.Verify(ctx, artifact.VerifyOptions{Trust: decider, AllowTOFU: allowTOFU, Now: in.now})
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	return vr, nil
}

// memoryDecider returns a trust decider over a copy of the trust store in
// memory: a TOFU pin it makes is not saved. Install decides with it first,
// so that a refused install pins nothing, and persists the pin just before
// it writes anything.
func (in *Installer) memoryDecider(ctx context.Context) (artifact.TrustDecider, error) {
	s, err := in.trust.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	return s.Decider(), nil
}

// decisionOf evaluates the manifest recorded with an entry under the
// current profile; nil (a skill granted nothing, so any grant of the new
// version counts as an escalation) when it cannot be decoded.
func (in *Installer) decisionOf(raw json.RawMessage) *policy.Decision {
	m, err := decodeManifest(raw)
	if err != nil {
		return nil
	}
	d, err := in.Policy().Evaluate(m)
	if err != nil {
		return nil
	}
	return d
}
