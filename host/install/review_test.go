package install

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/inventory"
)

// TestReviewPending installs builder output awaiting review and checks the
// whole hold: quarantined with review_pending, enable refused even with an
// override, approval (reason required) journaled with its principal and
// reason, then the enable checks; approving twice is refused.
func TestReviewPending(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	opts := InstallOptions{TrustedPublishers: trustAcme, AcceptCapabilities: true}

	for _, status := range []string{"pending", "-", "Rejected"} {
		id := "rev." + strings.ToLower(strings.Trim(status, "-")) + "x"
		res, err := in.Install(ctx, build(t, skillSpec{id: id, version: "1.0.0", builder: status}), opts)
		if !errors.Is(err, ErrReviewPending) || res == nil || res.Status != inventory.StatusQuarantined ||
			!slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, "review_pending") }) {
			t.Fatalf("install review_status %q: %+v, %v; want quarantined, review_pending", status, res, err)
		}
		e, err := in.db.Skill(ctx, id, "1.0.0")
		if err != nil || !e.ReviewPending {
			t.Fatalf("review_status %q: entry review_pending %v, %v", status, e.ReviewPending, err)
		}
	}
	for _, status := range []string{"approved", " SIGNED "} {
		res, err := in.Install(ctx, build(t, skillSpec{id: "rev.ok" + strings.ToLower(strings.TrimSpace(status)), version: "1.0.0", builder: status}), opts)
		if err != nil || res.Status != inventory.StatusActive {
			t.Fatalf("install review_status %q: %+v, %v; want active", status, res, err)
		}
	}

	if _, err := in.Enable(ctx, "rev.pendingx", "1.0.0", EnableOptions{Override: true}); !errors.Is(err, ErrReviewPending) ||
		!strings.Contains(err.Error(), "palyra skills review approve") {
		t.Fatalf("enable with override: %v; want review_pending naming the approve command", err)
	}
	if _, err := in.ApproveReview(ctx, "rev.pendingx", "1.0.0", "  ", "alice"); !errors.Is(err, inventory.ErrInvalidArgument) {
		t.Fatalf("approve without a reason: %v", err)
	}
	if _, err := in.ApproveReview(ctx, "rev.okapproved", "1.0.0", "ok", "alice"); !errors.Is(err, inventory.ErrNoReviewPending) {
		t.Fatalf("approve of a reviewed version: %v", err)
	}
	res, err := in.ApproveReview(ctx, "rev.pendingx", "1.0.0", "read the harness", "alice")
	if err != nil || res.Status != inventory.StatusActive || !res.Changed || res.Principal != "alice" {
		t.Fatalf("approve: %+v, %v", res, err)
	}
	e, err := in.db.Skill(ctx, "rev.pendingx", "1.0.0")
	if err != nil || e.ReviewPending || e.Status.Status != inventory.StatusActive {
		t.Fatalf("after approval: %+v, %v", e, err)
	}
	evs, err := in.db.Events(ctx, inventory.EventFilter{SkillID: "rev.pendingx"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs, func(ev inventory.Event) bool {
		return ev.Kind == inventory.EventReviewApproved && ev.Principal == "alice" && ev.Reason == "read the harness" && ev.Version == "1.0.0"
	}) {
		t.Fatalf("journal has no skill.review_approved by alice: %+v", evs)
	}
	if _, err := in.ApproveReview(ctx, "rev.pendingx", "1.0.0", "again", "alice"); !errors.Is(err, inventory.ErrNoReviewPending) {
		t.Fatalf("second approval: %v", err)
	}
	// A reinstall of the approved version is a new admission: held again.
	if res, err := in.Install(ctx, build(t, skillSpec{id: "rev.pendingx", version: "1.0.0", builder: "pending", asset: []byte("x")}),
		InstallOptions{TrustedPublishers: trustAcme, AcceptCapabilities: true, Force: true}); !errors.Is(err, ErrReviewPending) || res.Status != inventory.StatusQuarantined {
		t.Fatalf("forced reinstall of a pending build: %+v, %v", res, err)
	}
}

// TestReviewPendingFailsChecksToo: a pending version that also fails its
// audit keeps the audit's code at install; approving it clears the review
// hold and journals it, but the enable checks still refuse it, and it
// stays quarantined.
func TestReviewPendingFailsChecksToo(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	opts := InstallOptions{TrustedPublishers: trustAcme, AcceptCapabilities: true}
	res, err := in.Install(ctx, build(t, skillSpec{id: "rev.bad", version: "1.0.0", module: "wasi_path_open", builder: "pending"}), opts)
	if !errors.Is(err, ErrAuditFailed) || res.Status != inventory.StatusQuarantined ||
		!slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, "review_pending") }) {
		t.Fatalf("install: %+v, %v", res, err)
	}
	if _, err := in.ApproveReview(ctx, "rev.bad", "", "looked fine", "bob"); !errors.Is(err, ErrAuditFailed) {
		t.Fatalf("approve of a version failing its audit: %v; want audit_failed", err)
	}
	e, err := in.db.Skill(ctx, "rev.bad", "1.0.0")
	if err != nil || e.ReviewPending || e.Status.Status != inventory.StatusQuarantined {
		t.Fatalf("after approval: review %v, status %+v, %v", e.ReviewPending, e.Status, err)
	}
}

// TestReviewPendingUpgradeHeldBack: an upgrade to a pending version does
// not displace the active one; it is held back with code review_pending
// until approved, and the approval makes it current.
func TestReviewPendingUpgradeHeldBack(t *testing.T) {
	ctx := context.Background()
	in := open(t, t.TempDir(), nil)
	opts := InstallOptions{TrustedPublishers: trustAcme, AcceptCapabilities: true}
	if _, err := in.Install(ctx, build(t, skillSpec{id: "rev.up", version: "1.0.0"}), opts); err != nil {
		t.Fatal(err)
	}
	res, err := in.Install(ctx, build(t, skillSpec{id: "rev.up", version: "1.1.0", builder: "pending"}), opts)
	if !errors.Is(err, ErrReviewPending) || res.Current || res.HeldBack == nil || res.HeldBack.Code != "review_pending" {
		t.Fatalf("upgrade to a pending version: %+v, %v", res, err)
	}
	cur, err := in.db.Skill(ctx, "rev.up", "")
	if err != nil || cur.Version != "1.0.0" || cur.Status.Status != inventory.StatusActive {
		t.Fatalf("current after the held-back upgrade: %+v, %v", cur, err)
	}
	st, err := in.ApproveReview(ctx, "rev.up", "1.1.0", "reviewed", "carol")
	if err != nil || !st.Current || st.PreviousCurrent != "1.0.0" || st.Status != inventory.StatusActive {
		t.Fatalf("approve the held-back version: %+v, %v", st, err)
	}
}
