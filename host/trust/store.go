package trust

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// MaxStoreSize is the largest trust-store file Parse and File accept, in
// bytes. A store of 4 MiB holds tens of thousands of publishers; anything
// larger is not a trust store someone maintains by hand or by TOFU.
const MaxStoreSize = 4 << 20

// Decision is the outcome of a successful trust decision. The values are
// Palyra's serialization of SkillTrustDecision.
type Decision string

const (
	// DecisionAllowlisted: the publisher is in trusted_publishers and the
	// observed key is one of its keys.
	DecisionAllowlisted Decision = "allowlisted"
	// DecisionTOFUPinned: the publisher was pinned earlier (trust on first
	// use) to the observed key.
	DecisionTOFUPinned Decision = "tofu_pinned"
	// DecisionTOFUNewlyPinned: the publisher was unknown, trust on first use
	// was allowed, and the observed key has just been pinned.
	DecisionTOFUNewlyPinned Decision = "tofu_newly_pinned"
)

// Store is a trust store in memory: the allowlist (trusted_publishers, one or
// more keys per publisher) and the trust-on-first-use pins (tofu_publishers,
// one key per publisher). Keys are held as 64 lower-case hex characters.
//
// The zero value is an empty store ready to use. A Store is not safe for
// concurrent use; File is, across goroutines and processes.
type Store struct {
	trusted map[string][]string // sorted, de-duplicated, never empty
	tofu    map[string]string
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{} }

// storeJSON fixes the field order of the file: Palyra's struct order.
type storeJSON struct {
	TrustedPublishers map[string][]string `json:"trusted_publishers"`
	TOFUPublishers    map[string]string   `json:"tofu_publishers"`
}

// Parse decodes and normalizes a trust-store file (Palyra's SkillTrustStore).
//
// Empty or all-white-space input is an empty store. Otherwise the input must
// be one JSON object with at most the keys "trusted_publishers" (publisher →
// array of hex keys) and "tofu_publishers" (publisher → hex key); unknown,
// duplicate and null keys or values are errors. Publisher names must be
// identifiers: surrounding white space is trimmed, and the rest must be
// non-empty and only [a-z0-9._:-], so "Acme" is an error. Two names that trim
// to the same publisher are an error. Keys are trimmed and must be hex of 32
// bytes; they are lower-cased, sorted and de-duplicated. An allowlisted
// publisher needs at least one key. Input larger than MaxStoreSize is an
// error. Every error wraps ErrInvalidStore.
//
// Palyra takes the last of two duplicate JSON keys; Parse rejects them, so a
// file cannot say one thing to one reader and another to the next.
func Parse(data []byte) (*Store, error) {
	s, err := parseStore(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidStore, err)
	}
	return s, nil
}

// parseStore is Parse without the sentinel, so that callers can put the file
// name between the sentinel and the cause.
func parseStore(data []byte) (*Store, error) {
	if len(data) > MaxStoreSize {
		return nil, fmt.Errorf("%d bytes, the limit is %d bytes (MaxStoreSize)", len(data), MaxStoreSize)
	}
	s := &Store{}
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	if err := s.decode(data); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) decode(data []byte) error {
	d := newStrictDecoder(data)
	err := d.object("trust store", func(key string) error {
		switch key {
		case "trusted_publishers":
			return d.object(key, func(raw string) error {
				pub, err := normalizePublisher(raw)
				if err != nil {
					return fmt.Errorf("invalid trust-store publisher %s: %s", quote(raw), err.Error())
				}
				if _, dup := s.trusted[pub]; dup {
					return fmt.Errorf("duplicate trust-store publisher %s in trusted_publishers", quote(pub))
				}
				keys := []string{}
				err = d.array(key+"."+pub, func(int) error {
					rawKey, err := d.string("trusted key of publisher " + quote(pub))
					if err != nil {
						return err
					}
					k, err := normalizeKeyHex(rawKey)
					if err != nil {
						return fmt.Errorf("invalid trusted key for publisher %s: %s: %s", quote(pub), quote(rawKey), err.Error())
					}
					keys = append(keys, k)
					return nil
				})
				if err != nil {
					return err
				}
				if len(keys) == 0 {
					return fmt.Errorf("trusted publisher %s has no keys", quote(pub))
				}
				slices.Sort(keys)
				if s.trusted == nil {
					s.trusted = make(map[string][]string)
				}
				s.trusted[pub] = slices.Compact(keys)
				return nil
			})
		case "tofu_publishers":
			return d.object(key, func(raw string) error {
				pub, err := normalizePublisher(raw)
				if err != nil {
					return fmt.Errorf("invalid trust-store publisher %s: %s", quote(raw), err.Error())
				}
				if _, dup := s.tofu[pub]; dup {
					return fmt.Errorf("duplicate trust-store publisher %s in tofu_publishers", quote(pub))
				}
				rawKey, err := d.string("tofu key of publisher " + quote(pub))
				if err != nil {
					return err
				}
				k, err := normalizeKeyHex(rawKey)
				if err != nil {
					return fmt.Errorf("invalid tofu key for publisher %s: %s: %s", quote(pub), quote(rawKey), err.Error())
				}
				if s.tofu == nil {
					s.tofu = make(map[string]string)
				}
				s.tofu[pub] = k
				return nil
			})
		default:
			return fmt.Errorf("unknown key %s (want trusted_publishers or tofu_publishers)", quote(key))
		}
	})
	if err != nil {
		return err
	}
	return d.end()
}

