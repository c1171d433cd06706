package trust

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// Key sources of the integrity MAC, as recorded in the seal file.
const (
	// KeySourceVault: the MAC key is the vault's "trust-store-mac" subkey
	// (vault.DeriveKey, HKDF-SHA256 of the vault key).
	KeySourceVault = "vault"
	// KeySourceKeyFile: the MAC key is the 32 random bytes of the key file
	// next to the store (IntegrityKeyPath), used when no vault key exists.
	KeySourceKeyFile = "key_file"
)

// VaultKeyPurpose is the purpose string a File's vault key function should
// pass to vault.DeriveKey.
const VaultKeyPurpose = "trust-store-mac"

// macDomain prefixes every MAC input, with the key source after it.
const macDomain = "palyra-go/trust-store/mac/v1\x00"

// integrityKeyBytes is the size of a MAC key.
const integrityKeyBytes = 32

// Option configures a File.
type Option func(*File)

// WithVaultKey gives the File the vault subkey for the integrity MAC. fn
// returns the 32-byte subkey (vault.DeriveKey(ctx, VaultKeyPurpose)), or an
// error wrapping ErrNoVaultKey when the vault has no key, or another error,
// which fails the operation. Without this option the File behaves as if the
// vault had no key.
//
// The key is taken as configured out of the state directory's reach (an
// application's key, $PALYRA_VAULT_KEY, a key command): while it is
// available, a seal made with the key file is refused, so that whoever can
// write the files beside the store cannot re-seal it with a key file of
// their own. WithVault relaxes this when the vault key is itself a file in
// the state directory.
func WithVaultKey(fn func(ctx context.Context) ([]byte, error)) Option {
	return func(f *File) { f.vaultKey, f.vaultStrict = fn, true }
}

// WithLogger sets the logger the File reports adoptions and re-seals to.
func WithLogger(l hclog.Logger) Option {
	return func(f *File) {
		if l != nil {
			f.log = l
		}
	}
}

// SealPath returns the seal file, "<path>.integrity.json": the MAC and the
// last sealed content of the store.
func (f *File) SealPath() string { return f.path + ".integrity.json" }

// IntegrityKeyPath returns the fallback MAC key file,
// "<path>.integrity.key" (mode 0600), used when no vault key exists.
func (f *File) IntegrityKeyPath() string { return f.path + ".integrity.key" }

// sealJSON is the seal file.
type sealJSON struct {
	Version   int          `json:"version"`
	KeySource string       `json:"key_source"`
	Sealed    []sealedJSON `json:"sealed"`
}

// sealedJSON is one sealed content: the store, canonical, and its MAC.
type sealedJSON struct {
	Store json.RawMessage `json:"store"`
	MAC   string          `json:"mac"`
}

// IntegrityStatus says how a store file stands against its seal.
type IntegrityStatus string

const (
	// IntegrityIntact: the store's content is the sealed content.
	IntegrityIntact IntegrityStatus = "intact"
	// IntegrityUnsealed: the store has no seal yet (a store from before
	// integrity, or from Palyra); the first load adopts it.
	IntegrityUnsealed IntegrityStatus = "unsealed"
	// IntegrityTampered: the store, or its seal, changed behind the host's
	// back.
	IntegrityTampered IntegrityStatus = "tampered"
)

// Review is what a store file holds compared with what was last sealed.
type Review struct {
	// Path is the store file.
	Path string `json:"trust_store"`
	// Status is intact, unsealed or tampered.
	Status IntegrityStatus `json:"status"`
	// Reason says why the store is not intact ("" when it is).
	Reason string `json:"reason,omitempty"`
	// KeySource is the key source of the seal (KeySourceVault or
	// KeySourceKeyFile), "" when there is none.
	KeySource string `json:"key_source,omitempty"`
	// BaselineVerified reports that Changes are against content whose MAC
	// verified; when false they are against an empty store, and every
	// publisher shows as added.
	BaselineVerified bool `json:"baseline_verified"`
	// Changes lists what differs from the sealed content, publisher by
	// publisher; empty when intact.
	Changes []Change `json:"changes"`

	store    *Store // the store file's content
	baseline *Store // the last verified sealed content, or empty
}

