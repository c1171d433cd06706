package storage

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine outlives the tests: every test
// closes its Store, which stops database/sql's connection opener.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openTest opens a fresh store in a temporary directory and closes it when
// the test ends.
func openTest(t testing.TB) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "storage", "storage.db"))
}

func openAt(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// mustPut stores value under key with no quota.
func mustPut(t testing.TB, s *Store, skill, key, value string) {
	t.Helper()
	if err := s.Put(context.Background(), skill, key, []byte(value), Quota{}); err != nil {
		t.Fatalf("Put(%s, %q): %v", skill, key, err)
	}
}

// summed recomputes a skill's usage from its entries, bypassing the usage
// table.
func summed(t testing.TB, s *Store, skill string) Usage {
	t.Helper()
	var u Usage
	err := s.db.QueryRow(`SELECT count(*), COALESCE(SUM(length(CAST(key AS BLOB)) + length(value)), 0)
FROM entries WHERE skill_id = ?`, skill).Scan(&u.Keys, &u.Bytes)
	if err != nil {
		t.Fatalf("sum usage of %s: %v", skill, err)
	}
	return u
}
