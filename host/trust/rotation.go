package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"
)

// Key rotation statements: see ROTATION.md for the format and doc.go for
// the security argument.
const (
	// RotationSchemaVersion is the schema_version of the statements this
	// package writes and accepts.
	RotationSchemaVersion = 1
	// RotationContext is the domain-separation prefix of the signed bytes of
	// a statement. It differs from the artifact payload context
	// ("palyra.skill.payload.v1") within the first 8 bytes, so no statement
	// digest can be an artifact payload digest.
	RotationContext = "palyra.trust.rotation.v1"
	// MaxRotationSize is the largest statement ParseRotation accepts, in
	// bytes. A statement is about 500 bytes.
	MaxRotationSize = 16 << 10
	// MaxRotationReasonLen is the longest reason a statement may carry, in
	// bytes.
	MaxRotationReasonLen = 256
)

// Rotation is a key rotation statement: the publisher's old key names its new
// key. It is signed by the old key (the publisher authorizes the move) and
// countersigned by the new key (proof of possession, so nobody can rotate a
// publisher to a key they do not hold). Both signatures cover the same bytes;
// see Digest.
//
// Build one with NewRotation or ParseRotation; check it with Verify (which
// Store.ApplyRotation and File.ApplyRotation always call).
type Rotation struct {
	// Publisher is the publisher whose key moves; an identifier.
	Publisher string
	// OldKey is the key the publisher moves away from.
	OldKey ed25519.PublicKey
	// NewKey is the key the publisher moves to; it differs from OldKey.
	NewKey ed25519.PublicKey
	// IssuedAt is when the statement was made; only its milliseconds since
	// the Unix epoch are signed and encoded, and they must be positive.
	IssuedAt time.Time
	// Reason is an optional note for humans (at most MaxRotationReasonLen
	// bytes of UTF-8 without control characters). It is signed.
	Reason string
	// OldKeySignature is the Ed25519 signature by OldKey (64 bytes).
	OldKeySignature []byte
	// NewKeySignature is the Ed25519 signature by NewKey (64 bytes).
	NewKeySignature []byte
}

// RotationOutcome says what applying a rotation did.
type RotationOutcome string

const (
	// RotationAllowlistKeyReplaced: the old key was replaced by the new one
	// in the publisher's allowlisted keys.
	RotationAllowlistKeyReplaced RotationOutcome = "allowlist_key_replaced"
	// RotationTOFUPinMoved: the publisher's TOFU pin moved from the old key
	// to the new one.
	RotationTOFUPinMoved RotationOutcome = "tofu_pin_moved"
	// RotationAlreadyApplied: the store already trusts the new key and no
	// longer trusts the old one; nothing changed.
	RotationAlreadyApplied RotationOutcome = "already_applied"
)

// rotationJSON fixes the field order of the encoding.
type rotationJSON struct {
	SchemaVersion         int    `json:"schema_version"`
	Publisher             string `json:"publisher"`
	OldPublicKeyHex       string `json:"old_public_key_hex"`
	NewPublicKeyHex       string `json:"new_public_key_hex"`
	IssuedAtUnixMs        int64  `json:"issued_at_unix_ms"`
	Reason                string `json:"reason,omitempty"`
	OldKeySignatureBase64 string `json:"old_key_signature_base64"`
	NewKeySignatureBase64 string `json:"new_key_signature_base64"`
}

// NewRotation makes and signs a statement that moves publisher from oldKey
// to newKey. issuedAt is truncated to the millisecond. The arguments must
// satisfy the rules of Verify; otherwise the error wraps ErrInvalidRotation.
func NewRotation(publisher string, oldKey, newKey ed25519.PrivateKey, issuedAt time.Time, reason string) (*Rotation, error) {
	if len(oldKey) != ed25519.PrivateKeySize || len(newKey) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: private keys must be %d bytes", ErrInvalidRotation, ed25519.PrivateKeySize)
	}
	r := &Rotation{
		Publisher: publisher,
		OldKey:    oldKey.Public().(ed25519.PublicKey),
		NewKey:    newKey.Public().(ed25519.PublicKey),
		IssuedAt:  time.UnixMilli(issuedAt.UnixMilli()),
		Reason:    reason,
	}
	if err := r.checkFields(); err != nil {
		return nil, err
	}
	msg := []byte(r.Digest())
	r.OldKeySignature = ed25519.Sign(oldKey, msg)
	r.NewKeySignature = ed25519.Sign(newKey, msg)
	return r, nil
}

// ParseRotation decodes a statement strictly: one JSON object of at most
// MaxRotationSize bytes, with exactly the fields of ROTATION.md (reason
// optional), no unknown, duplicate or null field, keys as 64 lower-case hex
// characters and signatures as padded standard base64 of 64 bytes. It checks
// every field but not the signatures: call Verify. Errors wrap
// ErrInvalidRotation.
func ParseRotation(data []byte) (*Rotation, error) {
	if len(data) > MaxRotationSize {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d bytes (MaxRotationSize)", ErrInvalidRotation, len(data), MaxRotationSize)
	}
	r, err := decodeRotation(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRotation, err)
	}
	if err := r.checkFields(); err != nil {
		return nil, err
	}
	return r, nil
}

