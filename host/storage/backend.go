package storage

import (
	"context"
	"fmt"
)

// Backend is what the capability broker and the host use of a skill
// storage: one key space per skill id. *Store (SQLite, one machine) and
// the cluster's JetStream key-value backend (host/cluster) implement it
// with the same semantics, which are stated here once and checked for
// both by the shared behaviour table in host/storage/storagetest:
//
//   - Arguments are checked before anything is read or written: a skill
//     id by ValidateSkillID (ErrInvalidSkillID), a full key by the key
//     rules with MaxFullKeyBytes (a *KeyError wrapping ErrInvalidKey), a
//     value by MaxValueBytes (ErrValueTooLarge), a Quota by
//     ErrInvalidQuota, a list by CheckList.
//   - Get returns a found empty value as a non-nil empty slice, and
//     (nil, false) for a missing key.
//   - Put and CompareAndSwap judge the quota on the usage after the write,
//     atomically with it, so concurrent writers (in this process, another
//     process, another node) never pass it together: a write that would
//     raise the key count or the byte count (len(key) + len(value) summed)
//     above a non-zero limit fails with a *QuotaError (ErrQuotaExceeded);
//     a write that raises no count is never refused for it.
//   - CompareAndSwap writes only if the key holds expected (nil: the key is
//     absent; non-nil, even empty: exactly these bytes); of concurrent
//     swaps from one expected value exactly one succeeds. A comparison that
//     fails is not an error: the result says what the key holds.
//   - Delete reports whether the key was there.
//   - List returns the keys that start with a string prefix, in byte
//     order, strictly after the cursor, at most limit (0: DefaultListLimit);
//     next is the last key returned when more follow, "" at the end; keys
//     is never nil.
//   - Purge deletes a skill's whole key space and returns what it held;
//     Skills returns the usage of every skill holding a key.
//   - Every method fails with ErrClosed after Close. No error contains a
//     stored value.
type Backend interface {
	Get(ctx context.Context, skillID, fullKey string) ([]byte, bool, error)
	Put(ctx context.Context, skillID, fullKey string, value []byte, q Quota) error
	CompareAndSwap(ctx context.Context, skillID, fullKey string, expected, value []byte, q Quota) (CASResult, error)
	Delete(ctx context.Context, skillID, fullKey string) (bool, error)
	List(ctx context.Context, skillID, prefix string, limit int, cursor string) (keys []string, next string, err error)
	Usage(ctx context.Context, skillID string) (Usage, error)
	Purge(ctx context.Context, skillID string) (Usage, error)
	Skills(ctx context.Context) (map[string]Usage, error)
	Close() error
}

// Compile-time check: the SQLite store is a Backend.
var _ Backend = (*Store)(nil)

// CheckEntry checks the arguments of a single-key read or delete: the
// skill id and the full key. Backends call it first.
func CheckEntry(skillID, fullKey string) error {
	if err := ValidateSkillID(skillID); err != nil {
		return err
	}
	return validateFullKey(fullKey)
}

// CheckWrite checks the arguments of a write of value under fullKey with
// quota q: CheckEntry, MaxValueBytes and a non-negative quota.
func CheckWrite(skillID, fullKey string, value []byte, q Quota) error {
	if err := CheckEntry(skillID, fullKey); err != nil {
		return err
	}
	if len(value) > MaxValueBytes {
		return fmt.Errorf("%w: the value for key %q of skill %s is %d bytes, over the limit of %d bytes",
			ErrValueTooLarge, fullKey, skillID, len(value), MaxValueBytes)
	}
	if q.MaxKeys < 0 || q.MaxBytes < 0 {
		return fmt.Errorf("%w: MaxKeys %d and MaxBytes %d of skill %s must not be negative (0 is unlimited)",
			ErrInvalidQuota, q.MaxKeys, q.MaxBytes, skillID)
	}
	return nil
}

// CheckList checks the arguments of a List and returns the limit to use
// (DefaultListLimit for 0).
func CheckList(skillID, prefix string, limit int, cursor string) (int, error) {
	if err := ValidateSkillID(skillID); err != nil {
		return 0, err
	}
	if err := validateListPrefix(prefix); err != nil {
		return 0, err
	}
	if err := validateCursor(cursor); err != nil {
		return 0, err
	}
	switch {
	case limit == 0:
		return DefaultListLimit, nil
	case limit < 0 || limit > MaxListLimit:
		return 0, fmt.Errorf("%w: limit %d of a list of skill %s is outside 0..%d",
			ErrInvalidListLimit, limit, skillID, MaxListLimit)
	}
	return limit, nil
}
