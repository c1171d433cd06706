// Package sqlitefile holds what every SQLite database of the state
// directory (the inventory, the skills' storage) opens the same way: the
// file created 0600 before SQLite touches it, the modernc.org/sqlite DSN
// with the pragmas each connection runs, the switch to WAL mode and the test
// for SQLite's busy errors.
package sqlitefile

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Create creates the database file with mode 0600 (and its directory with
// 0700) before SQLite opens it, so it never gets the umask's permissions;
// SQLite gives the -wal and -shm files the mode of the database file. An
// existing file is kept; one that is not a regular file is an error.
func Create(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create directory of %q: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create %q: %w", path, err)
	}
	fi, err := f.Stat()
	_ = f.Close() // opened only to create it; nothing was written
	if err != nil {
		return fmt.Errorf("stat %q: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%q is not a regular file", path)
	}
	return nil
}

// DSN builds the modernc.org/sqlite URI for path: the pragmas run on every
// new connection (busy_timeout first, synchronous FULL, foreign keys on),
// and _txlock makes BeginTx issue BEGIN IMMEDIATE (read-only transactions
// stay deferred). The journal mode is not among them: WAL is a property of
// the file, set once by its owner.
func DSN(path string, busy time.Duration) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path: file:///C:/...
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// ReadOnlyDSN builds the URI that opens the database at path for reading
// without writing anything next to it. SQLite reads a WAL database through
// its -wal and -shm files, creating them when they are missing (and leaving
// them behind after a read-only connection), and a reader writes its read
// marks into the -shm. So when both files exist, a writer has the database
// open (or crashed with it open): the URI reads through them (mode=ro), with
// the -shm opened read-only (readonly_shm=1: SQLite copies the index into
// private memory), and sees every commit. Otherwise no writer has it open and
// the main file holds every commit: the URI marks it immutable and SQLite
// reads that file alone, creating nothing. A writer that opens the file
// afterwards commits to its new WAL, leaving the main file as it was until
// its first checkpoint.
func ReadOnlyDSN(path string, busy time.Duration) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("mode", "ro")
	q.Set("readonly_shm", "1")
	if !exists(path+"-wal") || !exists(path+"-shm") {
		q.Set("immutable", "1")
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
