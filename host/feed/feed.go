package feed

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/trust"
)

// Format constants.
const (
	// SchemaVersion is the only feed schema_version.
	SchemaVersion = 1
	// PayloadType is the DSSE payloadType of a deny feed.
	PayloadType = "application/vnd.palyra-go.deny-feed.v1+json"
	// MaxFileBytes bounds a feed file (the envelope): 4 MiB.
	MaxFileBytes = 4 << 20
	// MaxEntries bounds the entries of one feed.
	MaxEntries = 10000
	// MaxSignatures bounds the signatures of one envelope.
	MaxSignatures = 16
	// MaxTextBytes bounds an entry's reason and reference, and the issuer.
	MaxTextBytes = 1024
)

// Entry kinds.
const (
	// KindModuleSHA256 denies a module: the SHA-256 of a modules/*.wasm
	// file of an artifact.
	KindModuleSHA256 = "module_sha256"
	// KindArtifactSHA256 denies an artifact: the SHA-256 of the
	// .palyra-skill file.
	KindArtifactSHA256 = "artifact_sha256"
	// KindPublisherKey denies every artifact signed by a key: its Ed25519
	// public key as hex.
	KindPublisherKey = "publisher_key"
)

// Entry is one denial.
type Entry struct {
	// Kind is KindModuleSHA256, KindArtifactSHA256 or KindPublisherKey.
	Kind string `json:"kind"`
	// Value is 64 lower-case hex digits: a digest or a public key.
	Value string `json:"value"`
	// Reason says why (required); it becomes the quarantine reason.
	Reason string `json:"reason"`
	// Reference points to more (an advisory URL, a CVE id); optional.
	Reference string `json:"reference,omitempty"`
}

// Feed is a deny feed's document.
type Feed struct {
	SchemaVersion int       `json:"schema_version"`
	Issuer        string    `json:"issuer"`
	Serial        uint64    `json:"serial"`
	IssuedAt      time.Time `json:"issued_at"`
	Entries       []Entry   `json:"entries"`
}

// Envelope is the DSSE envelope of a feed file.
type Envelope struct {
	PayloadType string      `json:"payloadType"`
	Payload     string      `json:"payload"`
	Signatures  []Signature `json:"signatures"`
}

// Signature is one DSSE signature: keyid is the hex Ed25519 public key.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// Signed is a parsed feed file: the feed, its envelope and the decoded
// payload. Its signatures are not yet checked: Verify does that.
type Signed struct {
	Feed     Feed
	Envelope Envelope
	// Payload is the decoded payload: the bytes the signatures sign (in
	// DSSE's encoding).
	Payload []byte
	// KeyID is the key that verified, set by Verify.
	KeyID string

	index map[string]int // kind + "\x00" + value -> entry index
}

// PAE is DSSE's pre-authentication encoding of a payload: what each
// signature signs.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// Digest is the SHA-256 of the payload, as hex: the feed's identity.
func (s *Signed) Digest() string {
	sum := sha256.Sum256(s.Payload)
	return hex.EncodeToString(sum[:])
}

// Sign encodes f and signs it with each key, returning the envelope as
// indented JSON: how an issuer makes a feed file (`palyra feed sign`).
// f is validated as Parse would.
func Sign(f Feed, keys ...ed25519.PrivateKey) ([]byte, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no signing key", ErrInvalidFeed)
	}
	if f.Entries == nil {
		f.Entries = []Entry{}
	}
	f.IssuedAt = f.IssuedAt.UTC()
	payload, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("feed: encode: %w", err)
	}
	if _, err := parseFeed(payload); err != nil {
		return nil, err
	}
	env := Envelope{PayloadType: PayloadType, Payload: base64.StdEncoding.EncodeToString(payload)}
	for _, k := range keys {
		if len(k) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("%w: a signing key is %d bytes, want %d", ErrInvalidFeed, len(k), ed25519.PrivateKeySize)
		}
		env.Signatures = append(env.Signatures, Signature{
			KeyID: hex.EncodeToString(k.Public().(ed25519.PublicKey)),
			Sig:   base64.StdEncoding.EncodeToString(ed25519.Sign(k, PAE(PayloadType, payload))),
		})
	}
	out, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("feed: encode envelope: %w", err)
	}
	return append(out, '\n'), nil
}

