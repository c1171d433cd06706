// Package install admits signed skills into a state directory and moves
// them through their lifecycle: install, quarantine, enable, disable,
// remove, re-audit. It is the one package that owns the install
// transaction: the files under <state>/skills and the rows of the inventory
// database (host/inventory) change only through an Installer, which keeps
// them in step, also across crashes and across processes.
//
//	in, err := install.Open(ctx, install.Config{StateDir: dir}) // runs Recover
//	r, err := install.OpenReadOnly(ctx, install.Config{StateDir: dir}) // List, Info, Check: changes nothing
//	...
//	defer in.Close()
//	res, err := in.Install(ctx, data, install.InstallOptions{})
//	switch {
//	case errors.Is(err, install.ErrAuditFailed), errors.Is(err, install.ErrPolicyViolation):
//		// installed, but quarantined: res.Status, res.Reasons say why
//	case errors.Is(err, install.ErrCapabilityEscalation):
//		// nothing installed: res.CapabilityDiff lists what the new version adds
//	case err != nil:
//		// nothing installed (bad signature, untrusted publisher, already installed, ...)
//	}
//
// # Admission
//
// Install runs, in this order: verify (host/artifact: structure, payload
// hash, signature; host/trust: the publisher's key), audit (host/audit:
// the static WASM and manifest checks, which include the operator profile's
// verdict, the provenance digests and the installed deny feed, host/feed,
// verified against the trust store at every audit), policy (host/policy:
// grants = manifest ∩ profile), then the checks against what is installed
// (same version: ErrAlreadyInstalled
// unless forced; another version: policy.Diff against the current
// version's decision, refused unless the escalation is accepted).
//
// A failed verification installs nothing. A failed audit or policy does not
// stop the install: the version is kept, quarantined, with the reasons
// recorded (Palyra's CLI refuses it instead, leaving nothing to inspect;
// a deny feed match is such a failed audit, with the entry's reason),
// and Install returns the result together with an error wrapping
// ErrAuditFailed or ErrPolicyViolation, so a caller cannot mistake it for a
// skill that may run. Only Enable with an override lifts a quarantine, and
// Enable first re-runs verification (without trust on first use), the
// audit and the policy on the artifact as it is on disk, refusing with the
// code of the first failure. Quarantines and disables are sticky: a forced
// reinstall, or a remove and reinstall, of a quarantined or disabled
// version keeps that status (the inventory keeps status rows on remove).
//
// # Upgrades
//
// A version whose status after the install is not active (it failed its
// audit, policy or precompile, or kept an earlier quarantine or disable)
// and that is above an active current version is held back: it is
// installed and quarantined, but the current version stays, so calls keep
// going to it. The hold (inventory.HeldBack: the code and message of why)
// is in InstallResult.HeldBack, Listing.HeldBack and Info.HeldBack. Enable
// of that version by name, once its re-checks pass, is the only way to
// make it current: it becomes active and current in one transaction
// (StatusResult.PreviousCurrent). Any other install makes the highest
// version that is not held back current; holds at or below the current
// version end. A first install, or one over a current version that is not
// active, is current as before (quarantined if it failed).
//
// # Trust on first use
//
// Trust on first use pins a key only with an install that commits: the
// decision is first made against a copy of the trust store in memory
// (verify), made again on a fresh read before any file is written
// (checkTrust, in memory too), and finally made under the store's lock,
// which is held across the inventory transaction; that transaction records
// the pin in the inventory's pending_trust_pins, the store is written
// before the lock is released, and the pending row is dropped after. A
// refused, cancelled or killed install before the transaction leaves no
// pin; a kill after it leaves a pending pin that Recover saves (and
// reports in RecoverReport.SavedPins). TestTOFUPinOnlyWithInstall kills a
// TOFU install at every step and checks that the skill and its pin are
// both there or both absent.
//
// # Layout
//
// The paths are host/statedir's Layout (Inventory, TrustStore, SkillDir,
// SkillLock, VersionDir), whose package comment maps the whole state
// directory; this is the part the installer owns:
//
//	<state>/inventory.db                                the inventory (source of truth)
//	<state>/skills/trust-store.json                     the trust store (Palyra's format)
//	<state>/skills/<skill_id>/.lock                     the skill's lock (flock)
//	<state>/skills/<skill_id>/<version>/                one installed version:
//	    artifact.palyra-skill                           the verified artifact, byte for byte
//	    install-metadata.json                           Palyra's install metadata
//	    skill.toml signature.json sbom.cdx.json provenance.json modules/... assets/...
//	<state>/skills/<skill_id>/.tmp-install-<random>/    staging and trash (never survives Recover)
//	<state>/skills/<skill_id>/.replaced-<version>/      the old copy during a forced reinstall
//
// Versions are directory names in canonical form (1.2.0). The extracted
// entries are written from the verified bytes, never re-read from the
// archive file.
//
// # Crash consistency
//
// The inventory is the source of truth and the file system is made to
// agree with it. An install (1) stages the whole version directory under a
// ".tmp-install-" name, fsyncing every file and directory; (2) for a forced
// reinstall, renames the installed directory to ".replaced-<version>" and
// fsyncs the skill directory; (3) renames the staging directory to
// <version> and fsyncs; (4) commits the inventory row, the current version
// (or the hold), the status row, its journal event and a new TOFU pin as
// pending in one SQLite transaction (synchronous=FULL), then saves that pin
// in the trust store; (5) deletes the set-aside copy. A SIGKILL or power
// loss at any point leaves one of these states, which Recover (run by Open,
// and by Install for its skill under the skill's lock) resolves:
//
//   - before (3): staging debris, and possibly the old copy set aside.
//     Staging is deleted; the set-aside copy, whose artifact SHA-256 is
//     the one the inventory records, is put back: the old state.
//   - between (3) and (4): a version directory the inventory does not
//     record (deleted: the old state), or for a forced reinstall a new
//     directory beside a set-aside copy the inventory still records (the
//     copy is put back: the old state).
//   - after (4): the set-aside copy no longer matches the inventory and is
//     deleted: the new state.
//
// Deletions go through a rename to a ".tmp-install-" name first, so a
// crash half way through deleting a directory never leaves a partial
// directory under a meaningful name. Remove commits the inventory first
// (rows and skill.removed events), then deletes the directories: a crash in
// between leaves directories without rows, which Recover deletes. The test
// TestCrashConsistency SIGKILLs a child process at every step boundary and
// at a hundred random moments and checks these invariants after each.
//
// Recover does not hash installed artifacts (that would make every Open
// read every artifact); Reaudit does, and quarantines a version whose
// artifact is missing or was modified.
//
// # Concurrency
//
// An Installer is safe for concurrent use, and any number of processes (the
// CLI, the daemon, Go apps) may share a state directory. Every operation on
// a skill holds that skill's lock, an exclusive flock on
// <state>/skills/<skill_id>/.lock (taken with a poll that honours ctx and
// Config.LockTimeout, then ErrLocked), so two installs of one skill never
// interleave their staging, renames and commit, and Recover never deletes
// the work of a live install (it skips a skill whose lock is held).
// Operations on different skills run in parallel; the inventory serializes
// their short commits. The kernel drops a dead process's flock, so a
// SIGKILLed installer leaves no stale lock. On platforms without flock the
// lock is per process only.
//
// # Events
//
// Every change is journaled in the inventory in the transaction that makes
// it, and published on Config.Bus after the commit, with the journal id:
// skill:installed or skill:updated (and skill:quarantined for a
// quarantined install), skill:enabled, skill:disabled, skill:quarantined,
// skill:removed, skill:crashlooping (MarkCrashLooping, which the host calls
// when its supervisor gives up on a sidecar: status rows have no other
// writer than the Installer).
//
// # Errors
//
// Every error wraps a sentinel with a stable code: already_installed,
// skill_not_found, capability_escalation, audit_failed, policy_violation,
// override_required, skill_quarantined, install_locked,
// installed_artifact_invalid, reserved_artifact_entry,
// install_invalid_argument, installer_closed, or one of host/artifact,
// host/trust, host/manifest and host/inventory.
package install