// Store returns the store the review was made of.
func (r *Review) Store() *Store { return r.store }

// TamperedError is the error of a store refused because its content is not
// what the host last sealed. It wraps ErrTampered.
type TamperedError struct {
	// Review says what changed.
	Review *Review
}

// Error implements error.
func (e *TamperedError) Error() string {
	r := e.Review
	var add, rem, chg int
	for _, c := range r.Changes {
		switch c.Change {
		case ChangeAdded:
			add++
		case ChangeRemoved:
			rem++
		default:
			chg++
		}
	}
	return fmt.Sprintf("%s: %s was changed outside Palyra-Go (%s; %d keys added, %d removed, %d changed); nothing trusts it until you review it: "+
		"`palyra trust accept-changes` shows the changes and re-seals the file, or restore the file from a backup",
		ErrTampered.Error(), r.Path, r.Reason, add, rem, chg)
}

// Unwrap returns ErrTampered.
func (e *TamperedError) Unwrap() error { return ErrTampered }

// vaultKeyOrNil returns the vault subkey, or nil when the vault has none.
func (f *File) vaultKeyOrNil(ctx context.Context) ([]byte, error) {
	if f.vaultKey == nil {
		return nil, nil
	}
	k, err := f.vaultKey(ctx)
	if errors.Is(err, ErrNoVaultKey) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: integrity key from the vault: %w", err)
	}
	if len(k) != integrityKeyBytes {
		return nil, fmt.Errorf("trust: integrity key from the vault is %d bytes, want %d", len(k), integrityKeyBytes)
	}
	return k, nil
}

// readKeyFile reads the fallback key file; a missing file is nil, nil.
func (f *File) readKeyFile() ([]byte, error) {
	path := f.IntegrityKeyPath()
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: integrity key file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: integrity key file %s is not a regular file", ErrTampered, path)
	}
	if perm := st.Mode().Perm(); perm&^0o600 != 0 {
		return nil, fmt.Errorf("%w: integrity key file %s has mode %04o, wider than 0600 (run chmod 600 %s)", ErrTampered, path, perm, path)
	}
	data, err := fsutil.ReadLimited(path, 1<<10, ErrTampered, "1 KiB")
	if err != nil {
		return nil, fmt.Errorf("trust: integrity key file: %w", err)
	}
	k, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(data)))
	if err != nil || len(k) != integrityKeyBytes {
		return nil, fmt.Errorf("%w: integrity key file %s is not base64 of %d bytes", ErrTampered, path, integrityKeyBytes)
	}
	return k, nil
}

// sealKey returns the key and source to seal with: the vault subkey when
// the vault has a key, else the key file, created when missing.
func (f *File) sealKey(ctx context.Context) ([]byte, string, error) {
	k, err := f.vaultKeyOrNil(ctx)
	if err != nil || k != nil {
		return k, KeySourceVault, err
	}
	if k, err = f.readKeyFile(); err != nil || k != nil {
		return k, KeySourceKeyFile, err
	}
	k = make([]byte, integrityKeyBytes)
	if _, err := rand.Read(k); err != nil {
		return nil, "", fmt.Errorf("trust: generate integrity key: %w", err)
	}
	if err := fsutil.WriteExclusive(f.IntegrityKeyPath(), []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
		return nil, "", fmt.Errorf("trust: create integrity key file: %w", err)
	}
	return k, KeySourceKeyFile, nil
}

