package storage

import (
	"bytes"
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

// busyTimeout is how long a writer waits for a writer of another process
// (the CLI purging a skill while the daemon runs) before failing with
// ErrBusy. Writers of one Store never wait on SQLite: they queue in Go.
const busyTimeout = 5 * time.Second

// Quota caps one skill's key space. A zero field is unlimited. Bytes are
// counted as len(key) + len(value) summed over every entry of the skill,
// with full keys.
type Quota struct {
	MaxKeys  int64 // the most keys the skill may hold
	MaxBytes int64 // the most bytes (keys and values) the skill may hold
}

// Usage is what one skill's key space holds.
type Usage struct {
	Keys  int64 `json:"keys"`  // number of entries
	Bytes int64 `json:"bytes"` // len(key) + len(value) summed over the entries
}

// Store is the storage database: one key space per skill id. It is safe
// for concurrent use by many goroutines, and several processes may open
// the same file. Close it when done.
type Store struct {
	db   *sql.DB
	path string

	// writeSem lets one write transaction of this Store run at a time, so
	// writers of one process queue in Go (honouring their contexts) and
	// never spin in SQLite's busy handler.
	writeSem chan struct{}

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Open opens the storage database at path (e.g.
// <state>/storage/storage.db), creating it with mode 0600, and its parent
// directory with mode 0700, when missing, and migrates it to SchemaVersion.
// A file migrated further by a newer build is refused with
// ErrSchemaTooNew. ctx governs the opening and the migration only.
//
// The file is in WAL mode (readers never wait for the writer), every
// connection has a busy timeout, foreign keys on and synchronous=FULL (a
// Put is on disk when it returns), and write transactions begin with BEGIN
// IMMEDIATE, so a writer takes the lock before it reads the usage it
// judges the quota on.
func Open(ctx context.Context, path string) (*Store, error) {
	if strings.TrimSpace(path) == "" {
		return nil, fmt.Errorf("%w: open: the database path is empty", ErrInvalidPath)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("storage: open %q: %w", path, err)
	}
	if err := sqlitefile.Create(abs); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	db, err := sql.Open("sqlite", sqlitefile.DSN(abs, busyTimeout))
	if err != nil {
		return nil, fmt.Errorf("storage: open %q: %w", abs, err)
	}
	// Keep a few connections warm: a new one re-runs the pragmas and
	// re-reads the schema. Readers run in parallel in WAL mode; the cap
	// keeps a burst of readers from opening a file descriptor each.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(4)
	s := &Store{db: db, path: abs, writeSem: make(chan struct{}, 1)}
	if err := s.init(ctx); err != nil {
		_ = s.Close() // the init error is the one to report
		return nil, err
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	if err := s.ensureWAL(ctx); err != nil {
		return err
	}
	return s.migrate(ctx)
}

// ensureWAL switches the file to WAL mode. The mode is stored in the file,
// so this writes only when the file is new.
func (s *Store) ensureWAL(ctx context.Context) error {
	err := sqlitefile.EnsureWAL(ctx, s.db, func(fn func() error) error { return fn() })
	return wrap(fmt.Sprintf("open %q", s.path), err)
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database, waiting for the statements in flight. It is
// idempotent: later calls return the first call's result. Every method
// of a closed Store fails with ErrClosed.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeErr = wrap("close", s.db.Close())
	})
	return s.closeErr
}

// fail wraps an error of the database for op, as ErrClosed when the
// Store was closed under the call.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	if s.closed.Load() {
		return fmt.Errorf("%w: %s: %w", ErrClosed, op, err)
	}
	return wrap(op, err)
}

// usable returns ErrClosed once Close was called.
func (s *Store) usable() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// write runs fn in one write transaction, committed when fn returns nil
// and rolled back otherwise (also when fn panics). Errors of fn are
// returned as they are.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	select {
	case s.writeSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("storage: waiting for the write lock: %w", ctx.Err())
	}
	defer func() { <-s.writeSem }()
	if err := s.usable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("begin transaction", err)
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
		return s.fail("commit", err)
	}
	committed = true
	return nil
}

// ValidateSkillID checks a skill id: 1 to MaxSkillIDBytes bytes of
// [a-z0-9._:-], the alphabet of Palyra identifiers. Ids are not
// normalized: two spellings of one skill would be two key spaces.
func ValidateSkillID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: the skill id is empty", ErrInvalidSkillID)
	case len(id) > MaxSkillIDBytes:
		return fmt.Errorf("%w: the skill id is %d bytes, over the limit of %d bytes",
			ErrInvalidSkillID, len(id), MaxSkillIDBytes)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return fmt.Errorf("%w: byte 0x%02x at offset %d of skill id %q is outside [a-z0-9._:-]",
				ErrInvalidSkillID, c, i, id)
		}
	}
	return nil
}

