package inventory

import (
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/sqlitefile"
)

// Sentinels. Every error caused by the caller or by the state of the
// database wraps one of these, so callers branch with errors.Is and report
// errcode.Of(err), never the message text. Errors from SQLite itself (a full disk, an I/O
// error) are wrapped with their cause and carry no code of their own.
var (
	// ErrNotFound: no installed skill matches the requested skill id (and
	// version, when one is given).
	ErrNotFound = errcode.New("skill_not_found", "skill not found")
	// ErrAlreadyInstalled: PutSkill was asked to store a (skill id, version)
	// that is already installed and PutOptions.Replace was not set.
	ErrAlreadyInstalled = errcode.New("already_installed", "skill version already installed")
	// ErrInvalidStatus: a status is not one of active, quarantined, disabled
	// or crashlooping.
	ErrInvalidStatus = errcode.New("invalid_status", "invalid skill status")
	// ErrNoStatus: the skill version has no row in skill_status. The
	// installer always writes one, so this means the row was never written
	// (a database shared with an older tool) and the version must not run.
	ErrNoStatus = errcode.New("skill_status_missing", "skill version has no status")
	// ErrInvalidArgument: a record, status change, event or filter given to
	// the package breaks a rule (a skill id that is not an identifier, a
	// version that is not MAJOR.MINOR.PATCH, a missing field, invalid JSON).
	// The message names the field.
	ErrInvalidArgument = errcode.New("inventory_invalid_argument", "invalid inventory argument")
	// ErrSchemaTooNew: the database was migrated by a newer build of
	// Palyra-Go; this build does not know its schema and refuses to touch it.
	ErrSchemaTooNew = errcode.New("inventory_schema_too_new", "inventory database schema is newer than this build")
	// ErrReadOnly: a write to a database opened with OpenReadOnly, or a
	// database OpenReadOnly cannot read without migrating it first.
	ErrReadOnly = errcode.New("inventory_read_only", "inventory database is open read-only")
	// ErrBusy: another process held the database's write lock for longer than
	// the busy timeout (see WithBusyTimeout).
	ErrBusy = errcode.New("inventory_busy", "inventory database is busy")
	// ErrNoReviewPending: a review approval names a version that is not
	// awaiting review (its manifest needs none, or it was approved).
	ErrNoReviewPending = errcode.New("review_not_pending", "skill version is not awaiting review")
)

// invalid returns an ErrInvalidArgument naming the field at fault.
func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidArgument, field, fmt.Sprintf(format, args...))
}

// wrap prefixes an error from database/sql or SQLite with the operation that
// failed. SQLITE_BUSY and SQLITE_LOCKED also wrap ErrBusy.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if sqlitefile.IsBusy(err) {
		return fmt.Errorf("%w: %s: %w", ErrBusy, op, err)
	}
	return fmt.Errorf("inventory: %s: %w", op, err)
}
