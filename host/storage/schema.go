package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema steps, in order: step i brings the database
// from user_version i to i+1. A released step is never edited; a change to
// the schema is a new step appended here.
var migrations = []string{
	// 1: the key space and its usage counters.
	`CREATE TABLE entries (
    skill_id   TEXT    NOT NULL,
    key        TEXT    NOT NULL CHECK (length(CAST(key AS BLOB)) BETWEEN 1 AND 512),
    value      BLOB    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (skill_id, key)
) STRICT, WITHOUT ROWID;
CREATE TABLE usage (
    skill_id TEXT    NOT NULL PRIMARY KEY,
    keys     INTEGER NOT NULL CHECK (keys > 0),
    bytes    INTEGER NOT NULL CHECK (bytes > 0)
) STRICT, WITHOUT ROWID;`,
}

// SchemaVersion is the schema version (PRAGMA user_version) this build
// migrates databases to: the number of steps in migrations.
const SchemaVersion = 1

// userVersion reads PRAGMA user_version.
func userVersion(ctx context.Context, q rowQuerier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
	return v, err
}

func tooNew(v int) error {
	return fmt.Errorf("%w: database is at schema version %d, this build knows up to %d",
		ErrSchemaTooNew, v, SchemaVersion)
}

// migrate brings the database up to SchemaVersion. The common case, an
// up-to-date file, takes no write lock. Each step runs in its own write
// transaction (BEGIN IMMEDIATE) together with the user_version bump, and
// re-reads the version inside it, so two processes opening a new file at
// once apply each step exactly once and a crash leaves the file at some
// step, never between two.
func (s *Store) migrate(ctx context.Context) error {
	v, err := userVersion(ctx, s.db)
	switch {
	case err != nil:
		return wrap("read schema version", err)
	case v > SchemaVersion:
		return tooNew(v)
	case v == SchemaVersion:
		return nil
	}
	for step := v; step < SchemaVersion; step++ {
		err := s.write(ctx, func(tx *sql.Tx) error {
			cur, err := userVersion(ctx, tx)
			switch {
			case err != nil:
				return wrap("read schema version", err)
			case cur > SchemaVersion:
				return tooNew(cur)
			case cur > step:
				return nil // applied by another process meanwhile
			}
			op := fmt.Sprintf("apply schema step %d", step+1)
			if _, err := tx.ExecContext(ctx, migrations[step]); err != nil {
				return wrap(op, err)
			}
			// PRAGMA takes no bound parameters; step+1 is our own integer.
			_, err = tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, step+1))
			return wrap(op, err)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
