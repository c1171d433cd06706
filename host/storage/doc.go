// Package storage is the per-skill key-value store behind the storage
// capability (sdk/ABI.md §5.3).
//
// # Its part in the whole
//
// A skill's guest code never touches the host's disk. A storage operation
// of a guest (get, put, cas, delete, list on a storage handle 30000+) travels
// from the sidecar to the capability broker in the supervisor; the broker
// checks the handle and the grant, maps the handle to the grant's prefix
// ("counters"), joins prefix and guest key with JoinKey
// ("counters/visits"), refuses writes through a read-only grant, and calls
// this package with the skill id and the full key. This package owns the
// key rules, the database, the quota and the usage counters.
//
// # Model
//
// Each skill id has one key space: a flat map from keys to byte values,
// shared by every version of the skill (an upgrade keeps its data, and
// `skills remove --purge-storage` calls Purge). A key is a '/'-separated
// path of 1 to MaxKeyBytes bytes of [A-Za-z0-9._/-] with no empty, "." or
// ".." segment; a full key (prefix + "/" + key) is at most MaxFullKeyBytes.
// A segment that only starts with a dot (".hidden") is allowed. A key
// that breaks a rule is refused with a *KeyError (ErrInvalidKey) whose
// Reason names the rule, e.g. `segment ".." is not allowed` or
// "byte 0x00 at offset 3 is not allowed".
//
// # Backends
//
// The broker and the host use a Backend, whose semantics (key rules,
// quota, compare-and-swap, list order and cursors, errors) are stated once
// on the interface. *Store, below, is the backend of one machine; a
// clustered node uses the cluster's JetStream key-value backend
// (host/cluster.KVStorage), which keeps each skill's key space as one
// record and applies this package's rules to it through Space. Both run
// the behaviour table of host/storage/storagetest.
//
// # Why a table and not files
//
// The store is one SQLite database, <state>/storage/storage.db, with the
// table entries(skill_id, key, value, updated_at), primary key (skill_id,
// key), and not a directory of files under an os.Root:
//
//   - Keys never become paths. "..", absolute keys, NUL bytes, backslashes,
//     symlinks, case-folding file systems and reserved file names cannot
//     escape or alias anything by construction: a key is only ever a bound
//     SQL parameter, and every statement is scoped by skill id, so no key,
//     prefix or cursor a guest passes reaches another skill's rows. The
//     key rules are still enforced strictly, as defence in depth and to
//     give the guest a clear error.
//   - A Put judges the quota and writes the value in one transaction
//     (BEGIN IMMEDIATE, so no other writer slips in between): concurrent
//     writers never pass the quota together, and a crash leaves the old
//     value or the new one, never a half-written file or a counter that
//     disagrees with the data. synchronous=FULL makes a returned Put
//     durable.
//   - An ordered listing with a cursor is an index range scan over the
//     primary key, not a directory walk and sort.
//   - One file (plus its WAL) to back up, copy or inspect.
//
// # Compare-and-swap
//
// CompareAndSwap writes a value only if the key holds an expected one (or
// is absent), reading and writing in one BEGIN IMMEDIATE transaction, so a
// guest can update a value by read, compute, swap and retry, and no update
// of a concurrent call (another instance of the skill, a hook running
// while a tool call does) is lost. A swap is a write like Put: same key
// rules, value limit and quota.
//
// # Quotas and usage
//
// The table usage(skill_id, keys, bytes) holds each skill's key count and
// byte count (len(key) + len(value) over its entries) and is updated in
// the same transaction as every write, so Usage is one row read and the
// quota check on the hot path costs O(1). A write is refused with a
// *QuotaError (ErrQuotaExceeded) when it would raise a count above its
// non-zero limit; a write that does not raise a count (replacing a value
// with a smaller one, deleting) is always allowed, so a skill whose quota
// the operator lowered below its usage can still shrink.
//
// # Listing
//
// List matches a string prefix of the full key as the range
// prefix <= key < upper bound (the prefix with its last byte incremented),
// never with LIKE: '_' is a legal key byte and a LIKE wildcard, so
// "a_" would match "ab". Keys come in byte order, strictly after the
// cursor; the returned cursor is the last key when more follow.
//
// # Schema and concurrency
//
// The schema version is PRAGMA user_version (SchemaVersion); Open
// migrates older files step by step and refuses newer ones with
// ErrSchemaTooNew. The file is in WAL mode: readers never wait for the
// writer. Writers of one Store queue in Go (honouring their contexts);
// writers of other processes (the CLI while the daemon runs) are waited
// for up to a busy timeout, then ErrBusy.
package storage
