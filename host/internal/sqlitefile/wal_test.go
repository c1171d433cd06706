package sqlitefile_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/palyra-go/palyra/host/internal/sqlitefile"
)

func open(t *testing.T, path string, busy time.Duration) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", sqlitefile.DSN(path, busy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestEnsureWAL: a new file is switched once, under the given lock; a file
// already in WAL mode takes no lock.
func TestEnsureWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	if err := sqlitefile.Create(path); err != nil {
		t.Fatal(err)
	}
	db := open(t, path, time.Second)
	locks := 0
	locked := func(fn func() error) error { locks++; return fn() }
	for range 2 {
		if err := sqlitefile.EnsureWAL(ctx, db, locked); err != nil {
			t.Fatal(err)
		}
	}
	if locks != 1 {
		t.Errorf("took the lock %d times, want once (for the new file only)", locks)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q, %v", mode, err)
	}
	lockErr := errors.New("lock refused")
	fresh := filepath.Join(t.TempDir(), "fresh.sqlite")
	if err := sqlitefile.EnsureWAL(ctx, open(t, fresh, time.Second), func(func() error) error { return lockErr }); !errors.Is(err, lockErr) {
		t.Errorf("EnsureWAL with a failing lock = %v", err)
	}
}

// TestIsBusy: a write blocked by another connection's write transaction is
// busy; other errors are not.
func TestIsBusy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a := open(t, path, time.Second)
	if _, err := a.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	conn, err := a.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, `ROLLBACK`)
	b := open(t, path, time.Millisecond)
	_, err = b.Exec(`INSERT INTO t VALUES (1)`)
	if err == nil || !sqlitefile.IsBusy(err) {
		t.Errorf("a write while another connection writes: %v, IsBusy false", err)
	}
	if _, err := b.Exec(`SELECT * FROM nope`); err == nil || sqlitefile.IsBusy(err) {
		t.Errorf("a missing table: %v, want an error that is not busy", err)
	}
	if sqlitefile.IsBusy(nil) || sqlitefile.IsBusy(errors.New("x")) {
		t.Error("IsBusy of nil or a plain error")
	}
}