// Parse decodes a feed file: the envelope, then the feed in its payload,
// strictly (unknown keys refused), within the limits. It checks no
// signature.
func Parse(data []byte) (*Signed, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: the feed file is %d bytes, over the %d-byte limit (MaxFileBytes)", ErrInvalidFeed, len(data), MaxFileBytes)
	}
	var env Envelope
	if err := strictDecode(data, &env); err != nil {
		return nil, fmt.Errorf("%w: envelope: %v", ErrInvalidFeed, err)
	}
	if env.PayloadType != PayloadType {
		return nil, fmt.Errorf("%w: payloadType %s, want %s", ErrInvalidFeed, quote(env.PayloadType), PayloadType)
	}
	if len(env.Signatures) == 0 {
		return nil, fmt.Errorf("%w: the envelope has no signature", ErrInvalidFeed)
	}
	if len(env.Signatures) > MaxSignatures {
		return nil, fmt.Errorf("%w: the envelope has %d signatures, over the limit of %d", ErrInvalidFeed, len(env.Signatures), MaxSignatures)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("%w: payload is not standard base64", ErrInvalidFeed)
	}
	s, err := parseFeed(payload)
	if err != nil {
		return nil, err
	}
	s.Envelope = env
	return s, nil
}

// parseFeed decodes and validates the feed document.
func parseFeed(payload []byte) (*Signed, error) {
	var f Feed
	if err := strictDecode(payload, &f); err != nil {
		return nil, fmt.Errorf("%w: payload: %v", ErrInvalidFeed, err)
	}
	if f.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%w: schema_version %d, want %d", ErrInvalidFeed, f.SchemaVersion, SchemaVersion)
	}
	if !validIssuer(f.Issuer) {
		return nil, fmt.Errorf("%w: issuer %s is not a publisher name (non-empty, only a-z, 0-9, '.', '_', ':' and '-')", ErrInvalidFeed, quote(f.Issuer))
	}
	if f.Serial == 0 {
		return nil, fmt.Errorf("%w: serial is missing or 0 (a positive integer the issuer increases with every feed)", ErrInvalidFeed)
	}
	if f.IssuedAt.IsZero() {
		return nil, fmt.Errorf("%w: issued_at is missing", ErrInvalidFeed)
	}
	if f.Entries == nil {
		return nil, fmt.Errorf("%w: entries is missing (an empty feed has \"entries\": [])", ErrInvalidFeed)
	}
	if len(f.Entries) > MaxEntries {
		return nil, fmt.Errorf("%w: the feed has %d entries, over the limit of %d (MaxEntries)", ErrInvalidFeed, len(f.Entries), MaxEntries)
	}
	s := &Signed{Feed: f, Payload: payload, index: make(map[string]int, len(f.Entries))}
	for i := range s.Feed.Entries {
		e := &s.Feed.Entries[i]
		where := fmt.Sprintf("entries[%d]", i)
		switch e.Kind {
		case KindModuleSHA256, KindArtifactSHA256, KindPublisherKey:
		default:
			return nil, fmt.Errorf("%w: %s: kind %s, want %s, %s or %s", ErrInvalidFeed, where, quote(e.Kind), KindModuleSHA256, KindArtifactSHA256, KindPublisherKey)
		}
		v := strings.ToLower(e.Value)
		if b, err := hex.DecodeString(v); err != nil || len(b) != 32 {
			return nil, fmt.Errorf("%w: %s: value is not 64 hex digits (%d bytes seen)", ErrInvalidFeed, where, len(e.Value))
		}
		e.Value = v
		if strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("%w: %s: reason is required", ErrInvalidFeed, where)
		}
		for name, t := range map[string]string{"reason": e.Reason, "reference": e.Reference} {
			if len(t) > MaxTextBytes {
				return nil, fmt.Errorf("%w: %s: %s is %d bytes, over the %d-byte limit", ErrInvalidFeed, where, name, len(t), MaxTextBytes)
			}
			if !utf8.ValidString(t) || strings.ContainsFunc(t, isControl) {
				return nil, fmt.Errorf("%w: %s: %s holds invalid UTF-8 or a control character", ErrInvalidFeed, where, name)
			}
		}
		k := e.Kind + "\x00" + v
		if j, dup := s.index[k]; dup {
			return nil, fmt.Errorf("%w: %s repeats entries[%d] (%s %s)", ErrInvalidFeed, where, j, e.Kind, v)
		}
		s.index[k] = i
	}
	return s, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// validIssuer is the trust store's publisher-name rule.
