package inventory

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestHoldBack checks the hold of a version an upgrade did not make
// current: it is recorded and read back, the current version cannot be
// held, SetCurrent ends the hold, and when the current version is removed
// the highest version that is not held back becomes current.
func TestHoldBack(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	for _, v := range []string{"0.9.0", "1.0.0"} {
		install(t, db, record("acme.echo", v))
	}
	rec := record("acme.echo", "1.1.0")
	err := db.Update(ctx, func(tx *Tx) error {
		if err := tx.PutSkill(rec, PutOptions{}); err != nil {
			return err
		}
		if err := tx.SetCurrent("acme.echo", "1.0.0"); err != nil {
			return err
		}
		return tx.HoldBack("acme.echo", "1.1.0", "audit_failed", "wasm:imports: refused")
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := db.Skill(ctx, "acme.echo", "1.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if e.Current || e.HeldBack == nil || e.HeldBack.Code != "audit_failed" || e.HeldBack.Reason != "wasm:imports: refused" || e.HeldBack.At.IsZero() {
		t.Fatalf("1.1.0: current %v, held back %+v", e.Current, e.HeldBack)
	}
	if cur, _ := db.Skill(ctx, "acme.echo", ""); cur.Version != "1.0.0" || cur.HeldBack != nil {
		t.Fatalf("current = %s (held %+v), want 1.0.0", cur.Version, cur.HeldBack)
	}

	err = db.Update(ctx, func(tx *Tx) error { return tx.HoldBack("acme.echo", "1.0.0", "audit_failed", "x") })
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "current") {
		t.Errorf("holding back the current version: %v, want invalid argument", err)
	}
	err = db.Update(ctx, func(tx *Tx) error { return tx.HoldBack("acme.echo", "7.0.0", "audit_failed", "x") })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("holding back a missing version: %v, want not found", err)
	}

	// Removing the current version: 0.9.0 (not held) becomes current,
	// not the higher 1.1.0 that is held back.
	if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.DeleteSkill("acme.echo", "1.0.0"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, cur := versionsOf(t, db, "acme.echo"); cur != "0.9.0" {
		t.Fatalf("after removing the current version, current = %s, want 0.9.0", cur)
	}
	// With only the held version left, it becomes current and its hold ends.
	if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.DeleteSkill("acme.echo", "0.9.0"); return err }); err != nil {
		t.Fatal(err)
	}
	if e, err := db.Skill(ctx, "acme.echo", ""); err != nil || e.Version != "1.1.0" || e.HeldBack != nil {
		t.Fatalf("last version: %+v %v, want 1.1.0 current without hold", e, err)
	}

	// SetCurrent ends the hold of the version and of lower ones; an empty
	// code ends a hold too.
	install(t, db, record("acme.echo", "1.2.0"))
	err = db.Update(ctx, func(tx *Tx) error {
		if err := tx.SetCurrent("acme.echo", "1.1.0"); err != nil {
			return err
		}
		return tx.HoldBack("acme.echo", "1.2.0", "policy_violation", "")
	})
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := db.Skill(ctx, "acme.echo", "1.2.0"); e.HeldBack == nil || e.HeldBack.Reason != "" {
		t.Fatalf("1.2.0 hold = %+v", e.HeldBack)
	}
	install(t, db, record("acme.echo", "1.3.0"))
	err = db.Update(ctx, func(tx *Tx) error {
		if err := tx.SetCurrent("acme.echo", "1.1.0"); err != nil {
			return err
		}
		return tx.HoldBack("acme.echo", "1.3.0", "audit_failed", "x")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx *Tx) error { return tx.SetCurrent("acme.echo", "1.2.0") }); err != nil {
		t.Fatal(err)
	}
	if e, _ := db.Skill(ctx, "acme.echo", "1.3.0"); e.HeldBack == nil {
		t.Fatalf("SetCurrent 1.2.0 ended the hold of the higher 1.3.0")
	}
	if e, _ := db.Skill(ctx, "acme.echo", "1.2.0"); !e.Current || e.HeldBack != nil {
		t.Fatalf("after SetCurrent 1.2.0: current %v, hold %+v", e.Current, e.HeldBack)
	}
	err = db.Update(ctx, func(tx *Tx) error {
		if err := tx.HoldBack("acme.echo", "1.1.0", "audit_failed", "x"); err != nil {
			return err
		}
		return tx.HoldBack("acme.echo", "1.1.0", "", "")
	})
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := db.Skill(ctx, "acme.echo", "1.1.0"); e.HeldBack != nil {
		t.Fatalf("hold not ended by an empty code: %+v", e.HeldBack)
	}
}

// TestPendingPins checks the pending trust pins: written in a transaction
// (a rolled-back one leaves none), listed, deleted, and dropped with the
// version they belong to.
func TestPendingPins(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	key := strings.Repeat("ab", 32)
	boom := errors.New("boom")
	err := db.Update(ctx, func(tx *Tx) error {
		if err := tx.PutSkill(record("acme.b", "1.0.0"), PutOptions{}); err != nil {
			return err
		}
		if err := tx.AddPendingPin(PendingPin{SkillID: "acme.b", Version: "1.0.0", Publisher: "acme", PublicKeyHex: key}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v", err)
	}
	if ps, err := db.PendingPins(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("a rolled-back install left pending pins %v (%v)", ps, err)
	}

	for _, id := range []string{"acme.b", "acme.c"} {
		err := db.Update(ctx, func(tx *Tx) error {
			if err := tx.PutSkill(record(id, "1.0.0"), PutOptions{}); err != nil {
				return err
			}
			return tx.AddPendingPin(PendingPin{SkillID: id, Version: "1.0.0", Publisher: "acme", PublicKeyHex: strings.ToUpper(key)})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ps, err := db.PendingPins(ctx)
	if err != nil || len(ps) != 2 || ps[0].PublicKeyHex != key || ps[0].Publisher != "acme" {
		t.Fatalf("PendingPins = %+v, %v", ps, err)
	}
	if err := db.Update(ctx, func(tx *Tx) error { return tx.DeletePendingPin("acme.b", "1.0.0") }); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx *Tx) error { _, err := tx.DeleteSkill("acme.c", ""); return err }); err != nil {
		t.Fatal(err)
	}
	if ps, err := db.PendingPins(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("after delete: %+v, %v", ps, err)
	}
	err = db.Update(ctx, func(tx *Tx) error {
		return tx.AddPendingPin(PendingPin{SkillID: "acme.b", Version: "1.0.0", Publisher: "acme", PublicKeyHex: "abc"})
	})
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("short key: %v, want invalid argument", err)
	}
}