// Marshal encodes the store in Palyra's file format, the way serde_json's
// pretty printer writes it: two-space indent, trusted_publishers first,
// publishers in byte order, keys sorted, and a trailing newline. The output
// is deterministic: equal stores give equal bytes.
func (s *Store) Marshal() ([]byte, error) {
	v := storeJSON{
		TrustedPublishers: make(map[string][]string, len(s.trusted)),
		TOFUPublishers:    make(map[string]string, len(s.tofu)),
	}
	maps.Copy(v.TrustedPublishers, s.trusted)
	maps.Copy(v.TOFUPublishers, s.tofu)
	return marshalPretty(v)
}

// Clone returns a deep copy of the store.
func (s *Store) Clone() *Store {
	c := &Store{}
	if len(s.trusted) > 0 {
		c.trusted = make(map[string][]string, len(s.trusted))
		for p, keys := range s.trusted {
			c.trusted[p] = slices.Clone(keys)
		}
	}
	if len(s.tofu) > 0 {
		c.tofu = maps.Clone(s.tofu)
	}
	return c
}

// Decide makes Palyra's trust decision (verification step 12) for an
// artifact of publisher signed with key:
//
//   - publisher allowlisted, key listed: DecisionAllowlisted;
//   - publisher allowlisted, key not listed: ErrTrustedPublisherKeyMismatch
//     (no fallback to trust on first use);
//   - publisher pinned to key: DecisionTOFUPinned;
//   - publisher pinned to another key: ErrTOFUKeyMismatch;
//   - publisher unknown and allowTOFU: key is pinned in s (s changes; the
//     caller saves it) and the result is DecisionTOFUNewlyPinned;
//   - publisher unknown: ErrUntrustedPublisher.
//
// The three rejections are *DecisionError values. publisher must already be
// an identifier, as manifest.publisher is (it is not trimmed here); otherwise
// the error wraps ErrInvalidPublisher. A key that is not 32 bytes gives
// ErrInvalidKey. A decision is returned only with a nil error.
//
// File.Decide does the same and persists a new pin.
func (s *Store) Decide(publisher string, key ed25519.PublicKey, allowTOFU bool) (Decision, error) {
	if err := checkPublisher(publisher); err != nil {
		return "", err
	}
	if len(key) != ed25519.PublicKeySize {
		return "", fmt.Errorf("%w: public key is %d bytes, want %d", ErrInvalidKey, len(key), ed25519.PublicKeySize)
	}
	observed := hex.EncodeToString(key)
	if keys, ok := s.trusted[publisher]; ok {
		if _, found := slices.BinarySearch(keys, observed); found {
			return DecisionAllowlisted, nil
		}
		return "", &DecisionError{Err: ErrTrustedPublisherKeyMismatch, Publisher: publisher, ObservedKeyHex: observed, Expected: slices.Clone(keys)}
	}
	if pinned, ok := s.tofu[publisher]; ok {
		if pinned == observed {
			return DecisionTOFUPinned, nil
		}
		return "", &DecisionError{Err: ErrTOFUKeyMismatch, Publisher: publisher, ObservedKeyHex: observed, Expected: []string{pinned}}
	}
	if !allowTOFU {
		return "", &DecisionError{Err: ErrUntrustedPublisher, Publisher: publisher, ObservedKeyHex: observed}
	}
	if s.tofu == nil {
		s.tofu = make(map[string]string)
	}
	s.tofu[publisher] = observed
	return DecisionTOFUNewlyPinned, nil
}

// AddTrusted adds keyHex to the allowlisted keys of publisher, as Palyra's
// --trusted-publisher publisher=<hex> does. Both are normalized as in Parse
// (trimmed; the key lower-cased); adding a key that is already listed changes
// nothing. The errors wrap ErrInvalidPublisher or ErrInvalidKey.
func (s *Store) AddTrusted(publisher, keyHex string) error {
	pub, err := normalizePublisher(publisher)
	if err != nil {
		return fmt.Errorf("%w %s: %s", ErrInvalidPublisher, quote(publisher), err.Error())
	}
	k, err := normalizeKeyHex(keyHex)
	if err != nil {
		return fmt.Errorf("%w for publisher %s: %s: %s", ErrInvalidKey, quote(pub), quote(keyHex), err.Error())
	}
	s.addTrusted(pub, k)
	return nil
}

