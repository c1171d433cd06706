package inventory

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/internal/sqlitefile"
)

// OpenReadOnly opens the inventory database at path for reading only, for
// the commands that must leave the state directory as they found it
// (palyra skills list, skills info, policy check): it creates no file (not
// the database, not its lock file, not SQLite's -wal and -shm), migrates
// nothing and takes no lock, so it never waits for a writer either. Reads
// see every committed change, also while another process writes (see
// sqlitefile.ReadOnlyDSN for how). Update fails with ErrReadOnly, and Skill
// reads the database every time (no cache: there is no change counter to
// trust without the lock file).
//
// A missing file is an error wrapping fs.ErrNotExist: nothing is installed.
// A database at an older schema than this build's is ErrReadOnly (a
// command that changes the state directory migrates it), one at a newer
// schema ErrSchemaTooNew. ctx governs the schema check only.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	if strings.TrimSpace(path) == "" {
		return nil, invalid("path", "must not be empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("inventory: open %q: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("inventory: open %q: %w", abs, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("inventory: open %q: not a regular file", abs)
	}
	ms, err := builtinMigrations()
	if err != nil {
		return nil, err
	}
	sdb, err := sql.Open("sqlite", sqlitefile.ReadOnlyDSN(abs, DefaultBusyTimeout))
	if err != nil {
		return nil, fmt.Errorf("inventory: open %q: %w", abs, err)
	}
	// One connection, kept for the DB's life: the URI chose how to read
	// (see sqlitefile.ReadOnlyDSN) from the files present now, and a later
	// connection must not read differently, nor open another -shm.
	sdb.SetMaxOpenConns(1)
	sdb.SetMaxIdleConns(1)
	d := &DB{sql: sdb, path: abs, now: time.Now, writeSem: make(chan struct{}, 1), busyTimeout: DefaultBusyTimeout}
	need, err := needsMigration(ctx, sdb, ms)
	if err == nil && need {
		err = fmt.Errorf("%w: %s is at an older schema than this build reads; a command that changes the state directory migrates it", ErrReadOnly, abs)
	}
	if err != nil {
		_ = d.Close() // the schema error is the one to report
		return nil, err
	}
	return d, nil
}
