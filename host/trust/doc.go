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
// through Store.ApplyRotation directly, or by hand edits, bypass it.//
// # Integrity
//
// Palyra keeps an integrity digest of the store in its vault; Palyra-Go
// seals the store with a MAC so that an edit made behind the host's back
// (a key added by hand, another tool) is refused, not trusted. The store
// file itself stays Palyra's format (Palyra rejects unknown keys), so the
// seal lives beside it, in "<path>.integrity.json" (File.SealPath):
//
//	{
//	  "version": 1,
//	  "key_source": "vault",
//	  "sealed": [
//	    {"store": {"trusted_publishers": {...}, "tofu_publishers": {...}}, "mac": "<hex>"}
//	  ]
//	}
//
// mac is HMAC-SHA256 over "palyra-go/trust-store/mac/v1\x00", the key source,
// a zero byte and the canonical encoding of the store (Store.Marshal, so
// re-indenting the file by hand changes nothing). The sealed content is
// kept so that a refusal can say what changed.
//
// The key, decided at every write: when the vault has a key (Config.Key,
// $PALYRA_VAULT_KEY, $PALYRA_VAULT_KEY_COMMAND, or an existing
// <state>/secrets/vault.key), the vault's HKDF-SHA256 subkey for
// "trust-store-mac" (vault.DeriveKey; the raw vault key is never used);
// otherwise 32 random bytes in "<path>.integrity.key" (mode 0600, created by
// the first write; File.IntegrityKeyPath). The seal records which source it
// was made with and is verified with that source, so a store sealed with the
// key file keeps loading after a vault key appears, and is re-sealed with
// the vault subkey at its next change. A store sealed with the vault key is
// refused when the vault key is not available (fail closed): give the
// process the vault key the host has. While the vault key is configured
// out of the state directory ($PALYRA_VAULT_KEY, a key command, an
// application's key), a seal made with the key file is refused too, so
// whoever can write the files beside the store cannot re-seal it with a
// key file of their own; after configuring such a key, an operator whose
// store was sealed with the key file runs accept-changes once. The
// configured vault key protects against anyone who cannot read it; the
// vault's own key file, and the store's key file, protect against hand
// edits and tools, not against someone who can read the state directory.
//
// Every change made through File (Update, Decide when it pins,
// ApplyRotation, AcceptChanges) is sealed in the same locked write, which
// stays crash-safe: the seal naming both the old and the new content is
// written first, then the store, then the seal naming the new content
// only; whatever step a crash interrupts, the store on disk verifies.
//
// File.Load (and so every decision, update and rotation) refuses a store
// whose content is not the sealed content, or whose seal does not verify,
// with a *TamperedError wrapping ErrTampered (code trust_store_tampered)
// that names the file, counts the keys added, removed and changed, and says
// what to do. An update never re-seals a tampered store. File.Review tells
// what differs without changing anything, and File.AcceptChanges re-seals
// the file as it is after its caller confirmed the review (`palyra trust
// accept-changes` shows the diff first).
//
// Migration: a store that has content but no seal (written before
// Palyra-Go sealed stores, or by Palyra) is adopted: the first Load seals it
// as it is and logs a warning naming its publishers. Refusing it instead
// would break every existing install on upgrade, and such a store was
// trusted as it was until then, so adopting it trusts nothing new, and the
// doctor says when a store is unsealed. An empty or missing store is never
// sealed on load.
//
// Deleting the seal does not make a sealed store look unsealed: whether a
// store was ever sealed is held with its key (the "sealed once" marker).
// For a key-file seal the marker is the key file, which the first seal
// creates; for a vault seal it is the vault entry SealedMarkerName(path)
// (global/node-local.skills.trust_store.sealed.<hash of the path>, never
// replicated by a cluster), written by every
// seal made with the vault key (a store sealed with the vault key before
// the marker existed gets it at its next change). A store with content, no
// seal and a marker is tampered (trust_store_tampered), and accept-changes
// recovers it after review. A store in which the seal is present but
// garbled is tampered too, never adopted.
package trust
