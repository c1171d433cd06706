package inventory

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The schema is a numbered list of SQL steps embedded from migrations/,
// named NNNN_what.sql and numbered from 1 without gaps. A step, once
// released, is never edited: a change to the schema is a new step. Each step
// runs in its own write transaction together with the row that records it in
// schema_migrations, so a crash leaves the database at some step, never
// between two.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// builtinMigrations loads the embedded steps once.
var builtinMigrations = sync.OnceValues(func() ([]migration, error) {
	return loadMigrations(migrationFiles, "migrations")
})

// SchemaVersion returns the schema version this build migrates databases
// to: the number of the last embedded migration.
func SchemaVersion() int {
	ms, err := builtinMigrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// loadMigrations reads NNNN_name.sql files from dir of fsys and checks that
// they are numbered 1, 2, 3, ... without gaps.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("inventory: read migrations: %w", err)
	}
	var ms []migration
	for _, e := range ents { // fs.ReadDir sorts by name
		num, rest, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(rest, ".sql") {
			return nil, fmt.Errorf("inventory: migration file %q is not NNNN_name.sql", e.Name())
		}
		v, err := strconv.Atoi(num)
		if err != nil || v != len(ms)+1 {
			return nil, fmt.Errorf("inventory: migration file %q: want number %d", e.Name(), len(ms)+1)
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("inventory: read migration %q: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(rest, ".sql"), sql: string(b)})
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("inventory: no migrations in %q", dir)
	}
	return ms, nil
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version            INTEGER PRIMARY KEY,
    name               TEXT    NOT NULL,
    applied_at_unix_ms INTEGER NOT NULL
) STRICT`

// appliedVersion returns the highest applied migration, 0 when none is, and
// whether the schema_migrations table exists.
func appliedVersion(ctx context.Context, q querier) (int, bool, error) {
	var n int
	err := q.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n)
	if err != nil || n == 0 {
		return 0, false, err
	}
	var v int
	err = q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, true, err
}

// needsMigration reports whether db is behind ms, without taking a lock. A
// database ahead of ms is ErrSchemaTooNew.
func needsMigration(ctx context.Context, db *sql.DB, ms []migration) (bool, error) {
	latest := ms[len(ms)-1].version
	v, ok, err := appliedVersion(ctx, db)
	switch {
	case err != nil:
		return false, wrap("read schema version", err)
	case v > latest:
		return false, fmt.Errorf("%w: database is at schema version %d, this build knows up to %d", ErrSchemaTooNew, v, latest)
	}
	return !ok || v < latest, nil
}

// migrate brings db up to the last of ms. Several processes may migrate the
// same file at once: each step re-reads the applied version inside its
// write transaction (BEGIN IMMEDIATE), so each step is applied exactly once.
func migrate(ctx context.Context, db *sql.DB, ms []migration, now func() time.Time) error {
	latest := ms[len(ms)-1].version
	tooNew := func(v int) error {
		return fmt.Errorf("%w: database is at schema version %d, this build knows up to %d", ErrSchemaTooNew, v, latest)
	}

	// The common case, an up-to-date database, takes no SQLite write lock.
	if need, err := needsMigration(ctx, db, ms); err != nil || !need {
		return err
	}
	if err := inWriteTx(ctx, db, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, createMigrationsTable)
		return wrap("create schema_migrations", err)
	}); err != nil {
		return err
	}
	for _, m := range ms {
		step := fmt.Sprintf("apply migration %d %s", m.version, m.name)
		err := inWriteTx(ctx, db, func(tx *sql.Tx) error {
			v, _, err := appliedVersion(ctx, tx)
			switch {
			case err != nil:
				return wrap("read schema version", err)
			case v > latest:
				return tooNew(v)
			case v >= m.version:
				return nil // applied already, maybe by another process
			case v != m.version-1:
				return fmt.Errorf("inventory: %s: schema_migrations is at %d", step, v)
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return wrap(step, err)
			}
			_, err = tx.ExecContext(ctx,
				`INSERT INTO schema_migrations (version, name, applied_at_unix_ms) VALUES (?, ?, ?)`,
				m.version, m.name, now().UnixMilli())
			return wrap(step, err)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// inWriteTx runs fn in a transaction of db (BEGIN IMMEDIATE, from the DSN),
// committing when fn returns nil and rolling back otherwise, also when fn
// panics (the panic goes on). Errors of fn are returned as they are; errors
// of BEGIN and COMMIT are wrapped.
func inWriteTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return wrap("begin transaction", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback() // the error of fn (or its panic) is the one to report
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return wrap("commit", err)
	}
	committed = true
	return nil
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
