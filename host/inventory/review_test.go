package inventory

import (
	"context"
	"errors"
	"testing"
)

// TestApproveReview checks the review hold: PutSkill records it and reads
// it back (also on a replace), ApproveReview needs a version, a reason and
// a pending review, clears the hold and journals skill.review_approved with
// the principal and reason, and a second approval is ErrNoReviewPending.
func TestApproveReview(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	rec := record("acme.gen", "1.0.0")
	rec.ReviewPending = true
	install(t, db, rec)
	install(t, db, record("acme.plain", "1.0.0"))
	if e, err := db.Skill(ctx, "acme.gen", "1.0.0"); err != nil || !e.ReviewPending {
		t.Fatalf("review_pending after put: %v, %v", e.ReviewPending, err)
	}
	approve := func(id, version, reason, principal string) (int64, error) {
		var id64 int64
		err := db.Update(ctx, func(tx *Tx) error {
			var err error
			id64, err = tx.ApproveReview(id, version, reason, principal)
			return err
		})
		return id64, err
	}
	for _, tt := range []struct {
		name, id, version, reason, principal string
		want                                 error
	}{
		{"no version", "acme.gen", "", "ok", "alice", ErrInvalidArgument},
		{"blank reason", "acme.gen", "1.0.0", " ", "alice", ErrInvalidArgument},
		{"no principal", "acme.gen", "1.0.0", "ok", "", ErrInvalidArgument},
		{"unknown version", "acme.gen", "2.0.0", "ok", "alice", ErrNotFound},
		{"not pending", "acme.plain", "1.0.0", "ok", "alice", ErrNoReviewPending},
	} {
		if _, err := approve(tt.id, tt.version, tt.reason, tt.principal); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if e, _ := db.Skill(ctx, "acme.gen", "1.0.0"); !e.ReviewPending {
		t.Fatal("a refused approval cleared the hold")
	}
	evID, err := approve("acme.gen", "1.0.0", "checklist read", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := db.Skill(ctx, "acme.gen", "1.0.0"); e.ReviewPending {
		t.Fatal("the hold stays after the approval")
	}
	evs, err := db.Events(ctx, EventFilter{SkillID: "acme.gen", AfterID: evID - 1})
	if err != nil || len(evs) != 1 || evs[0].Kind != EventReviewApproved || evs[0].Principal != "alice" ||
		evs[0].Reason != "checklist read" || evs[0].Version != "1.0.0" || evs[0].Status != "" {
		t.Fatalf("journal: %+v, %v", evs, err)
	}
	if _, err := approve("acme.gen", "1.0.0", "again", "alice"); !errors.Is(err, ErrNoReviewPending) {
		t.Fatalf("second approval: %v", err)
	}
	// A replace writes the hold of the new record.
	err = db.Update(ctx, func(tx *Tx) error { return tx.PutSkill(rec, PutOptions{Replace: true}) })
	if e, _ := db.Skill(ctx, "acme.gen", "1.0.0"); err != nil || !e.ReviewPending {
		t.Fatalf("replace with review_pending: %v, %v", e.ReviewPending, err)
	}
}