// checkEntry validates the arguments every single-key operation shares.
func (s *Store) checkEntry(skillID, fullKey string) error {
	if err := s.usable(); err != nil {
		return err
	}
	return CheckEntry(skillID, fullKey)
}

// Get returns the value stored under fullKey in the key space of skillID,
// and whether there is one. A found empty value is a non-nil empty slice.
func (s *Store) Get(ctx context.Context, skillID, fullKey string) ([]byte, bool, error) {
	if err := s.checkEntry(skillID, fullKey); err != nil {
		return nil, false, err
	}
	var v []byte
	err := s.db.QueryRowContext(ctx,
		`SELECT value FROM entries WHERE skill_id = ? AND key = ?`, skillID, fullKey).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, s.fail(fmt.Sprintf("get key %q of skill %s", fullKey, skillID), err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// entrySize is what one entry counts against the bytes quota.
func entrySize(key string, valueLen int) int64 { return int64(len(key)) + int64(valueLen) }

// Put stores value under fullKey in the key space of skillID, replacing
// any value there. The quota is judged on the usage after the write, in
// the same transaction as the write, so concurrent Puts never pass it
// together: a Put fails with a *QuotaError when it would raise the key
// count or the byte count of the skill above a non-zero limit of q. A
// write that does not raise a count is never refused for it, so a skill
// over its quota (the operator lowered it) can still replace a value with
// a smaller one, or delete. Values over MaxValueBytes fail with
// ErrValueTooLarge. The write is durable when Put returns nil.
func (s *Store) Put(ctx context.Context, skillID, fullKey string, value []byte, q Quota) error {
	if err := s.checkWrite(skillID, fullKey, value, q); err != nil {
		return err
	}
	if value == nil {
		value = []byte{} // an empty value is a zero-length blob, never NULL
	}
	op := fmt.Sprintf("put key %q of skill %s", fullKey, skillID)
	return s.write(ctx, func(tx *sql.Tx) error {
		var oldLen int64
		switch err := tx.QueryRowContext(ctx,
			`SELECT length(value) FROM entries WHERE skill_id = ? AND key = ?`, skillID, fullKey).Scan(&oldLen); {
		case errors.Is(err, sql.ErrNoRows):
			return s.store(ctx, tx, op, skillID, fullKey, value, q, false, 0)
		case err != nil:
			return s.fail(op, err)
		}
		return s.store(ctx, tx, op, skillID, fullKey, value, q, true, oldLen)
	})
}

// checkWrite validates the arguments of a write of value under fullKey.
func (s *Store) checkWrite(skillID, fullKey string, value []byte, q Quota) error {
	if err := s.usable(); err != nil {
		return err
	}
	return CheckWrite(skillID, fullKey, value, q)
}

// store writes value under fullKey inside tx, judging the quota on the
// usage after the write. existed and oldLen say what the key holds now.
func (s *Store) store(ctx context.Context, tx *sql.Tx, op, skillID, fullKey string, value []byte, q Quota, existed bool, oldLen int64) error {
	before, err := usageOf(ctx, tx, skillID)
	if err != nil {
		return s.fail(op, err)
	}
	after := before
	if existed {
		after.Bytes -= entrySize(fullKey, int(oldLen))
	} else {
		after.Keys++
	}
	after.Bytes += entrySize(fullKey, len(value))
	if err := judge(skillID, q, before, after); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO entries (skill_id, key, value, updated_at)
VALUES (?, ?, ?, ?)
ON CONFLICT (skill_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		skillID, fullKey, value, time.Now().UnixMilli()); err != nil {
		return s.fail(op, err)
	}
	return s.fail(op, setUsage(ctx, tx, skillID, after))
}

// CASResult is what CompareAndSwap found and did.
type CASResult struct {
	// Swapped reports whether the new value was written.
	Swapped bool
	// Found reports whether the key holds a value after the call: always
	// true when Swapped.
	Found bool
	// Current is the value under the key after the call (the new value
	// when Swapped); nil when Found is false, and a non-nil empty slice for
	// a found empty value.
	Current []byte
}

// CompareAndSwap stores value under fullKey in the key space of skillID
// only if the key holds expected now: a nil expected means "the key is
// absent", a non-nil one (even empty) means "the key holds exactly these
// bytes" (so a nil from Get of a missing key, and the non-nil value of a
// found one, can be passed back as they are). The comparison and the write
// are one write transaction (BEGIN IMMEDIATE), so of concurrent swaps from
// the same expected value, in this process or another, exactly one
// succeeds. The result says whether it swapped and what the key holds.
//
// A swap is a Put: the key rules and MaxValueBytes are checked first, as
// Put checks them, and a swap that would pass q fails with a *QuotaError
// and writes nothing. A comparison that fails is not an error: the result
// has Swapped false and the value the key holds.
func (s *Store) CompareAndSwap(ctx context.Context, skillID, fullKey string, expected, value []byte, q Quota) (CASResult, error) {
	if err := s.checkWrite(skillID, fullKey, value, q); err != nil {
		return CASResult{}, err
	}
	if value == nil {
		value = []byte{} // an empty value is a zero-length blob, never NULL
	}
	op := fmt.Sprintf("compare-and-swap key %q of skill %s", fullKey, skillID)
	var res CASResult
	err := s.write(ctx, func(tx *sql.Tx) error {
		var cur []byte
		existed := true
		switch err := tx.QueryRowContext(ctx,
			`SELECT value FROM entries WHERE skill_id = ? AND key = ?`, skillID, fullKey).Scan(&cur); {
		case errors.Is(err, sql.ErrNoRows):
			existed = false
		case err != nil:
			return s.fail(op, err)
		}
		if existed && cur == nil {
			cur = []byte{}
		}
		if existed != (expected != nil) || existed && !bytes.Equal(cur, expected) {
			res = CASResult{Found: existed, Current: cur}
			return nil
		}
		if err := s.store(ctx, tx, op, skillID, fullKey, value, q, existed, int64(len(cur))); err != nil {
			return err
		}
		res = CASResult{Swapped: true, Found: true, Current: value}
		return nil
	})
	if err != nil {
		return CASResult{}, err
	}
	return res, nil
}

// judge refuses a write that raises a count of the skill above a
// non-zero limit of q.
func judge(skillID string, q Quota, before, after Usage) error {
	if q.MaxKeys > 0 && after.Keys > q.MaxKeys && after.Keys > before.Keys {
		return &QuotaError{SkillID: skillID, Limit: LimitKeys, Max: q.MaxKeys, Would: after.Keys}
	}
	if q.MaxBytes > 0 && after.Bytes > q.MaxBytes && after.Bytes > before.Bytes {
		return &QuotaError{SkillID: skillID, Limit: LimitBytes, Max: q.MaxBytes, Would: after.Bytes}
	}
	return nil
}

// Delete removes fullKey from the key space of skillID and reports whether
// it was there.
func (s *Store) Delete(ctx context.Context, skillID, fullKey string) (bool, error) {
	if err := s.checkEntry(skillID, fullKey); err != nil {
		return false, err
	}
	op := fmt.Sprintf("delete key %q of skill %s", fullKey, skillID)
	deleted := false
	err := s.write(ctx, func(tx *sql.Tx) error {
		var oldLen int64
		err := tx.QueryRowContext(ctx,
			`SELECT length(value) FROM entries WHERE skill_id = ? AND key = ?`, skillID, fullKey).Scan(&oldLen)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return s.fail(op, err)
		}
		u, err := usageOf(ctx, tx, skillID)
		if err != nil {
			return s.fail(op, err)
		}
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM entries WHERE skill_id = ? AND key = ?`, skillID, fullKey); err != nil {
			return s.fail(op, err)
		}
		u.Keys--
		u.Bytes -= entrySize(fullKey, int(oldLen))
		if err := setUsage(ctx, tx, skillID, u); err != nil {
			return s.fail(op, err)
		}
		deleted = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return deleted, nil
}

// List returns the keys of skillID's key space that start with prefix (a
// string prefix of full keys: the broker passes the grant's prefix, "/"
// and the guest's prefix, and "" lists every key of the skill), in byte
// order, strictly after cursor, at most limit of them (0 means
// DefaultListLimit; over MaxListLimit is ErrInvalidListLimit). next is the
// last key returned when more keys follow, and "" at the end. keys is
// never nil.
//
// The prefix is matched as the range scan prefix <= key < upper bound, not
// with LIKE, whose wildcards '_' and '%' would be read from guest text.
func (s *Store) List(ctx context.Context, skillID, prefix string, limit int, cursor string) (keys []string, next string, err error) {
	if err := s.usable(); err != nil {
		return nil, "", err
	}
	limit, err = CheckList(skillID, prefix, limit, cursor)
	if err != nil {
		return nil, "", err
	}

	where := []string{"skill_id = ?"}
	args := []any{skillID}
	switch {
	case cursor != "" && cursor >= prefix:
		where, args = append(where, "key > ?"), append(args, cursor)
	case prefix != "":
		where, args = append(where, "key >= ?"), append(args, prefix)
	}
	if upper, ok := prefixUpperBound(prefix); ok {
		if cursor >= upper {
			return []string{}, "", nil // nothing with this prefix follows the cursor
		}
		where, args = append(where, "key < ?"), append(args, upper)
	}
	args = append(args, limit+1) // one more, to learn whether more follow
	query := `SELECT key FROM entries WHERE ` + strings.Join(where, " AND ") + ` ORDER BY key LIMIT ?`

	op := fmt.Sprintf("list keys of skill %s", skillID)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, "", s.fail(op, err)
	}
	defer rows.Close()
	keys = make([]string, 0, min(limit+1, 64))
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, "", s.fail(op, err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, "", s.fail(op, err)
	}
	if len(keys) > limit {
		keys = keys[:limit]
		next = keys[limit-1]
	}
	return keys, next, nil
}

// Usage returns what the key space of skillID holds. It reads one row.
func (s *Store) Usage(ctx context.Context, skillID string) (Usage, error) {
	if err := s.usable(); err != nil {
		return Usage{}, err
	}
	if err := ValidateSkillID(skillID); err != nil {
		return Usage{}, err
	}
	u, err := usageOf(ctx, s.db, skillID)
	if err != nil {
		return Usage{}, s.fail("read usage of skill "+skillID, err)
	}
	return u, nil
}

// Purge deletes every key of skillID, in one transaction, and returns what
// was deleted (counted from the entries themselves). Removing a skill with
// its storage uses it; purging an empty key space is not an error.
func (s *Store) Purge(ctx context.Context, skillID string) (Usage, error) {
	if err := s.usable(); err != nil {
		return Usage{}, err
	}
	if err := ValidateSkillID(skillID); err != nil {
		return Usage{}, err
	}
	op := "purge skill " + skillID
	var gone Usage
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*), COALESCE(SUM(length(CAST(key AS BLOB)) + length(value)), 0)
FROM entries WHERE skill_id = ?`, skillID).Scan(&gone.Keys, &gone.Bytes); err != nil {
			return s.fail(op, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM entries WHERE skill_id = ?`, skillID); err != nil {
			return s.fail(op, err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM usage WHERE skill_id = ?`, skillID)
		return s.fail(op, err)
	})
	if err != nil {
		return Usage{}, err
	}
	return gone, nil
}

// Skills returns the usage of every skill that holds at least one key, by
// skill id, for operators and metrics.
func (s *Store) Skills(ctx context.Context) (map[string]Usage, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	const op = "list skills"
	rows, err := s.db.QueryContext(ctx, `SELECT skill_id, keys, bytes FROM usage`)
	if err != nil {
		return nil, s.fail(op, err)
	}
	defer rows.Close()
	out := map[string]Usage{}
	for rows.Next() {
		var id string
		var u Usage
		if err := rows.Scan(&id, &u.Keys, &u.Bytes); err != nil {
			return nil, s.fail(op, err)
		}
		out[id] = u
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

// rowQuerier is what *sql.DB and *sql.Tx have in common for one row.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// usageOf reads the usage row of skillID; no row is zero usage.
func usageOf(ctx context.Context, q rowQuerier, skillID string) (Usage, error) {
	var u Usage
	err := q.QueryRowContext(ctx, `SELECT keys, bytes FROM usage WHERE skill_id = ?`, skillID).Scan(&u.Keys, &u.Bytes)
	if errors.Is(err, sql.ErrNoRows) {
		return Usage{}, nil
	}
	return u, err
}

// setUsage writes the usage row of skillID; an empty key space has none.
func setUsage(ctx context.Context, tx *sql.Tx, skillID string, u Usage) error {
	if u.Keys == 0 {
		_, err := tx.ExecContext(ctx, `DELETE FROM usage WHERE skill_id = ?`, skillID)
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO usage (skill_id, keys, bytes) VALUES (?, ?, ?)
ON CONFLICT (skill_id) DO UPDATE SET keys = excluded.keys, bytes = excluded.bytes`, skillID, u.Keys, u.Bytes)
	return err
}