// verifyKey returns the key of a recorded source, or nil and why not.
func (f *File) verifyKey(ctx context.Context, source string) ([]byte, string, error) {
	switch source {
	case KeySourceVault:
		k, err := f.vaultKeyOrNil(ctx)
		if err != nil || k == nil {
			return nil, "the seal was made with the vault key, which is not available here (set $PALYRA_VAULT_KEY or $PALYRA_VAULT_KEY_COMMAND as the host has it)", err
		}
		return k, "", nil
	case KeySourceKeyFile:
		if f.vaultStrict {
			vk, err := f.vaultKeyOrNil(ctx)
			if err != nil {
				return nil, "", err
			}
			if vk != nil {
				return nil, "the seal was made with the key file " + f.IntegrityKeyPath() + ", but a vault key is configured and only a seal made with it is accepted", nil
			}
		}
		k, err := f.readKeyFile()
		if err != nil {
			return nil, "", err
		}
		if k == nil {
			return nil, "the integrity key file " + f.IntegrityKeyPath() + " is missing", nil
		}
		return k, "", nil
	}
	return nil, fmt.Sprintf("the seal names an unknown key source %s", quote(source)), nil
}

// mac is the MAC of a canonical store encoding under key and source.
func mac(key []byte, source string, canonical []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macDomain))
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write(canonical)
	return hex.EncodeToString(h.Sum(nil))
}

// review compares s (the store file's content, parsed) with its seal.
func (f *File) review(ctx context.Context, s *Store) (*Review, error) {
	r := &Review{Path: f.path, Changes: []Change{}, store: s, baseline: &Store{}}
	cur, err := s.Marshal()
	if err != nil {
		return nil, fmt.Errorf("trust: encode store: %w", err)
	}
	data, err := fsutil.ReadLimited(f.SealPath(), 2*MaxStoreSize+4096, ErrTampered, "twice MaxStoreSize")
	if errors.Is(err, fs.ErrNotExist) {
		if len(s.trusted) == 0 && len(s.tofu) == 0 {
			r.Status, r.BaselineVerified = IntegrityIntact, true
			return r, nil
		}
		r.Changes = Diff(r.baseline, s)
		once, err := f.sealedOnce(ctx)
		if err != nil {
			return nil, err
		}
		if once != "" {
			r.Status, r.Reason = IntegrityTampered, "its seal "+f.SealPath()+" is missing, but the store was sealed before ("+once+")"
			return r, nil
		}
		r.Status, r.Reason = IntegrityUnsealed, "the store has no seal "+f.SealPath()
		return r, nil
	}
	if err != nil {
		r.Status, r.Reason = IntegrityTampered, err.Error()
		r.Changes = Diff(r.baseline, s)
		return r, nil
	}
	var seal sealJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&seal); err != nil || seal.Version != 1 || len(seal.Sealed) == 0 {
		r.Status, r.Reason = IntegrityTampered, "the seal "+f.SealPath()+" is not a valid version 1 seal"
		r.Changes = Diff(r.baseline, s)
		return r, nil
	}
	r.KeySource = seal.KeySource
	key, why, err := f.verifyKey(ctx, seal.KeySource)
	if err != nil {
		return nil, err
	}
	if key == nil {
		r.Status, r.Reason = IntegrityTampered, why
		r.Changes = Diff(r.baseline, s)
		return r, nil
	}
	// The last entry whose MAC verifies is the baseline; an entry equal to
	// the file's content makes it intact (two entries exist only while a
	// write is under way, or after a crash in one).
	for _, e := range seal.Sealed {
		sealed, err := parseStore(e.Store)
		if err != nil {
			continue
		}
		canon, err := sealed.Marshal()
		if err != nil || !hmac.Equal([]byte(mac(key, seal.KeySource, canon)), []byte(e.MAC)) {
			continue
		}
		r.baseline, r.BaselineVerified = sealed, true
		if bytes.Equal(canon, cur) {
			r.Status = IntegrityIntact
			return r, nil
		}
	}
	r.Status = IntegrityTampered
	if r.BaselineVerified {
		r.Reason = "its content differs from the sealed content"
	} else {
		r.Reason = "no MAC in the seal " + f.SealPath() + " verifies"
	}
	r.Changes = Diff(r.baseline, s)
	return r, nil
}

