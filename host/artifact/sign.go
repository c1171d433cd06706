package artifact

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Algorithm is the only signature algorithm: pure Ed25519 over the ASCII
// hex payload hash.
const Algorithm = "ed25519-sha256"

// payloadContext is the domain-separation prefix of the payload hash.
const payloadContext = "palyra.skill.payload.v1"

// Signature is the content of signature.json. Field order is the order
// Palyra writes; only PayloadSHA256 is covered by the signature itself.
type Signature struct {
	Algorithm       string `json:"algorithm"`         // always Algorithm
	Publisher       string `json:"publisher"`         // equals the manifest's publisher
	KeyID           string `json:"key_id"`            // KeyID of the public key
	PublicKeyBase64 string `json:"public_key_base64"` // standard base64, padded
	PayloadSHA256   string `json:"payload_sha256"`    // 64 lowercase hex
	SignatureBase64 string `json:"signature_base64"`  // standard base64 of 64 bytes
	SignedAtUnixMS  int64  `json:"signed_at_unix_ms"` // informational, not signed
}

// PublicKey decodes PublicKeyBase64 (standard alphabet, canonical padding)
// and checks it is 32 bytes. It does not check Algorithm or KeyID.
func (s *Signature) PublicKey() (ed25519.PublicKey, error) {
	b, ok := decodeStdBase64(s.PublicKeyBase64)
	if !ok || len(b) != ed25519.PublicKeySize {
		return nil, &Error{Err: ErrSignatureVerification, Detail: "public_key_base64 is not 32 bytes of standard base64"}
	}
	return ed25519.PublicKey(b), nil
}

