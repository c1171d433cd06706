package inventory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver (pure Go)

	"github.com/palyra-go/palyra/host/internal/sqlitefile"
)

// DefaultBusyTimeout is how long a writer waits for another process to
// release the database's write lock before failing with ErrBusy.
const DefaultBusyTimeout = 5 * time.Second

// DB is the inventory database. It is safe for concurrent use by many
// goroutines, and several processes (the CLI and the daemon) may have the
// same file open at once (see the package doc, Concurrency). Close it when
// done.
type DB struct {
	sql  *sql.DB
	path string
	now  func() time.Time

	// Writers queue at three gates: writeSem serialises the writers of this
	// DB in Go; wlock, an flock on "<path>.lock", queues the writers of
	// cooperating processes; SQLite's write lock (BEGIN IMMEDIATE + busy
	// timeout) keeps out any other writer.
	writeSem    chan struct{}
	wlock       *writerLock
	busyTimeout time.Duration

	// cache holds the entries DB.Skill read, valid for the change counter
	// (see skillCache).
	cache skillCache

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var errClosed = errors.New("inventory: database is closed")

// Option configures Open.
type Option func(*options)

type options struct {
	busyTimeout time.Duration
	now         func() time.Time
}

// WithBusyTimeout sets how long a writer waits for a writer of another
// process, at the lock file and again at SQLite's lock, before failing with
// ErrBusy (default DefaultBusyTimeout). Values below one millisecond are
// raised to one.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busyTimeout = max(d, time.Millisecond) }
}

// WithClock sets the clock that stamps installs, status changes and events
// whose caller left the time zero (default time.Now). Tests use it.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

// Open opens the inventory database at path, creating it (mode 0600, and
// its parent directory with mode 0700 when missing) if it does not exist,
// and migrates it to SchemaVersion. It refuses, with ErrSchemaTooNew, a
// database that a newer build has migrated further. ctx governs the opening
// and the migration only.
//
// The file is in WAL mode (readers never block the writer and the writer
// never blocks readers, across processes too), and every connection has
// foreign keys on, a busy timeout, and synchronous=FULL: each commit is on disk when
// Update returns. Writes are rare (installs and status changes) so the
// extra fsync costs nothing that matters, while NORMAL could lose the last
// commits on power loss, such as a quarantine the operator was told had
// been applied. Write transactions begin with BEGIN IMMEDIATE, so a writer
// takes the write lock up front and two writers never deadlock upgrading a
// read lock. Open also creates "<path>.lock" (mode 0600), the file whose
// flock queues the writers of cooperating processes.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	o := options{busyTimeout: DefaultBusyTimeout, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if strings.TrimSpace(path) == "" {
		return nil, invalid("path", "must not be empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("inventory: open %q: %w", path, err)
	}
	if err := sqlitefile.Create(abs); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	ms, err := builtinMigrations()
	if err != nil {
		return nil, err
	}
	wlock, err := openWriterLock(abs + ".lock")
	if err != nil {
		return nil, err
	}

	sdb, err := sql.Open("sqlite", sqlitefile.DSN(abs, o.busyTimeout))
	if err != nil {
		_ = wlock.close()
		return nil, fmt.Errorf("inventory: open %q: %w", abs, err)
	}
	// Keep a few connections warm: a new one re-runs the pragmas and
	// re-reads the schema.
	sdb.SetMaxIdleConns(4)
	d := &DB{
		sql: sdb, path: abs, now: o.now,
		writeSem: make(chan struct{}, 1), wlock: wlock, busyTimeout: o.busyTimeout,
	}
	if err := d.init(ctx, ms); err != nil {
		_ = d.Close() // the init error is the one to report
		return nil, err
	}
	return d, nil
}

func (d *DB) init(ctx context.Context, ms []migration) error {
	if err := d.ensureWAL(ctx); err != nil {
		return err
	}
	// Opening an up-to-date database takes no lock, so it never waits for a
	// writer.
	if need, err := needsMigration(ctx, d.sql, ms); err != nil || !need {
		return err
	}
	return d.withWriteLock(ctx, func() error { return migrate(ctx, d.sql, ms, d.now) })
}

// ensureWAL switches the file to WAL mode, which is stored in the file, so
// it happens once, when the file is new. The switch is made under the writer
// lock: two processes switching a new file at once can get SQLITE_BUSY from
// SQLite without its busy handler being consulted.
func (d *DB) ensureWAL(ctx context.Context) error {
	err := sqlitefile.EnsureWAL(ctx, d.sql, func(fn func() error) error { return d.withWriteLock(ctx, fn) })
	return wrap(fmt.Sprintf("open %q", d.path), err)
}

// Path returns the absolute path of the database file.
func (d *DB) Path() string { return d.path }

// Close closes the database, waiting for queries in flight to finish. It is
// idempotent: later calls return the first call's result. A closed DB
// cannot be reused.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		d.closed.Store(true)
		err := wrap("close", d.sql.Close())
		d.writeSem <- struct{}{} // wait for a writer in flight to let go of the lock file
		if d.wlock != nil {      // nil when opened read-only
			err = errors.Join(err, wrap("close lock file", d.wlock.close()))
		}
		d.closeErr = err
		<-d.writeSem
	})
	return d.closeErr
}

// Update runs fn in one write transaction and commits it when fn returns
// nil. When fn returns an error, Update rolls back and returns that error
// unchanged; when fn panics, Update rolls back and panics again. Either way
// nothing fn wrote is left behind: an install is its skill row, its status
// row and its event, or none of them.
//
// ctx governs the whole transaction, including the wait for the write lock
// and every call on tx. Writers of this process queue one at a time; a
// writer of another process is waited for up to the busy timeout (then
// ErrBusy). fn must not call Update itself (it would wait for itself), and
// tx must not be used after fn returns or from another goroutine.
func (d *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return d.withWriteLock(ctx, func() error {
		return inWriteTx(ctx, d.sql, func(stx *sql.Tx) error {
			t := &Tx{ctx: ctx, tx: stx, now: d.now}
			defer func() { t.done = true }()
			return fn(t)
		})
	})
}

// withWriteLock runs fn holding this process's writer slot and the
// cross-process writer lock.
func (d *DB) withWriteLock(ctx context.Context, fn func() error) error {
	select {
	case d.writeSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("inventory: waiting for the write lock: %w", ctx.Err())
	}
	defer func() { <-d.writeSem }()
	if d.closed.Load() {
		return errClosed
	}
	if d.wlock == nil {
		return fmt.Errorf("%w: %s", ErrReadOnly, d.path)
	}
	if err := d.wlock.lock(ctx, d.busyTimeout); err != nil {
		return err
	}
	// LOCK_UN on an open descriptor only fails with EINTR, which unlock
	// retries; reporting anything else here would make a committed
	// transaction look failed. Close releases the lock in any case.
	defer func() { _ = d.wlock.unlock() }()
	// Advance the change counter after the transaction, committed or not
	// (a failed COMMIT may still have written), so that every process's
	// DB.Skill cache reads again, and drop this DB's own cache outright. A
	// counter that cannot be written leaves other processes on their
	// cache's MaxSkillCacheAge.
	defer func() {
		_ = d.wlock.bump()
		d.cache.clear()
	}()
	return fn()
}
