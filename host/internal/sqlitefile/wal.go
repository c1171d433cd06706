package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// EnsureWAL switches db's file to WAL mode. The mode is stored in the file,
// so only a new file is written to; the switch runs inside locked (which
// may take a cross-process writer lock, or just call its argument). A file
// that refuses WAL (as on some network file systems) is an error naming the
// mode it kept. Errors carry no package prefix: callers wrap them.
func EnsureWAL(ctx context.Context, db *sql.DB, locked func(func() error) error) error {
	mode := func(query string) (string, error) {
		var m string
		if err := db.QueryRowContext(ctx, query).Scan(&m); err != nil {
			return "", err
		}
		return strings.ToLower(m), nil
	}
	m, err := mode(`PRAGMA journal_mode`)
	if err != nil || m == "wal" {
		return err
	}
	err = locked(func() (err error) {
		m, err = mode(`PRAGMA journal_mode = WAL`)
		return err
	})
	switch {
	case err != nil:
		return err
	case m != "wal":
		return fmt.Errorf("journal mode is %q, not wal (is the file on a network file system?)", m)
	}
	return nil
}

// IsBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED (any
// extended code of either).
func IsBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}