// encodeSeal builds the seal file of the given stores under key.
func encodeSeal(key []byte, source string, stores ...*Store) ([]byte, error) {
	seal := sealJSON{Version: 1, KeySource: source}
	for _, s := range stores {
		canon, err := s.Marshal()
		if err != nil {
			return nil, fmt.Errorf("trust: encode store: %w", err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, canon); err != nil {
			return nil, fmt.Errorf("trust: encode seal: %w", err)
		}
		seal.Sealed = append(seal.Sealed, sealedJSON{Store: compact.Bytes(), MAC: mac(key, source, canon)})
	}
	return marshalPretty(seal)
}

// commit writes next as the store with its seal, under the lock. The seal
// is written first naming both prev (the content being replaced, sealed
// again under the current key) and next, then the store, then the seal with
// next alone: a crash at any point leaves a store that verifies. When data
// is nil only the seal is written (adoption, accept-changes).
func (f *File) commit(ctx context.Context, prev, next *Store, data []byte) error {
	key, source, err := f.sealKey(ctx)
	if err != nil {
		return err
	}
	if source == KeySourceVault {
		if err := f.markSealed(ctx); err != nil {
			return err
		}
	}
	if data != nil {
		both, err := encodeSeal(key, source, prev, next)
		if err != nil {
			return err
		}
		if err := writeAtomic(f.SealPath(), both); err != nil {
			return err
		}
		if err := writeAtomic(f.path, data); err != nil {
			return err
		}
	}
	one, err := encodeSeal(key, source, next)
	if err != nil {
		return err
	}
	return writeAtomic(f.SealPath(), one)
}

// readVerified reads the store and checks it against its seal; the caller
// holds the lock when adopt is set. An unsealed store is adopted (sealed as
// it is, and logged) when adopt is set; a tampered one is a
// *TamperedError.
//
// Without the lock the store and its seal are two reads, and a writer in
// another process may replace either in between (it writes a seal naming
// the old and the new content, then the store, then a seal naming the new
// content only). The store is read again after the seal: when both reads
// of the store agree, the seal read between them names that content if
// the file was sealed, so a mismatch is tampering; when they differ, a
// writer moved on and the reads are taken again (at most
// maxConsistentReads times).
func (f *File) readVerified(ctx context.Context, adopt bool) (*Store, []byte, *Review, error) {
	var (
		s    *Store
		data []byte
		r    *Review
		err  error
	)
	for attempt := 1; ; attempt++ {
		if s, data, err = readStore(f.path); err != nil {
			return nil, nil, nil, err
		}
		if r, err = f.review(ctx, s); err != nil {
			return nil, nil, nil, err
		}
		if r.Status != IntegrityTampered || adopt || attempt == maxConsistentReads {
			break
		}
		_, again, err := readStore(f.path)
		if err == nil && bytes.Equal(again, data) {
			break
		}
	}
	switch r.Status {
	case IntegrityTampered:
		return nil, nil, r, &TamperedError{Review: r}
	case IntegrityUnsealed:
		if adopt {
			if err := f.commit(ctx, nil, s, nil); err != nil {
				return nil, nil, nil, err
			}
			f.log.Warn("adopted a trust store without a seal: its current content is now trusted as it is",
				"trust_store", f.path, "seal", f.SealPath(), "publishers", publisherNames(s))
			r.Status = IntegrityIntact
		}
	}
	return s, data, r, nil
}

// maxConsistentReads bounds how often an unlocked read retries because a
// writer replaced the store between reading it and reading its seal.
const maxConsistentReads = 8

// publisherNames lists the publishers of s, for logs.
func publisherNames(s *Store) []string {
	var names []string
	for _, p := range s.Publishers() {
		names = append(names, p.Publisher)
	}
	return names
}

// Review compares the store file with its seal without changing anything
// and without the lock: what accept-changes would accept. An unparseable
// store is an error wrapping ErrInvalidStore.
func (f *File) Review(ctx context.Context) (*Review, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("trust: review %s: %w", f.path, err)
	}
	s, _, err := readStore(f.path)
	if err != nil {
		return nil, err
	}
	return f.review(ctx, s)
}

