package inventory

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/internal/sqlitefile"
)

// statusOf reads skill id's current entry through db.Skill (the cached
// read) and returns its status.
func statusOf(t *testing.T, db *DB, id string) Status {
	t.Helper()
	e, err := db.Skill(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	if e.Status == nil {
		t.Fatalf("%s has no status", id)
	}
	return e.Status.Status
}

func setStatus(t *testing.T, db *DB, id string, s Status) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *Tx) error {
		return tx.SetStatus(StatusChange{SkillID: id, Status: s, Principal: "user:test"})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSkillCacheSeesEveryWriter: a status change is seen by the next
// Skill, whether this DB, another DB on the same file (what another process
// has) or a writer that bypasses DB.Update (after MaxSkillCacheAge) made it.
func TestSkillCacheSeesEveryWriter(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "inventory.db")
	db := openAt(t, path, WithClock(clk.Now))
	other := openAt(t, path)
	install(t, db, record("acme.echo", "1.0.0"))

	if got := statusOf(t, db, "acme.echo"); got != StatusActive {
		t.Fatalf("status %s, want active", got)
	}
	gen, ok := db.wlock.generation()
	if !ok {
		t.Skip("no change counter on this platform: Skill never caches")
	}
	if _, hit := db.cache.get(gen, skillKey{"acme.echo", ""}, clk.Now(), Entry.clone); !hit {
		t.Fatal("the entry was not cached")
	}

	setStatus(t, db, "acme.echo", StatusDisabled)
	if got := statusOf(t, db, "acme.echo"); got != StatusDisabled {
		t.Errorf("after this DB's write: status %s, want disabled", got)
	}

	setStatus(t, other, "acme.echo", StatusQuarantined)
	if got := statusOf(t, db, "acme.echo"); got != StatusQuarantined {
		t.Errorf("after another DB's write: status %s, want quarantined", got)
	}
	if g2, _ := db.wlock.generation(); g2 <= gen {
		t.Errorf("change counter %d after two writes, was %d", g2, gen)
	}

	// A writer outside DB.Update: the cached entry lives until its age runs
	// out.
	raw, err := sql.Open("sqlite", sqlitefile.DSN(path, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE skill_status SET status = 'active'`); err != nil {
		t.Fatal(err)
	}
	if got := statusOf(t, db, "acme.echo"); got != StatusQuarantined {
		t.Errorf("within MaxSkillCacheAge of an out-of-band write: status %s, want the cached quarantined", got)
	}
	clk.Advance(MaxSkillCacheAge)
	if got := statusOf(t, db, "acme.echo"); got != StatusActive {
		t.Errorf("after MaxSkillCacheAge: status %s, want active", got)
	}
}

// TestSkillCacheCopies: callers get copies; changing one changes neither
// the cache nor the next caller's entry.
func TestSkillCacheCopies(t *testing.T) {
	db := openTest(t)
	rec := record("acme.echo", "1.0.0")
	rec.AuditReport = json.RawMessage(`{"passed":true}`)
	rec.MissingSecrets = []SecretRef{{Scope: "skill:acme.echo", Key: "token"}}
	install(t, db, rec)
	ctx := context.Background()
	for range 2 {
		e, err := db.Skill(ctx, "acme.echo", "")
		if err != nil {
			t.Fatal(err)
		}
		if string(e.AuditReport) != `{"passed":true}` || e.MissingSecrets[0].Key != "token" || e.Status.Status != StatusActive {
			t.Fatalf("entry changed by an earlier caller: %+v", e)
		}
		e.AuditReport[2] = 'X'
		e.MissingSecrets[0].Key = "changed"
		e.Status.Status = StatusQuarantined
	}
}

// TestSkillCacheOlderCounter: a reader that saw an older counter neither
// gets nor leaves an entry.
func TestSkillCacheOlderCounter(t *testing.T) {
	var c skillCache
	now := time.Unix(100, 0)
	key := skillKey{"a", ""}
	c.get(5, key, now, Entry.clone)
	c.put(5, key, Entry{Record: Record{SkillID: "a"}}, now)
	if _, ok := c.get(4, key, now, Entry.clone); ok {
		t.Error("hit for an older counter")
	}
	c.put(4, key, Entry{Record: Record{SkillID: "stale"}}, now)
	if e, ok := c.get(5, key, now, Entry.clone); !ok || e.SkillID != "a" {
		t.Errorf("get(5) = %+v, %v after a put under an older counter", e, ok)
	}
	if _, ok := c.get(6, key, now, Entry.clone); ok {
		t.Error("hit for a newer counter")
	}
	c.put(6, key, Entry{Record: Record{SkillID: "a"}}, now)
	if _, ok := c.get(6, key, now, Entry.clone); !ok {
		t.Error("miss for an entry just put")
	}
	if _, ok := c.get(6, key, now.Add(-time.Millisecond), Entry.clone); ok {
		t.Error("hit for an entry from the future (the clock went back)")
	}
	if _, ok := c.get(6, key, now.Add(MaxSkillCacheAge), Entry.clone); ok {
		t.Error("hit for an entry MaxSkillCacheAge old")
	}
}

func TestSkillAfterClose(t *testing.T) {
	db := openTest(t)
	install(t, db, record("acme.echo", "1.0.0"))
	statusOf(t, db, "acme.echo")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Skill(context.Background(), "acme.echo", ""); err == nil {
		t.Error("Skill after Close served the cache")
	}
}

// TestSkillHead: SkillHead is Skill without the documents, from the same
// cache (a write by another DB is seen), and its status and missing
// secrets are the caller's own copies.
func TestSkillHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.db")
	db := openAt(t, path)
	other := openAt(t, path)
	rec := record("acme.echo", "1.0.0")
	rec.AuditReport = json.RawMessage(`{"passed":true}`)
	rec.MissingSecrets = []SecretRef{{Scope: "skill:acme.echo", Key: "token"}}
	install(t, db, rec)
	ctx := context.Background()
	full, err := db.Skill(ctx, "acme.echo", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // a miss, then a hit
		h, err := db.SkillHead(ctx, "acme.echo", "")
		if err != nil {
			t.Fatal(err)
		}
		if h.Manifest != nil || h.AuditReport != nil || h.Grants != nil {
			t.Fatalf("read %d: the head carries documents", i)
		}
		want := full
		want.Manifest, want.AuditReport, want.Grants = nil, nil, nil
		if !reflect.DeepEqual(h, want) {
			t.Fatalf("read %d: head %+v, want %+v", i, h, want)
		}
		h.Status.Status = StatusQuarantined
		h.MissingSecrets[0].Key = "changed"
	}
	setStatus(t, other, "acme.echo", StatusDisabled)
	if h, err := db.SkillHead(ctx, "acme.echo", ""); err != nil || h.Status.Status != StatusDisabled {
		t.Fatalf("after another DB's write: %+v, %v", h.Status, err)
	}
	if _, err := db.SkillHead(ctx, "acme.none", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown skill: %v", err)
	}
}