func decodeRotation(data []byte) (*Rotation, error) {
	var (
		r      Rotation
		seen   = map[string]bool{}
		schema int64
	)
	d := newStrictDecoder(data)
	err := d.object("rotation statement", func(key string) error {
		seen[key] = true
		var err error
		switch key {
		case "schema_version":
			schema, err = d.int64(key)
		case "publisher":
			r.Publisher, err = d.string(key)
		case "old_public_key_hex":
			r.OldKey, err = decodeKeyField(d, key)
		case "new_public_key_hex":
			r.NewKey, err = decodeKeyField(d, key)
		case "issued_at_unix_ms":
			var ms int64
			ms, err = d.int64(key)
			r.IssuedAt = time.UnixMilli(ms)
		case "reason":
			r.Reason, err = d.string(key)
		case "old_key_signature_base64":
			r.OldKeySignature, err = decodeSigField(d, key)
		case "new_key_signature_base64":
			r.NewKeySignature, err = decodeSigField(d, key)
		default:
			err = fmt.Errorf("unknown field %s", quote(key))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := d.end(); err != nil {
		return nil, err
	}
	for _, f := range []string{"schema_version", "publisher", "old_public_key_hex", "new_public_key_hex", "issued_at_unix_ms", "old_key_signature_base64", "new_key_signature_base64"} {
		if !seen[f] {
			return nil, fmt.Errorf("missing field %s", f)
		}
	}
	if schema != RotationSchemaVersion {
		return nil, fmt.Errorf("schema_version %d is not supported (want %d)", schema, RotationSchemaVersion)
	}
	return &r, nil
}

func decodeKeyField(d *strictDecoder, key string) (ed25519.PublicKey, error) {
	s, err := d.string(key)
	if err != nil {
		return nil, err
	}
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != ed25519.PublicKeySize || hex.EncodeToString(b) != s {
		return nil, fmt.Errorf("%s must be %d lower-case hex characters, got %s", key, 2*ed25519.PublicKeySize, quote(s))
	}
	return b, nil
}

func decodeSigField(d *strictDecoder, key string) ([]byte, error) {
	s, err := d.string(key)
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != ed25519.SignatureSize {
		return nil, fmt.Errorf("%s must be padded standard base64 of %d bytes, got %s", key, ed25519.SignatureSize, quote(s))
	}
	return b, nil
}

// Marshal encodes the statement as pretty JSON (two-space indent, the field
// order of ROTATION.md, reason left out when empty, trailing newline). It
// does not check the statement.
func (r *Rotation) Marshal() ([]byte, error) {
	return marshalPretty(rotationJSON{
		SchemaVersion:         RotationSchemaVersion,
		Publisher:             r.Publisher,
		OldPublicKeyHex:       hex.EncodeToString(r.OldKey),
		NewPublicKeyHex:       hex.EncodeToString(r.NewKey),
		IssuedAtUnixMs:        r.IssuedAt.UnixMilli(),
		Reason:                r.Reason,
		OldKeySignatureBase64: base64.StdEncoding.EncodeToString(r.OldKeySignature),
		NewKeySignatureBase64: base64.StdEncoding.EncodeToString(r.NewKeySignature),
	})
}

// preimage returns the bytes whose SHA-256 is the statement digest:
// RotationContext, then each field as u64_be(len) ‖ bytes, in the order
// publisher, old key (32 raw bytes), new key (32 raw bytes), issued_at
// (u64_be of the milliseconds, so 8 bytes) and reason.
func (r *Rotation) preimage() []byte {
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(r.IssuedAt.UnixMilli()))
	var b bytes.Buffer
	b.WriteString(RotationContext)
	for _, field := range [][]byte{[]byte(r.Publisher), r.OldKey, r.NewKey, ms[:], []byte(r.Reason)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(field)))
		b.Write(n[:])
		b.Write(field)
	}
	return b.Bytes()
}

// Digest returns the statement digest: the lower-case hex of SHA-256 over
// the framed fields (see ROTATION.md). Both keys sign the ASCII bytes of this
// 64-character string, as artifact signatures sign payload_sha256. The digest
// covers every field but the signatures, so it also identifies the statement.
func (r *Rotation) Digest() string {
	sum := sha256.Sum256(r.preimage())
	return hex.EncodeToString(sum[:])
}