// AcceptChanges re-seals the store file as it is now, after confirm has
// seen the review and agreed. Under the lock it reads the file (an
// unparseable one is an error wrapping ErrInvalidStore: fix it first),
// compares it with its seal and calls confirm with the review; if confirm
// returns false or an error, nothing is written. An intact store is not
// re-sealed and confirm is not called. It returns the review and whether
// the store was re-sealed.
func (f *File) AcceptChanges(ctx context.Context, confirm func(*Review) (bool, error)) (*Review, bool, error) {
	var (
		r        *Review
		accepted bool
	)
	err := f.withLock(ctx, func() error {
		s, _, err := readStore(f.path)
		if err != nil {
			return err
		}
		if r, err = f.review(ctx, s); err != nil {
			return err
		}
		if r.Status == IntegrityIntact {
			return nil
		}
		ok, err := confirm(r)
		if err != nil || !ok {
			return err
		}
		if err := f.commit(ctx, nil, s, nil); err != nil {
			return err
		}
		accepted = true
		f.log.Warn("accepted changes made to the trust store outside Palyra-Go", "trust_store", f.path, "was", string(r.Status), "changes", len(r.Changes))
		return nil
	})
	return r, accepted, err
}

// Change kinds.
const (
	// ChangeAdded: a key the sealed content did not trust.
	ChangeAdded = "added"
	// ChangeRemoved: a key the sealed content trusted.
	ChangeRemoved = "removed"
	// ChangeChanged: a TOFU pin moved to another key.
	ChangeChanged = "changed"
)

// Change is one difference between two stores, for one publisher key.
type Change struct {
	// Publisher is the publisher name.
	Publisher string `json:"publisher"`
	// Trust is "allowlisted" or "tofu".
	Trust string `json:"trust"`
	// Change is ChangeAdded, ChangeRemoved or ChangeChanged.
	Change string `json:"change"`
	// OldKey is the key before (removed, changed), lower-case hex.
	OldKey string `json:"old_key,omitempty"`
	// NewKey is the key after (added, changed), lower-case hex.
	NewKey string `json:"new_key,omitempty"`
}

// Diff lists what changes from old to new: allowlisted keys added and
// removed, TOFU pins added, removed and moved, by publisher in byte order,
// allowlist first.
func Diff(old, new *Store) []Change {
	out := []Change{}
	pubs := map[string]bool{}
	for p := range old.trusted {
		pubs[p] = true
	}
	for p := range new.trusted {
		pubs[p] = true
	}
	for p := range old.tofu {
		pubs[p] = true
	}
	for p := range new.tofu {
		pubs[p] = true
	}
	names := make([]string, 0, len(pubs))
	for p := range pubs {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		o, n := old.trusted[p], new.trusted[p]
		for _, k := range o {
			if _, ok := slices.BinarySearch(n, k); !ok {
				out = append(out, Change{Publisher: p, Trust: "allowlisted", Change: ChangeRemoved, OldKey: k})
			}
		}
		for _, k := range n {
			if _, ok := slices.BinarySearch(o, k); !ok {
				out = append(out, Change{Publisher: p, Trust: "allowlisted", Change: ChangeAdded, NewKey: k})
			}
		}
		ot, ook := old.tofu[p]
		nt, nok := new.tofu[p]
		switch {
		case ook && !nok:
			out = append(out, Change{Publisher: p, Trust: "tofu", Change: ChangeRemoved, OldKey: ot})
		case !ook && nok:
			out = append(out, Change{Publisher: p, Trust: "tofu", Change: ChangeAdded, NewKey: nt})
		case ook && nok && ot != nt:
			out = append(out, Change{Publisher: p, Trust: "tofu", Change: ChangeChanged, OldKey: ot, NewKey: nt})
		}
	}
	return out
}