func validIssuer(s string) bool {
	if s == "" || len(s) > MaxTextBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// strictDecode decodes one JSON value into v, refusing unknown keys and
// trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// Verify checks that one of the envelope's signatures verifies with a key
// the trust store allowlists for the feed's issuer, and records that key
// in s.KeyID. Anything else (an issuer the store does not allowlist, only
// unknown or TOFU-pinned keys, bad signatures) is ErrUntrustedFeed.
func (s *Signed) Verify(store *trust.Store) error {
	issuer := s.Feed.Issuer
	keys := store.TrustedKeys(issuer)
	if len(keys) == 0 {
		return fmt.Errorf("%w: the trust store does not allowlist the issuer %s (add its key with palyra trust add %s <key>; a TOFU pin does not count)", ErrUntrustedFeed, quote(issuer), issuer)
	}
	trusted := make(map[string]bool, len(keys))
	for _, k := range keys {
		trusted[k] = true
	}
	pae := PAE(s.Envelope.PayloadType, s.Payload)
	var seen []string
	bad := ""
	for _, sig := range s.Envelope.Signatures {
		kid := strings.ToLower(sig.KeyID)
		if !trusted[kid] {
			seen = append(seen, shortKey(kid))
			continue
		}
		pub, _ := hex.DecodeString(kid)
		raw, err := base64.StdEncoding.DecodeString(sig.Sig)
		if err != nil || len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, pae, raw) {
			bad = shortKey(kid)
			continue
		}
		s.KeyID = kid
		return nil
	}
	if bad != "" {
		return fmt.Errorf("%w: the signature by %s's key %s does not verify", ErrUntrustedFeed, issuer, bad)
	}
	return fmt.Errorf("%w: no signature is by a key the trust store allowlists for %s (keys seen: %s)", ErrUntrustedFeed, issuer, strings.Join(seen, ", "))
}

// shortKey is the first 16 hex digits of a key, for messages.
func shortKey(k string) string {
	if len(k) > 16 {
		return k[:16] + "…"
	}
	return quote(k)
}

// Subject is what a feed is matched against: one artifact.
type Subject struct {
	// ArtifactSHA256 is the hex SHA-256 of the .palyra-skill file; "" when
	// unknown.
	ArtifactSHA256 string
	// PublisherKey is the hex Ed25519 key that signed the artifact.
	PublisherKey string
	// Modules maps each module entry path (modules/x.wasm) to its hex
	// SHA-256.
	Modules map[string]string
}

// Match is one entry that matched.
type Match struct {
	Entry
	// Target says what matched: the module path, "artifact" or
	// "publisher key".
	Target string `json:"target"`
}

// Match returns the entries that match sub: artifact first, then the
// publisher key, then modules in the order of paths given.
func (s *Signed) Match(sub Subject, modulePaths []string) []Match {
	var out []Match
	look := func(kind, value, target string) {
		if value == "" {
			return
		}
		if i, ok := s.index[kind+"\x00"+strings.ToLower(value)]; ok {
			out = append(out, Match{Entry: s.Feed.Entries[i], Target: target})
		}
	}
	look(KindArtifactSHA256, sub.ArtifactSHA256, "artifact")
	look(KindPublisherKey, sub.PublisherKey, "publisher key")
	for _, p := range modulePaths {
		look(KindModuleSHA256, sub.Modules[p], p)
	}
	return out
}

// Describe is the message of a match: what is denied, by which feed, why,
// and where to read more.
func (m Match) Describe(s *Signed) string {
	msg := fmt.Sprintf("%s %s is denied by the deny feed of %s (serial %d): %s", m.Target, shortValue(m.Kind, m.Value), s.Feed.Issuer, s.Feed.Serial, m.Reason)
	if m.Reference != "" {
		msg += " (" + m.Reference + ")"
	}
	return msg
}

func shortValue(kind, v string) string {
	if kind == KindPublisherKey {
		return v
	}
	return "sha256 " + v
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}