// Verify checks the statement: schema rules (publisher an identifier, two
// different 32-byte keys, issued_at positive, reason short, printable UTF-8;
// errors wrap ErrInvalidRotation), then the old key's signature and the new
// key's signature over Digest (errors wrap ErrRotationSignature and say
// which one failed). It does not consult any store.
func (r *Rotation) Verify() error {
	if err := r.checkFields(); err != nil {
		return err
	}
	if len(r.OldKeySignature) != ed25519.SignatureSize || len(r.NewKeySignature) != ed25519.SignatureSize {
		return fmt.Errorf("%w: signatures must be %d bytes", ErrInvalidRotation, ed25519.SignatureSize)
	}
	msg := []byte(r.Digest())
	if !ed25519.Verify(r.OldKey, msg, r.OldKeySignature) {
		return fmt.Errorf("%w: old key %s did not sign statement %s for publisher %s", ErrRotationSignature, keyID(r.OldKey), msg, quote(r.Publisher))
	}
	if !ed25519.Verify(r.NewKey, msg, r.NewKeySignature) {
		return fmt.Errorf("%w: new key %s did not countersign statement %s for publisher %s", ErrRotationSignature, keyID(r.NewKey), msg, quote(r.Publisher))
	}
	return nil
}

// checkFields checks everything but the signatures.
func (r *Rotation) checkFields() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidRotation, fmt.Sprintf(format, args...))
	}
	if p, err := normalizePublisher(r.Publisher); err != nil {
		return bad("publisher %s: %s", quote(r.Publisher), err.Error())
	} else if p != r.Publisher {
		return bad("publisher %s: surrounding white space", quote(r.Publisher))
	}
	if len(r.OldKey) != ed25519.PublicKeySize || len(r.NewKey) != ed25519.PublicKeySize {
		return bad("public keys must be %d bytes", ed25519.PublicKeySize)
	}
	if bytes.Equal(r.OldKey, r.NewKey) {
		return bad("old and new key are the same key %s", keyID(r.OldKey))
	}
	if ms := r.IssuedAt.UnixMilli(); ms <= 0 {
		return bad("issued_at_unix_ms must be positive, got %d", ms)
	}
	if len(r.Reason) > MaxRotationReasonLen {
		return bad("reason is %d bytes, the limit is %d bytes", len(r.Reason), MaxRotationReasonLen)
	}
	if !utf8.ValidString(r.Reason) {
		return bad("reason is not UTF-8")
	}
	for _, c := range r.Reason {
		if unicode.IsControl(c) {
			return bad("reason contains control character %U", c)
		}
	}
	return nil
}

// ApplyRotation verifies r (see Verify) and moves r.Publisher from the old
// key to the new one in s:
//
//   - allowlisted with the old key: the old key is replaced by the new one
//     in the allowlist (and a TOFU pin on the old key, which the allowlist
//     overrides anyway, moves too): RotationAllowlistKeyReplaced;
//   - pinned to the old key: the pin moves: RotationTOFUPinMoved;
//   - already trusting the new key and not the old one (allowlisted or
//     pinned): nothing changes: RotationAlreadyApplied, so applying a
//     statement twice is harmless;
//   - otherwise, including an unknown publisher: an error wrapping
//     ErrRotationNotApplicable, and s is unchanged.
//
// A statement can only move trust away from a key the store trusts now, so
// it cannot introduce a publisher or add a key beside one that is trusted.
// The store keeps no history, so Store.ApplyRotation alone cannot refuse an
// old statement replayed after the keys went round in a circle (A→B, B→A,
// then A→B again); File.ApplyRotation can (see there).
func (s *Store) ApplyRotation(r *Rotation) (RotationOutcome, error) {
	if err := r.Verify(); err != nil {
		return "", err
	}
	oldHex, newHex := hex.EncodeToString(r.OldKey), hex.EncodeToString(r.NewKey)
	p := r.Publisher
	if keys, ok := s.trusted[p]; ok {
		_, hasOld := slices.BinarySearch(keys, oldHex)
		_, hasNew := slices.BinarySearch(keys, newHex)
		switch {
		case hasOld:
			next := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == oldHex })
			s.trusted[p] = next
			s.addTrusted(p, newHex)
			if s.tofu[p] == oldHex {
				s.tofu[p] = newHex
			}
			return RotationAllowlistKeyReplaced, nil
		case hasNew:
			return RotationAlreadyApplied, nil
		}
		return "", s.notApplicable(r, "its allowlisted keys are", keys)
	}
	if pinned, ok := s.tofu[p]; ok {
		switch pinned {
		case oldHex:
			s.tofu[p] = newHex
			return RotationTOFUPinMoved, nil
		case newHex:
			return RotationAlreadyApplied, nil
		}
		return "", s.notApplicable(r, "it is pinned to", []string{pinned})
	}
	return "", fmt.Errorf("%w: publisher %s is neither allowlisted nor pinned", ErrRotationNotApplicable, quote(p))
}

func (s *Store) notApplicable(r *Rotation, what string, keys []string) error {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = keyIDHex(k)
	}
	return fmt.Errorf("%w: publisher %s does not trust the old key %s: %s %v", ErrRotationNotApplicable, quote(r.Publisher), keyID(r.OldKey), what, ids)
}
