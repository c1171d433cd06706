// Package inventory is the durable record of installed skills and their
// status: the one place of truth for what is installed, which version of
// each skill is current, whether a version may run, and what happened to it.
// The CLI, the daemon and Go apps that embed the host read and write the
// same SQLite database, <state>/inventory.db (statedir.Layout.Inventory), through this
// package (database/sql with modernc.org/sqlite: pure Go, no cgo).
//
// # Tables
//
//   - skills: one row per installed (skill_id, version): publisher, hashes,
//     signing key, trust decision, source, install directory (relative to
//     the state directory), the manifest as JSON, the audit report and the
//     grants accepted at install, the secrets that were missing. current
//     marks the version that runs when none is named; whenever a skill has
//     versions exactly one is current (a partial unique index allows at
//     most one and every write keeps one). Versions are compared as numbers
//     (1.10.0 is above 1.9.0), never as strings.
//   - skill_status: Palyra's table (PRIMARY KEY (skill_id, version)) with the
//     statuses active, quarantined, disabled and crashlooping, enforced by
//     a CHECK constraint. An upsert keeps created_at; a blank reason is NULL.
//   - skill_events: the append-only journal. Every status change writes one
//     event in the same transaction, so StatusHistory is complete.
//   - skills.held_back_*: a version an upgrade installed without making it
//     current (Tx.HoldBack: it failed its checks while an active version
//     was current), with the code and message of why; Entry.HeldBack. The
//     hold ends when the version becomes current, and a version chosen as
//     current because the current one was removed is the highest that is
//     not held back.
//   - pending_trust_pins: a trust-on-first-use pin written in an install's
//     transaction and deleted once the trust store has it, so that the pin
//     is part of the install's commit (host/install saves what a crash
//     left, on open).
//   - schema_migrations: the numbered migration steps applied (see
//     SchemaVersion). A database migrated by a newer build is refused with
//     ErrSchemaTooNew rather than misread.
//
// Unlike Palyra, the installer writes a status row in the same transaction
// as the inventory row, and the status a caller checks is that of the version
// that will run: DB.Skill returns a version together with its own status
// row, and Status with no version means the current version, not the most
// recently changed one. A version without a status row is not eligible.
//
// # Crash consistency
//
// Writes happen only inside DB.Update, one SQLite transaction: an install
// commits its skill row, its status row and its event together, or nothing.
// A crash, an error returned by the function or a panic in it leaves the
// database as it was. Commits are durable when Update returns
// (synchronous=FULL).
//
//	err := db.Update(ctx, func(tx *inventory.Tx) error {
//		if err := tx.PutSkill(rec, inventory.PutOptions{}); err != nil {
//			return err
//		}
//		return tx.SetStatus(inventory.StatusChange{
//			SkillID: rec.SkillID, Version: rec.Version,
//			Status: inventory.StatusActive, Principal: "user:local",
//			Kind: inventory.EventInstalled,
//		})
//	})
//
// # Concurrency
//
// A DB is safe for concurrent use by many goroutines, and several processes
// may open the same file at once. The database runs in WAL mode, so readers
// never wait for a writer and a writer never waits for readers. Writers
// queue at three gates: one at a time per DB in Go; one at a time across
// processes through an flock on the sibling file "<path>.lock", polled
// often enough that a writer that has waited long is not starved; and
// SQLite's own write lock, taken up front (BEGIN IMMEDIATE, so two writers
// never deadlock upgrading a read lock), which also keeps out writers that
// do not use this package. A writer that cannot get in within the busy
// timeout (WithBusyTimeout, DefaultBusyTimeout) fails with ErrBusy; its ctx
// can end the wait sooner. Opening an up-to-date database takes no lock; the
// switch of a new file to WAL and the migrations are made under the writer
// lock, one migration step per transaction, so concurrent first opens of a
// new file are safe.
//
// # Errors
//
// Errors caused by the caller or by the state of the database start with
// what failed and wrap a sentinel (ErrNotFound, ErrAlreadyInstalled,
// ErrInvalidStatus, ErrNoStatus, ErrInvalidArgument, ErrSchemaTooNew,
// ErrBusy) whose stable code errcode.Of reports; I/O failures wrap their
// cause.
package inventory