// marshal renders s the way Palyra does (serde_json pretty printing: two
// spaces, no HTML escaping, no trailing newline).
func (s *Signature) marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// PayloadSHA256 returns the payload hash of entries as 64 lowercase hex
// characters: SHA-256 over "palyra.skill.payload.v1" followed, for every
// entry except signature.json in byte-wise path order, by
// u64be(len(path)) ‖ path ‖ u64be(len(content)) ‖ content. Keys must be
// normalized entry paths.
func PayloadSHA256(entries map[string][]byte) string {
	names := make([]string, 0, len(entries))
	for name := range entries {
		if name != SignaturePath {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	h := sha256.New()
	io.WriteString(h, payloadContext)
	var n [8]byte
	for _, name := range names {
		binary.BigEndian.PutUint64(n[:], uint64(len(name)))
		h.Write(n[:])
		io.WriteString(h, name)
		data := entries[name]
		binary.BigEndian.PutUint64(n[:], uint64(len(data)))
		h.Write(n[:])
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// KeyID returns "ed25519:" followed by the lowercase hex of the first 8
// bytes of SHA-256(pub). It is a display and consistency label only; trust
// decisions compare whole keys.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(sum[:8])
}

// sha256Hex returns the lowercase hex SHA-256 of b.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ParseSigningKey reads an Ed25519 signing key (the 32-byte seed) in any of
// the forms Palyra accepts, tried in this order: exactly 32 raw bytes; 32
// bytes after trimming ASCII white space; hex that decodes to 32 bytes;
// standard base64 (canonical padding) that decodes to 32 bytes. Anything
// else is an *Error wrapping ErrInvalidSigningKey whose Actual is the
// trimmed length; the key material never appears in the error.
func ParseSigningKey(b []byte) (ed25519.PrivateKey, error) {
	if len(b) == ed25519.SeedSize {
		return ed25519.NewKeyFromSeed(b), nil
	}
	t := bytes.Trim(b, " \t\n\r\f")
	if len(t) == ed25519.SeedSize {
		return ed25519.NewKeyFromSeed(t), nil
	}
	if utf8.Valid(t) {
		text := strings.TrimSpace(string(t))
		if seed, err := hex.DecodeString(text); err == nil && len(seed) == ed25519.SeedSize {
			return ed25519.NewKeyFromSeed(seed), nil
		}
		if seed, ok := decodeStdBase64(text); ok && len(seed) == ed25519.SeedSize {
			return ed25519.NewKeyFromSeed(seed), nil
		}
	}
	return nil, &Error{
		Err:    ErrInvalidSigningKey,
		Detail: fmt.Sprintf("want a 32-byte seed as raw bytes, hex or standard base64, got %d bytes", len(t)),
		Actual: int64(len(t)),
	}
}

// decodeStdBase64 decodes standard base64 the way Rust's base64 STANDARD
// engine does: standard alphabet, '=' padding required, canonical trailing
// bits, and no embedded line breaks (which Go's decoder would skip).
func decodeStdBase64(s string) ([]byte, bool) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, false
	}
	return b, true
}

// signPayload signs the ASCII hex payload hash with key and returns the
// signature document.
func signPayload(key ed25519.PrivateKey, publisher, payloadSHA256 string, signedAtMS int64) Signature {
	pub := key.Public().(ed25519.PublicKey)
	sig := ed25519.Sign(key, []byte(payloadSHA256))
	return Signature{
		Algorithm:       Algorithm,
		Publisher:       publisher,
		KeyID:           KeyID(pub),
		PublicKeyBase64: base64.StdEncoding.EncodeToString(pub),
		PayloadSHA256:   payloadSHA256,
		SignatureBase64: base64.StdEncoding.EncodeToString(sig),
		SignedAtUnixMS:  signedAtMS,
	}
}

// verifySignature runs steps 8 of the verification order: algorithm, key
// decode, key_id, signature decode and Ed25519 verification of the hex
// string. Every failure is ErrSignatureVerification, with a detail that
// names the check but never echoes attacker bytes.
func verifySignature(s *Signature, payloadSHA256 string) (ed25519.PublicKey, error) {
	fail := func(detail string) error {
		return &Error{Err: ErrSignatureVerification, Path: SignaturePath, Detail: detail}
	}
	if s.Algorithm != Algorithm {
		return nil, fail("algorithm is not " + Algorithm)
	}
	pub, err := s.PublicKey()
	if err != nil {
		return nil, fail("public_key_base64 is not 32 bytes of standard base64")
	}
	if s.KeyID != KeyID(pub) {
		return nil, fail("key_id does not match the public key")
	}
	sig, ok := decodeStdBase64(s.SignatureBase64)
	if !ok || len(sig) != ed25519.SignatureSize {
		return nil, fail("signature_base64 is not 64 bytes of standard base64")
	}
	if !ed25519.Verify(pub, []byte(payloadSHA256), sig) {
		return nil, fail("ed25519 signature does not verify")
	}
	return pub, nil
}

// signatureFields lists the fields of signature.json; all are required.
var signatureFields = []string{
	"algorithm", "publisher", "key_id", "public_key_base64",
	"payload_sha256", "signature_base64", "signed_at_unix_ms",
}

// parseSignature decodes signature.json strictly, as serde does for
// Palyra's SkillArtifactSignature: a single JSON object, valid UTF-8, every
// field present exactly once with the right type (strings, and an integer
// that fits i64), no unknown field, nothing after the object.
func parseSignature(data []byte) (Signature, error) {
	var s Signature
	bad := func(detail string, cause error) (Signature, error) {
		return Signature{}, &Error{Err: ErrInvalidSignatureDocument, Path: SignaturePath, Detail: detail, Cause: cause}
	}
	if !utf8.Valid(data) {
		return bad("not valid UTF-8", nil)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil {
		return bad("not JSON", err)
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return bad("not a JSON object", nil)
	}
	seen := make(map[string]bool, len(signatureFields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad("not JSON", err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return bad("duplicate field "+strconv.Quote(key), nil)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return bad("not JSON", err)
		}
		var ferr error
		switch key {
		case "algorithm":
			s.Algorithm, ferr = jsonString(raw)
		case "publisher":
			s.Publisher, ferr = jsonString(raw)
		case "key_id":
			s.KeyID, ferr = jsonString(raw)
		case "public_key_base64":
			s.PublicKeyBase64, ferr = jsonString(raw)
		case "payload_sha256":
			s.PayloadSHA256, ferr = jsonString(raw)
		case "signature_base64":
			s.SignatureBase64, ferr = jsonString(raw)
		case "signed_at_unix_ms":
			s.SignedAtUnixMS, ferr = strconv.ParseInt(string(raw), 10, 64)
			if ferr != nil {
				ferr = errors.New("want an integer that fits in 64 bits")
			}
		default:
			return bad("unknown field "+strconv.Quote(key), nil)
		}
		if ferr != nil {
			return bad("field "+strconv.Quote(key), ferr)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return bad("not JSON", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("trailing data after the JSON object", nil)
	}
	for _, f := range signatureFields {
		if !seen[f] {
			return bad("missing field "+strconv.Quote(f), nil)
		}
	}
	return s, nil
}

// jsonString decodes raw as a JSON string; null and other types fail.
func jsonString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf("want a string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}