// WithVault keys the integrity MAC from v: its "trust-store-mac" subkey
// (vault.DeriveKey with VaultKeyPurpose) when the vault has a key, else the
// File's own key file. A vault whose key is configured but fails (a key
// command that fails, an insecure key file) fails the operation.
//
// A seal made with the key file is accepted while the vault key is
// itself the vault's key file (it protects no more), and refused while the
// vault key is configured ($PALYRA_VAULT_KEY, a key command): see
// WithVaultKey.
func WithVault(v *vault.Vault) Option {
	withKey := WithVaultKey(func(ctx context.Context) ([]byte, error) {
		k, err := v.DeriveKey(ctx, VaultKeyPurpose)
		if errors.Is(err, vault.ErrKeyMissing) {
			return nil, fmt.Errorf("%w: %w", ErrNoVaultKey, err)
		}
		return k, err
	})
	return func(f *File) {
		withKey(f)
		f.vaultStrict = !v.KeyFromFile()
		f.vault = v
	}
}

// The "sealed once" marker. Deleting the seal file must not make a sealed
// store look like one from before integrity (which the first load adopts),
// so whether the store was ever sealed is held with the key, where the
// files beside the store cannot reach it:
//
//   - key file seals: the key file itself. sealKey creates it on the first
//     seal, so its existence says a seal was made.
//   - vault seals: a node-local vault entry, global/SealedMarkerKeyPrefix + the first
//     32 hex digits of SHA-256 of the store's absolute path, written on
//     every seal made with the vault key (entries authenticate under the
//     vault key; without it nobody can make one, and one removed changes
//     the vault file).
//
// A store with content and no seal while either marker exists is tampered;
// `palyra trust accept-changes` re-seals it after review.

// SealedMarkerKeyPrefix starts the key of the vault entry that records
// that a trust store was sealed with the vault key. The entry is this
// node's own state (vault.NodeLocalKeyPrefix): a cluster does not
// replicate it, so a node never takes another node's marker for its own.
const SealedMarkerKeyPrefix = vault.NodeLocalKeyPrefix + "skills.trust_store.sealed."

// SealedMarkerName returns the vault entry that records that the store at
// path was sealed with the vault key.
func SealedMarkerName(path string) vault.Name {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	sum := sha256.Sum256([]byte(path))
	return vault.Name{Scope: "global", Key: SealedMarkerKeyPrefix + hex.EncodeToString(sum[:16])}
}

// markSealed records in the vault that the store is sealed with the vault
// key; a File without a vault records nothing there (its key function is
// the caller's).
func (f *File) markSealed(ctx context.Context) error {
	if f.vault == nil {
		return nil
	}
	name := SealedMarkerName(f.path)
	ok, err := f.vault.Has(ctx, name)
	if err != nil {
		return fmt.Errorf("trust: read the sealed marker %s: %w", name, err)
	}
	if ok {
		return nil
	}
	if err := f.vault.Set(ctx, name, []byte("sealed")); err != nil {
		return fmt.Errorf("trust: record the sealed marker %s: %w", name, err)
	}
	return nil
}

// sealedOnce says why the store is known to have been sealed ("" when
// nothing says so): its key file exists, or the vault holds its marker.
func (f *File) sealedOnce(ctx context.Context) (string, error) {
	if _, err := os.Lstat(f.IntegrityKeyPath()); err == nil {
		return "its integrity key file " + f.IntegrityKeyPath() + " exists", nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("trust: integrity key file: %w", err)
	}
	if f.vault == nil {
		return "", nil
	}
	name := SealedMarkerName(f.path)
	ok, err := f.vault.Has(ctx, name)
	if err != nil {
		return "", fmt.Errorf("trust: read the sealed marker %s: %w", name, err)
	}
	if ok {
		return "the vault holds its sealed marker " + name.String(), nil
	}
	return "", nil
}
