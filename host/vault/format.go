package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// File format limits and constants.
const (
	// FormatVersion is the version of vault.json this package reads and
	// writes; a file with any other version is refused.
	FormatVersion = 1
	// MaxSecretBytes is the largest secret value.
	MaxSecretBytes = 64 << 10
	// MaxEntries is the largest number of secrets in one vault.
	MaxEntries = 10000
	// MaxVaultFileBytes is the largest vault.json read or written.
	MaxVaultFileBytes = 32 << 20
	// KeyBytes is the size of the vault key (AES-256).
	KeyBytes = 32
)

const (
	nonceBytes = 12 // the standard GCM nonce
	tagBytes   = 16 // the GCM tag
	// aadPrefix starts the additional data of every sealed entry; the
	// entry's full name follows, so a ciphertext only opens under its name.
	aadPrefix = "palyra-vault-v1\x00"
	// keyCheckAAD and keyCheckPlain make the key check. The AAD has no '/',
	// so it is never the AAD of an entry.
	keyCheckAAD   = aadPrefix + "key-check"
	keyCheckPlain = "palyra vault key check v1"
)

// fileDoc is vault.json as written.
type fileDoc struct {
	Version  int                 `json:"version"`
	KeyCheck string              `json:"key_check,omitempty"`
	Entries  map[string]entryDoc `json:"entries"`
}

type entryDoc struct {
	Nonce      string `json:"nonce"`
	Ciphertext string `json:"ciphertext"`
	UpdatedAt  string `json:"updated_at"`
}

// sealedEntry is one parsed entry: still encrypted.
type sealedEntry struct {
	nonce      []byte
	ciphertext []byte
	updatedAt  time.Time
}

// state is a parsed vault.json.
type state struct {
	keyCheck []byte // nonce || sealed keyCheckPlain; nil in a new vault
	entries  map[Name]sealedEntry
}

func newState() *state { return &state{entries: map[Name]sealedEntry{}} }

// parseState parses and checks vault.json; where names the file in errors.
// Every entry's name must be valid and every field well formed; nothing is
// decrypted. Errors wrap ErrCorrupt.
func parseState(data []byte, where string) (*state, error) {
	if len(data) > MaxVaultFileBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrFileTooLarge, where, len(data), MaxVaultFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc fileDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %s: not a vault document: %v", ErrCorrupt, where, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: data after the vault document", ErrCorrupt, where)
	}
	if doc.Version != FormatVersion {
		return nil, fmt.Errorf("%w: %s: version is %d, want %d", ErrCorrupt, where, doc.Version, FormatVersion)
	}
	if len(doc.Entries) > MaxEntries {
		return nil, fmt.Errorf("%w: %s holds %d entries, over the %d-entry limit", ErrCorrupt, where, len(doc.Entries), MaxEntries)
	}
	st := newState()
	if doc.KeyCheck != "" {
		kc, err := base64.StdEncoding.DecodeString(doc.KeyCheck)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: key_check is not base64", ErrCorrupt, where)
		}
		if want := nonceBytes + len(keyCheckPlain) + tagBytes; len(kc) != want {
			return nil, fmt.Errorf("%w: %s: key_check is %d bytes, want %d", ErrCorrupt, where, len(kc), want)
		}
		st.keyCheck = kc
	} else if len(doc.Entries) > 0 {
		return nil, fmt.Errorf("%w: %s holds %d entries but no key_check", ErrCorrupt, where, len(doc.Entries))
	}
	for raw, e := range doc.Entries {
		name, err := ParseName(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: entry %q: %w", ErrCorrupt, where, cut(raw, 80), err)
		}
		se, err := parseEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: entry %q: %s", ErrCorrupt, where, raw, err)
		}
		st.entries[name] = se
	}
	return st, nil
}

// parseEntry checks one entry's fields; the error is a bare reason.
func parseEntry(e entryDoc) (sealedEntry, error) {
	nonce, err := base64.StdEncoding.DecodeString(e.Nonce)
	if err != nil {
		return sealedEntry{}, errors.New("nonce is not base64")
	}
	if len(nonce) != nonceBytes {
		return sealedEntry{}, fmt.Errorf("nonce is %d bytes, want %d", len(nonce), nonceBytes)
	}
	if limit := base64.StdEncoding.EncodedLen(MaxSecretBytes + tagBytes); len(e.Ciphertext) > limit {
		return sealedEntry{}, fmt.Errorf("ciphertext is %d base64 bytes, over the %d-byte limit", len(e.Ciphertext), limit)
	}
	ct, err := base64.StdEncoding.DecodeString(e.Ciphertext)
	if err != nil {
		return sealedEntry{}, errors.New("ciphertext is not base64")
	}
	if len(ct) <= tagBytes || len(ct) > MaxSecretBytes+tagBytes {
		return sealedEntry{}, fmt.Errorf("ciphertext is %d bytes, want %d to %d", len(ct), tagBytes+1, MaxSecretBytes+tagBytes)
	}
	t, err := time.Parse(time.RFC3339, e.UpdatedAt)
	if err != nil {
		return sealedEntry{}, fmt.Errorf("updated_at %q is not an RFC 3339 time", cut(e.UpdatedAt, 40))
	}
	return sealedEntry{nonce: nonce, ciphertext: ct, updatedAt: t.UTC()}, nil
}

// marshal writes the state as vault.json: indented, entries in name order
// (encoding/json sorts map keys), with a trailing newline.
func (st *state) marshal() ([]byte, error) {
	doc := fileDoc{Version: FormatVersion, Entries: make(map[string]entryDoc, len(st.entries))}
	if st.keyCheck != nil {
		doc.KeyCheck = base64.StdEncoding.EncodeToString(st.keyCheck)
	}
	for n, e := range st.entries {
		doc.Entries[n.String()] = entryDoc{
			Nonce:      base64.StdEncoding.EncodeToString(e.nonce),
			Ciphertext: base64.StdEncoding.EncodeToString(e.ciphertext),
			UpdatedAt:  e.updatedAt.UTC().Format(time.RFC3339Nano),
		}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("vault: encode vault file: %w", err)
	}
	return append(data, '\n'), nil
}

// newAEAD returns AES-256-GCM under key.
func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeyBytes {
		return nil, fmt.Errorf("%w: key is %d bytes, want %d", ErrKeyInvalid, len(key), KeyBytes)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("vault: aes: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("vault: gcm: %w", err)
	}
	return aead, nil
}

// entryAAD binds a ciphertext to its entry's full name.
func entryAAD(n Name) []byte { return []byte(aadPrefix + n.String()) }

// sealWithNonce encrypts plain under a fresh random nonce and returns the
// nonce and the ciphertext.
func sealWithNonce(aead cipher.AEAD, plain, aad []byte) (nonce, ct []byte, err error) {
	nonce = make([]byte, nonceBytes)
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, fmt.Errorf("vault: random nonce: %w", err)
	}
	return nonce, aead.Seal(nil, nonce, plain, aad), nil
}

// newKeyCheck seals the key-check constant.
func newKeyCheck(aead cipher.AEAD) ([]byte, error) {
	nonce, ct, err := sealWithNonce(aead, []byte(keyCheckPlain), []byte(keyCheckAAD))
	if err != nil {
		return nil, err
	}
	return append(nonce, ct...), nil
}

// keyMatches reports whether aead opens the key check.
func keyMatches(aead cipher.AEAD, kc []byte) bool {
	if len(kc) < nonceBytes {
		return false
	}
	plain, err := aead.Open(nil, kc[:nonceBytes], kc[nonceBytes:], []byte(keyCheckAAD))
	return err == nil && string(plain) == keyCheckPlain
}
