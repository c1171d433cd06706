package inventory

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func testApproval(id string, now time.Time) Approval {
	return Approval{
		ID: id, SkillID: "Acme.Echo", Version: "1.0.0", ToolID: "echo",
		Input: []byte(`{"a":1}`), InputSHA256: strings.Repeat("ab", 32),
		Reasons:     []ApprovalReason{{Kind: "manifest", Detail: "requires_approval"}},
		RequestedBy: "alice", RequestedAt: now, ExpiresAt: now.Add(time.Minute),
	}
}

// TestApprovalLifecycle walks approvals through every transition and
// checks the state guards and the journal.
func TestApprovalLifecycle(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	db := openTest(t, WithClock(clk.Now))
	now := clk.Now()
	if err := db.Update(ctx, func(tx *Tx) error {
		for _, id := range []string{"a1", "a2", "a3", "a4"} {
			if err := tx.PutApproval(testApproval(id, now)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Approval(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if got.SkillID != "acme.echo" || got.State != ApprovalPending || string(got.Input) != `{"a":1}` || len(got.Reasons) != 1 || !got.ExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("stored approval = %+v", got)
	}
	steps := []struct {
		name      string
		fn        func(tx *Tx) (Approval, error)
		wantState ApprovalState
		wantErr   error
	}{
		{"approve a1", func(tx *Tx) (Approval, error) { return tx.DecideApproval("a1", true, "ok", "bob", now) }, ApprovalApproved, nil},
		{"approve a1 again", func(tx *Tx) (Approval, error) { return tx.DecideApproval("a1", false, "no", "bob", now) }, ApprovalApproved, ErrApprovalState},
		{"use a1", func(tx *Tx) (Approval, error) { return tx.UseApproval("a1", "alice", now) }, ApprovalUsed, nil},
		{"use a1 twice", func(tx *Tx) (Approval, error) { return tx.UseApproval("a1", "alice", now) }, ApprovalUsed, ErrApprovalState},
		{"deny a2", func(tx *Tx) (Approval, error) { return tx.DecideApproval("a2", false, "too risky", "bob", now) }, ApprovalDenied, nil},
		{"use denied a2", func(tx *Tx) (Approval, error) { return tx.UseApproval("a2", "alice", now) }, ApprovalDenied, ErrApprovalState},
		{"use pending a3", func(tx *Tx) (Approval, error) { return tx.UseApproval("a3", "alice", now) }, ApprovalPending, ErrApprovalState},
		{"unknown", func(tx *Tx) (Approval, error) { return tx.DecideApproval("nope", true, "", "bob", now) }, "", ErrApprovalNotFound},
	}
	for _, s := range steps {
		var a Approval
		err := db.Update(ctx, func(tx *Tx) error {
			var err error
			a, err = s.fn(tx)
			return err
		})
		if !errors.Is(err, s.wantErr) || (s.wantErr == nil) != (err == nil) {
			t.Fatalf("%s: err = %v, want %v", s.name, err, s.wantErr)
		}
		if a.State != s.wantState {
			t.Fatalf("%s: state = %q, want %q", s.name, a.State, s.wantState)
		}
	}
	// a3 is pending and a4 too: at expiry both become expired.
	var expired []Approval
	if err := db.Update(ctx, func(tx *Tx) error {
		var err error
		expired, err = tx.ExpireApprovals(now.Add(time.Minute))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(expired) != 2 || expired[0].State != ApprovalExpired {
		t.Fatalf("expired = %+v, want a3 and a4", expired)
	}
	pending, err := db.Approvals(ctx, ApprovalFilter{State: ApprovalPending})
	if err != nil || len(pending) != 0 {
		t.Fatalf("pending after expiry = %v, %v", pending, err)
	}
	evs, err := db.Events(ctx, EventFilter{SkillID: "acme.echo"})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, string(e.Kind)+"/"+e.Principal)
	}
	want := "skill.approval_requested/alice skill.approval_requested/alice skill.approval_requested/alice skill.approval_requested/alice " +
		"skill.approval_approved/bob skill.approval_used/alice skill.approval_denied/bob skill.approval_expired/system:approvals skill.approval_expired/system:approvals"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("journal = %s\nwant      %s", strings.Join(kinds, " "), want)
	}
	var n int64
	if err := db.Update(ctx, func(tx *Tx) error {
		var err error
		n, err = tx.PruneApprovals(now.Add(time.Second))
		return err
	}); err != nil || n != 4 {
		t.Fatalf("prune = %d, %v; want 4 (used, denied, 2 expired)", n, err)
	}
}

func TestApprovalsDue(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	now := time.UnixMilli(1_700_000_000_000).UTC()
	due := func(at time.Time) bool {
		t.Helper()
		d, err := db.ApprovalsDue(ctx, at, at.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if due(now) {
		t.Fatal("an empty table is due")
	}
	if err := db.Update(ctx, func(tx *Tx) error { return tx.PutApproval(testApproval("d1", now)) }); err != nil {
		t.Fatal(err)
	}
	if due(now) || !due(now.Add(time.Minute)) {
		t.Fatal("a pending approval is due before its expiry, or not at it")
	}
	if err := db.Update(ctx, func(tx *Tx) error {
		_, err := tx.DecideApproval("d1", false, "no", "bob", now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if due(now.Add(time.Minute)) || !due(now.Add(time.Hour+time.Millisecond)) {
		t.Fatal("a denied approval is not due until its retention ends")
	}
}