// addTrusted adds a normalized key; it reports whether the store changed.
func (s *Store) addTrusted(pub, k string) bool {
	keys := s.trusted[pub]
	i, found := slices.BinarySearch(keys, k)
	if found {
		return false
	}
	if s.trusted == nil {
		s.trusted = make(map[string][]string)
	}
	s.trusted[pub] = slices.Insert(slices.Clone(keys), i, k)
	return true
}

// TrustedKeys returns the allowlisted keys of publisher as sorted lower-case
// hex, or nil when the publisher is not allowlisted.
func (s *Store) TrustedKeys(publisher string) []string {
	return slices.Clone(s.trusted[publisher])
}

// TOFUKey returns the key publisher is pinned to, as lower-case hex, and
// whether it is pinned.
func (s *Store) TOFUKey(publisher string) (string, bool) {
	k, ok := s.tofu[publisher]
	return k, ok
}

// PublisherInfo describes what a store holds for one publisher, for display.
type PublisherInfo struct {
	// Publisher is the publisher name.
	Publisher string
	// TrustedKeys are its allowlisted keys (sorted lower-case hex), if any.
	TrustedKeys []string
	// TOFUKey is the key it is pinned to (lower-case hex), or "". When the
	// publisher is also allowlisted, the allowlist decides and the pin is
	// not consulted.
	TOFUKey string
}

// KeyIDs returns the Palyra key ids ("ed25519:" and 16 hex characters) of
// the keys in TrustedKeys and then TOFUKey.
func (p PublisherInfo) KeyIDs() []string {
	var ids []string
	for _, k := range p.TrustedKeys {
		ids = append(ids, keyIDHex(k))
	}
	if p.TOFUKey != "" {
		ids = append(ids, keyIDHex(p.TOFUKey))
	}
	return ids
}

// Publishers lists every publisher of the store, allowlisted or pinned, in
// byte order of the name.
func (s *Store) Publishers() []PublisherInfo {
	names := slices.Sorted(maps.Keys(s.trusted))
	for p := range s.tofu {
		if _, ok := s.trusted[p]; !ok {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	out := make([]PublisherInfo, 0, len(names))
	for _, p := range names {
		out = append(out, PublisherInfo{Publisher: p, TrustedKeys: slices.Clone(s.trusted[p]), TOFUKey: s.tofu[p]})
	}
	return out
}

// normalizePublisher trims raw and checks it is an identifier.
func normalizePublisher(raw string) (string, error) {
	p := strings.TrimSpace(raw)
	if p == "" {
		return "", fmt.Errorf("empty publisher name")
	}
	for i := 0; i < len(p); i++ {
		if !isIdentByte(p[i]) {
			return "", fmt.Errorf("character %q at byte %d is not one of [a-z0-9._:-]", rune(p[i]), i)
		}
	}
	return p, nil
}

// checkPublisher checks an already normalized publisher name.
func checkPublisher(publisher string) error {
	p, err := normalizePublisher(publisher)
	if err != nil {
		return fmt.Errorf("%w %s: %s", ErrInvalidPublisher, quote(publisher), err.Error())
	}
	if p != publisher {
		return fmt.Errorf("%w %s: surrounding white space", ErrInvalidPublisher, quote(publisher))
	}
	return nil
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-'
}

// normalizeKeyHex trims raw, checks it is hex of an Ed25519 public key and
// returns it lower-cased.
func normalizeKeyHex(raw string) (string, error) {
	k := strings.TrimSpace(raw)
	b, err := hex.DecodeString(k)
	if err != nil {
		return "", fmt.Errorf("not hex")
	}
	if len(b) != ed25519.PublicKeySize {
		return "", fmt.Errorf("%d bytes, want %d", len(b), ed25519.PublicKeySize)
	}
	return hex.EncodeToString(b), nil
}

// keyID is Palyra's key_id: "ed25519:" and the lower-case hex of the first 8
// bytes of SHA-256 of the raw public key.
func keyID(pub []byte) string {
	sum := sha256.Sum256(pub)
	return "ed25519:" + hex.EncodeToString(sum[:8])
}

// keyIDHex is keyID of a hex-encoded key.
func keyIDHex(k string) string {
	b, err := hex.DecodeString(k)
	if err != nil {
		return "ed25519:?"
	}
	return keyID(b)
}
