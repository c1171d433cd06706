// Package trust is the publisher trust store of Palyra skills: an allowlist
// of publisher keys plus trust on first use (TOFU). It makes the last step
// of artifact verification (step 12, after the signature has been checked):
// is the key that signed this artifact one the operator trusts for the
// publisher named in its manifest?
//
// # Format
//
// The store is Palyra's trust-store JSON file (SkillTrustStore), read and
// written so that Palyra and Palyra-Go can share one file:
//
//	{
//	  "trusted_publishers": {
//	    "acme": [
//	      "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"
//	    ]
//	  },
//	  "tofu_publishers": {}
//	}
//
// trusted_publishers maps a publisher to one or more allowlisted Ed25519
// public keys; tofu_publishers maps a publisher to the single key it was
// pinned to on first use. Keys are 64 lower-case hex characters. Parse
// documents the normalization rules; Store.Marshal writes the file exactly
// as serde_json's pretty printer does (plus a trailing newline). A missing
// or all-white-space file is an empty store. A file larger than MaxStoreSize
// is refused.
//
// # Decisions
//
// Store.Decide implements Palyra's decision table: an allowlisted publisher
// must sign with an allowlisted key (no fallback to TOFU), a pinned publisher
// must sign with its pinned key, and an unknown publisher is pinned only when
// the caller allows TOFU. Rejections are *DecisionError values wrapping
// ErrUntrustedPublisher, ErrTrustedPublisherKeyMismatch or ErrTOFUKeyMismatch;
// errcode.Of gives their stable codes (untrusted_publisher,
// trusted_publisher_key_mismatch, tofu_key_mismatch).
//
// # Concurrency
//
// A Store is a value in memory and is not safe for concurrent use. A File
// is: any number of goroutines and processes may call File.Decide,
// File.Update and File.ApplyRotation on the same path. Writers hold an
// exclusive flock on "<path>.lock", re-read the store under it and replace
// the file atomically (temporary file, fsync, rename, fsync of the
// directory), so no update is lost and no reader ever sees a half-written
// file. Waiting for the lock honours the caller's context. The lock is
// advisory; Palyra itself does not take it.
//
// # Key rotation
//
// Palyra has no way to move a publisher to a new key: a changed key is
// rejected and the operator must edit the file. This package adds key
// rotation statements (Rotation; the format is specified in ROTATION.md): a
// small signed JSON document in which the publisher's old key names its new
// key. The old key signs it (the publisher authorizes the move) and the new
// key countersigns it (proof of possession: nobody can rotate a publisher
// onto a key they do not hold, or onto someone else's key). Both sign the
// hex SHA-256 of a domain-separated, length-prefixed encoding of the fields,
// so a statement signature can never be mistaken for an artifact signature.
//
// Store.ApplyRotation moves trust only away from a key the store trusts now
// for that publisher: an allowlisted key is replaced in the list, a TOFU pin
// moves. A statement for a key the store does not trust is refused
// (ErrRotationNotApplicable), so a statement can never introduce a publisher
// or widen trust, and applying one twice is harmless. Whoever holds a
// trusted key can rotate it; that is no more than they could do by signing
// artifacts with it, and after a rotation the old key is no longer trusted.
//
// Replay: the store file has no room for history (Palyra rejects unknown
// keys), so Store.ApplyRotation cannot tell an old statement from a new one.
// That only matters when a publisher's keys go round in a circle (A→B, then
// B→A): the old A→B statement would then apply again. File.ApplyRotation
// closes that gap with a side file, "<path>.rotations.json", that records for
// each publisher the issued_at and digest of the newest statement applied;
// a different statement that is not strictly newer is refused
// (ErrRotationReplayed). Palyra ignores the side file. Rotations applied
// through Store.ApplyRotation directly, or by hand edits, bypass it.
package trust
