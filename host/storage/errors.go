package storage

import (
	"fmt"
	"strconv"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/sqlitefile"
)

// Sentinels. Every error caused by the caller, the guest or the state of the
// database wraps one of these, so the broker branches with errors.Is (or
// errors.As on *KeyError and *QuotaError) and reports errcode.Of(err), never
// the message text. Errors from SQLite itself (a full disk, an I/O error) are
// wrapped with their cause and carry no code of their own. No error ever
// contains a stored value.
var (
	// ErrInvalidKey: a key, prefix, list prefix or list cursor breaks the
	// key rules (see ValidateKey). The error is a *KeyError.
	ErrInvalidKey = errcode.New("storage_invalid_key", "invalid storage key")
	// ErrValueTooLarge: a value given to Put is over MaxValueBytes.
	ErrValueTooLarge = errcode.New("storage_value_too_large", "storage value too large")
	// ErrQuotaExceeded: a Put would take the skill's key space over its
	// quota. The error is a *QuotaError.
	ErrQuotaExceeded = errcode.New("storage_quota_exceeded", "storage quota exceeded")
	// ErrInvalidSkillID: a skill id is empty, over MaxSkillIDBytes, or has a
	// byte outside [a-z0-9._:-].
	ErrInvalidSkillID = errcode.New("storage_invalid_skill_id", "invalid storage skill id")
	// ErrInvalidListLimit: a List limit is negative or over MaxListLimit.
	ErrInvalidListLimit = errcode.New("storage_invalid_list_limit", "invalid storage list limit")
	// ErrInvalidQuota: a Quota has a negative field.
	ErrInvalidQuota = errcode.New("storage_invalid_quota", "invalid storage quota")
	// ErrInvalidPath: the database path given to Open is empty.
	ErrInvalidPath = errcode.New("storage_invalid_path", "invalid storage database path")
	// ErrClosed: the Store was closed.
	ErrClosed = errcode.New("storage_closed", "skill storage is closed")
	// ErrBusy: another process held the database's write lock for longer
	// than the busy timeout.
	ErrBusy = errcode.New("storage_busy", "storage database is busy")
	// ErrCorruptSpace: an encoded key space (a Space kept as one record,
	// as the cluster's backend keeps it) cannot be decoded.
	ErrCorruptSpace = errcode.New("storage_corrupt_space", "corrupt encoded storage key space")
	// ErrSchemaTooNew: the database file was migrated by a newer build; this
	// build does not know its schema and refuses to touch it.
	ErrSchemaTooNew = errcode.New("storage_schema_too_new", "storage database schema is newer than this build")
)

// maxQuotedKeyBytes is how much of an offending key a KeyError keeps.
const maxQuotedKeyBytes = 64

// KeyError reports a key, prefix or cursor that breaks the key rules. It
// wraps ErrInvalidKey.
type KeyError struct {
	// Kind names what was judged: "key", "prefix", "full key", "list
	// prefix" or "list cursor".
	Kind string
	// Key is the offending text, cut to its first 64 bytes (Error quotes
	// it with strconv.Quote, so control bytes and invalid UTF-8 are
	// escaped and the message is safe to show and to log).
	Key string
	// Cut reports whether Key was cut.
	Cut bool
	// Reason names the rule that is broken, e.g. `segment ".." is not
	// allowed` or "byte 0x00 at offset 3 is not allowed".
	Reason string
}

// newKeyError builds a KeyError for text, keeping at most 64 bytes of it.
func newKeyError(kind, text, reason string) *KeyError {
	e := &KeyError{Kind: kind, Key: text, Reason: reason}
	if len(text) > maxQuotedKeyBytes {
		e.Key, e.Cut = text[:maxQuotedKeyBytes], true
	}
	return e
}

// Error implements error.
func (e *KeyError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "key"
	}
	q := strconv.Quote(e.Key)
	if e.Cut {
		q += "..."
	}
	return fmt.Sprintf("storage: invalid %s %s: %s", kind, q, e.Reason)
}

// Unwrap returns ErrInvalidKey.
func (e *KeyError) Unwrap() error { return ErrInvalidKey }

// Quota limits named by QuotaError.Limit.
const (
	LimitKeys  = "keys"
	LimitBytes = "bytes"
)

// QuotaError reports a Put refused because the skill's key space would
// pass one of its limits. It wraps ErrQuotaExceeded.
type QuotaError struct {
	SkillID string // the skill whose quota it is
	Limit   string // LimitKeys or LimitBytes
	Max     int64  // the limit
	Would   int64  // the count the write would have reached
	// Bound names what set Max when it is not the skill's quota (the
	// cluster backend's largest key space); "" for the quota.
	Bound string
}

// Error implements error.
func (e *QuotaError) Error() string {
	if e.Bound != "" {
		return fmt.Sprintf("storage of skill %s exceeded: %d %s would pass the limit of %d, %s",
			e.SkillID, e.Would, e.Limit, e.Max, e.Bound)
	}
	return fmt.Sprintf("storage quota of skill %s exceeded: %d %s would pass the limit of %d",
		e.SkillID, e.Would, e.Limit, e.Max)
}

// Unwrap returns ErrQuotaExceeded.
func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }

// wrap prefixes an error from database/sql or SQLite with the operation
// that failed. SQLITE_BUSY and SQLITE_LOCKED also wrap ErrBusy.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if sqlitefile.IsBusy(err) {
		return fmt.Errorf("%w: %s: %w", ErrBusy, op, err)
	}
	return fmt.Errorf("storage: %s: %w", op, err)
}
