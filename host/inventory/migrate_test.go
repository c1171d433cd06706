package inventory

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/fstest"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/sqlitefile"
)

func TestOpenFromEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "inventory.db")
	db := openAt(t, path)

	if got := db.Path(); got != path {
		t.Errorf("Path() = %q, want %q", got, path)
	}
	if runtime.GOOS != "windows" {
		files := map[string]os.FileMode{dir: 0o700, path: 0o600, path + ".lock": 0o600, path + "-wal": 0o600, path + "-shm": 0o600}
		for p, want := range files {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("mode of %s = %o, want %o", p, got, want)
			}
		}
	}

	if got, want := count(t, db, `SELECT count(*) FROM schema_migrations`), SchemaVersion(); got != want || want < 3 {
		t.Errorf("schema_migrations has %d rows, want %d (>= 3)", got, want)
	}
	for _, table := range []string{"skills", "skill_status", "skill_events", "pending_trust_pins"} {
		if count(t, db, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table) != 1 {
			t.Errorf("table %s missing", table)
		}
	}
	for _, index := range []string{
		"idx_skills_one_current", "idx_skill_status_skill_detected", "idx_skill_status_status_detected",
	} {
		if count(t, db, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, index) != 1 {
			t.Errorf("index %s missing", index)
		}
	}

	// Every pooled connection carries the pragmas; check one.
	pragmas := []struct {
		name string
		want string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"synchronous", "2"}, // FULL
		{"busy_timeout", "5000"},
	}
	for _, p := range pragmas {
		var got string
		if err := db.sql.QueryRow(`PRAGMA ` + p.name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != p.want {
			t.Errorf("PRAGMA %s = %q, want %q", p.name, got, p.want)
		}
	}
}

func TestReopenIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	install(t, db, record("acme.echo", "1.0.0"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	for range 2 {
		db := openAt(t, path)
		if got := count(t, db, `SELECT count(*) FROM schema_migrations`); got != SchemaVersion() {
			t.Errorf("schema_migrations has %d rows after reopen, want %d", got, SchemaVersion())
		}
		if _, err := db.Skill(context.Background(), "acme.echo", ""); err != nil {
			t.Errorf("skill lost on reopen: %v", err)
		}
	}
}

func TestSchemaTooNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.db")
	db := openAt(t, path)
	future := SchemaVersion() + 1
	if _, err := db.sql.Exec(`INSERT INTO schema_migrations (version, name, applied_at_unix_ms) VALUES (?, 'from_the_future', 0)`, future); err != nil {
		t.Fatal(err)
	}

	_, err := Open(context.Background(), path)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
	}
	if got := errcode.Of(err); got != "inventory_schema_too_new" {
		t.Errorf("code = %q", got)
	}
	// The refusal wrote nothing.
	if got := count(t, db, `SELECT MAX(version) FROM schema_migrations`); got != future {
		t.Errorf("max version = %d, want %d", got, future)
	}
}

func TestLoadMigrations(t *testing.T) {
	ms, err := builtinMigrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.version != i+1 || m.name == "" || m.sql == "" {
			t.Errorf("migration %d = %+v", i, m)
		}
	}

	tests := []struct {
		name  string
		files []string
		ok    bool
	}{
		{"ok", []string{"0001_a.sql", "0002_b.sql"}, true},
		{"gap", []string{"0001_a.sql", "0003_c.sql"}, false},
		{"not from one", []string{"0002_b.sql"}, false},
		{"bad name", []string{"0001_a.sql", "two.sql"}, false},
		{"not sql", []string{"0001_a.txt"}, false},
		{"empty", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{"m": &fstest.MapFile{Mode: 0o755 | os.ModeDir}}
			for _, f := range tt.files {
				fsys["m/"+f] = &fstest.MapFile{Data: []byte("SELECT 1;")}
			}
			_, err := loadMigrations(fsys, "m")
			if (err == nil) != tt.ok {
				t.Errorf("loadMigrations(%v) error = %v, want ok=%v", tt.files, err, tt.ok)
			}
		})
	}
}

// TestMigrationStepsAreAtomic runs a list whose second step fails half-way:
// the first step stays applied, and nothing of the second is left.
func TestMigrationStepsAreAtomic(t *testing.T) {
	sdb, err := sql.Open("sqlite", sqlitefile.DSN(filepath.Join(t.TempDir(), "m.db"), DefaultBusyTimeout))
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	ctx := context.Background()
	ms := []migration{
		{1, "one", `CREATE TABLE one (x INTEGER) STRICT;`},
		{2, "two", `CREATE TABLE two (x INTEGER) STRICT; INSERT INTO nowhere VALUES (1);`},
	}
	if err := migrate(ctx, sdb, ms, newClock().Now); err == nil {
		t.Fatal("migrate with a broken step succeeded")
	}
	var n int
	_ = sdb.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name IN ('one', 'two')`).Scan(&n)
	if n != 1 {
		t.Errorf("%d of tables one, two exist; want only one", n)
	}
	v, _, err := appliedVersion(ctx, sdb)
	if err != nil || v != 1 {
		t.Errorf("applied version = %d, %v; want 1", v, err)
	}

	// Fixing the step and migrating again picks up where it stopped.
	ms[1].sql = `CREATE TABLE two (x INTEGER) STRICT;`
	if err := migrate(ctx, sdb, ms, newClock().Now); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := appliedVersion(ctx, sdb); v != 2 {
		t.Errorf("applied version = %d, want 2", v)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, " "); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Open(blank) = %v, want ErrInvalidArgument", err)
	}
	dir := t.TempDir()
	if _, err := Open(ctx, dir); err == nil {
		t.Error("Open(directory) succeeded")
	}
}
