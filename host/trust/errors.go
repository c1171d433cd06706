package trust

import (
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
)

// Sentinels. Every error returned by this package wraps exactly one of them,
// so callers use errors.Is (and errcode.Of for the stable code), never the
// message text.
var (
	// ErrInvalidStore: the trust-store file (or its rotation log) is too
	// large, is not valid JSON, has an unknown or duplicate key, or holds a
	// publisher name or key that does not normalize.
	ErrInvalidStore = errcode.New("invalid_trust_store", "invalid trust store")
	// ErrInvalidPublisher: a publisher name given to an API call is not an
	// identifier (trimmed, non-empty, only [a-z0-9._:-]).
	ErrInvalidPublisher = errcode.New("invalid_publisher", "invalid publisher")
	// ErrInvalidKey: a public key given to an API call is not an Ed25519
	// public key (32 bytes, or 64 hex characters).
	ErrInvalidKey = errcode.New("invalid_publisher_key", "invalid publisher key")
	// ErrUntrustedPublisher: the publisher is neither allowlisted nor pinned
	// and trust on first use was not allowed.
	ErrUntrustedPublisher = errcode.New("untrusted_publisher", "untrusted publisher")
	// ErrTrustedPublisherKeyMismatch: the publisher is allowlisted but the
	// observed key is not one of its allowlisted keys. There is no fallback
	// to trust on first use.
	ErrTrustedPublisherKeyMismatch = errcode.New("trusted_publisher_key_mismatch", "trusted publisher key mismatch")
	// ErrTOFUKeyMismatch: the publisher is pinned (trust on first use) to a
	// different key than the observed one.
	ErrTOFUKeyMismatch = errcode.New("tofu_key_mismatch", "tofu key mismatch")
	// ErrLocked: the trust-store lock could not be taken before the context
	// was done. The error also wraps the context's error.
	ErrLocked = errcode.New("trust_store_locked", "trust store is locked")
	// ErrInvalidRotation: a key rotation statement is malformed (too large,
	// bad JSON, unknown or missing field, bad key or value).
	ErrInvalidRotation = errcode.New("invalid_rotation", "invalid key rotation statement")
	// ErrRotationSignature: a signature of a key rotation statement does not
	// verify (old key or new key).
	ErrRotationSignature = errcode.New("rotation_signature_invalid", "key rotation signature invalid")
	// ErrRotationNotApplicable: the store does not currently trust the
	// statement's old key for its publisher, so there is nothing to rotate.
	ErrRotationNotApplicable = errcode.New("rotation_not_applicable", "key rotation not applicable")
	// ErrRotationReplayed: the statement is older than (or as old as, but
	// different from) a rotation already applied for the publisher; see
	// File.ApplyRotation.
	ErrRotationReplayed = errcode.New("rotation_replayed", "key rotation statement replayed")
	// ErrTampered: the trust-store file, or its seal, was changed outside
	// Palyra-Go: its content is not the content last sealed with the
	// integrity MAC. The store is refused until `palyra trust
	// accept-changes` re-seals it. Rejections are *TamperedError values.
	ErrTampered = errcode.New("trust_store_tampered", "trust store tampered")
	// ErrNoVaultKey is what a WithVaultKey function returns (wrapped) when
	// the vault has no key, so the File uses its own key file instead.
	ErrNoVaultKey = errcode.New("trust_store_no_vault_key", "no vault key for the trust-store MAC")
)

// DecisionError is the error returned for a rejected trust decision. It
// wraps ErrUntrustedPublisher, ErrTrustedPublisherKeyMismatch or
// ErrTOFUKeyMismatch (see Unwrap) and says who signed with what, and what was
// expected instead.
type DecisionError struct {
	// Err is the sentinel: ErrUntrustedPublisher,
	// ErrTrustedPublisherKeyMismatch or ErrTOFUKeyMismatch.
	Err error
	// Publisher is the publisher the artifact claims.
	Publisher string
	// ObservedKeyHex is the lower-case hex of the key that signed.
	ObservedKeyHex string
	// Expected lists, as lower-case hex, the keys the store trusts for the
	// publisher: the allowlisted keys, or the single TOFU pin. It is empty
	// for ErrUntrustedPublisher.
	Expected []string
}

// Error implements error.
func (e *DecisionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: publisher %q signed with key %s (%s)", e.Err.Error(), e.Publisher, e.ObservedKeyHex, keyIDHex(e.ObservedKeyHex))
	switch {
	case len(e.Expected) == 0:
		b.WriteString(", which is neither allowlisted nor pinned, and trust on first use is off")
	default:
		if e.Err == ErrTOFUKeyMismatch {
			b.WriteString(", but it is pinned to ")
		} else {
			b.WriteString(", but its allowlisted keys are ")
		}
		for i, k := range e.Expected {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%s)", k, keyIDHex(k))
		}
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *DecisionError) Unwrap() error { return e.Err }

// maxQuoted bounds how much of a hostile value an error message repeats.
const maxQuoted = 80

// quote returns s quoted with %q, cut to maxQuoted bytes first.
func quote(s string) string {
	if len(s) > maxQuoted {
		return fmt.Sprintf("%q... (%d bytes)", s[:maxQuoted], len(s))
	}
	return fmt.Sprintf("%q", s)
}
