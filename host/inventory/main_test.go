package inventory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine outlives the tests: every test
// closes its DB, which stops database/sql's connection opener.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.UnixMilli(1_700_000_000_000).UTC()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openTest opens a fresh database in a temporary directory and closes it
// when the test ends.
func openTest(t testing.TB, opts ...Option) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "state", "inventory.db"), opts...)
}

func openAt(t testing.TB, path string, opts ...Option) *DB {
	t.Helper()
	db, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// record returns a valid record of id at version.
func record(id, version string) Record {
	return Record{
		SkillID:        id,
		Version:        version,
		Publisher:      "acme",
		ArtifactSHA256: hexSum("artifact " + id + version),
		PayloadSHA256:  hexSum("payload " + id + version),
		SignatureKeyID: "ed25519:0123abcd",
		TrustDecision:  "allowlisted",
		SourceKind:     SourceLocalArtifact,
		SourceRef:      "/tmp/" + id + "-" + version + ".palyra-skill",
		InstallDir:     "skills/" + id + "/" + version,
		Manifest:       []byte(`{"skill_id":"` + id + `","version":"` + version + `"}`),
		ToolCount:      1,
	}
}

// install stores rec and an active status row with an installed event, as
// the installer does.
func install(t testing.TB, db *DB, rec Record) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *Tx) error {
		if err := tx.PutSkill(rec, PutOptions{}); err != nil {
			return err
		}
		return tx.SetStatus(StatusChange{
			SkillID: rec.SkillID, Version: rec.Version, Status: StatusActive,
			Principal: "user:test", Kind: EventInstalled,
		})
	})
	if err != nil {
		t.Fatalf("install %s %s: %v", rec.SkillID, rec.Version, err)
	}
}

func count(t testing.TB, db *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
