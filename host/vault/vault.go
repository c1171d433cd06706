package vault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// MaxLockWait bounds how long Set and Delete wait for another process's
// lock on the vault before failing with ErrBusy.
const MaxLockWait = 30 * time.Second

// Config configures a Vault. Only StateDir is required.
type Config struct {
	// StateDir is the state directory; the vault lives in
	// <StateDir>/secrets (statedir.Layout.SecretsDir).
	StateDir string
	// Key, when set, is the vault key (32 bytes) and every other key source
	// is ignored. It is for applications that keep the key themselves. The
	// Vault keeps a copy.
	Key []byte
	// EncodedKey, when set and Key is not, is the vault key as base64 of
	// 32 bytes (white space around it allowed), decoded on first need.
	// palyra and palyra-host fill it from $PALYRA_VAULT_KEY.
	EncodedKey string
	// KeyCommand, when set and neither key is, is a shell command (run
	// with /bin/sh -c on first need, under KeyCommandTimeout) whose
	// standard output is the vault key as base64 of 32 bytes. palyra and
	// palyra-host fill it from $PALYRA_VAULT_KEY_COMMAND.
	KeyCommand string
}

// Entry describes one stored secret: its name and when it was last set.
// It carries neither the value nor its length.
type Entry struct {
	Name      Name
	UpdatedAt time.Time
}

// Vault is the encrypted secrets vault of one state directory. It is safe
// for concurrent use by goroutines, and by processes sharing the directory:
// Set and Delete read, change and atomically replace vault.json under an
// exclusive file lock; Get, Has and List read the file without the lock,
// and always see a whole version of it.
//
// The key is resolved on first need and then kept for the Vault's life.
// A Vault holds no goroutine and no open file between calls, so it needs
// no Close.
type Vault struct {
	layout     statedir.Layout
	cfgKey     []byte
	encodedKey string
	keyCommand string
	// sem serialises this Vault's writers before they take the file lock,
	// so goroutines queue on a channel rather than poll the flock.
	sem chan struct{}
	// maxFileBytes is MaxVaultFileBytes; tests lower it to reach the
	// limit without writing 32 MiB.
	maxFileBytes int

	keyMu     sync.Mutex
	cachedKey []byte
}

// Open returns the vault of cfg.StateDir. It checks the configuration but
// reads and creates nothing: the directory, the key file and vault.json are
// made by the first Set.
func Open(cfg Config) (*Vault, error) {
	if cfg.StateDir == "" {
		return nil, fmt.Errorf("%w: Config.StateDir is empty", ErrInvalidConfig)
	}
	state, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("%w: Config.StateDir %q: %v", ErrInvalidConfig, cfg.StateDir, err)
	}
	v := &Vault{layout: statedir.At(state), encodedKey: cfg.EncodedKey, keyCommand: cfg.KeyCommand, sem: make(chan struct{}, 1), maxFileBytes: MaxVaultFileBytes}
	if cfg.Key != nil {
		if len(cfg.Key) != KeyBytes {
			return nil, fmt.Errorf("%w: Config.Key is %d bytes, want %d", ErrInvalidConfig, len(cfg.Key), KeyBytes)
		}
		v.cfgKey = append([]byte(nil), cfg.Key...)
	}
	return v, nil
}

// Path returns the vault file, <state>/secrets/vault.json.
func (v *Vault) Path() string { return v.layout.VaultFile() }

// KeyPath returns the key file, <state>/secrets/vault.key, used when no
// other key source is configured.
func (v *Vault) KeyPath() string { return v.layout.VaultKey() }

// Set stores value under name, replacing any previous value. The value is
// sealed with AES-256-GCM under a fresh random nonce, bound to the name.
// When no key source is configured and neither the key file nor a sealed
// vault exists, Set creates the key file with a new random key. The caller
// keeps value; Set does not retain it.
func (v *Vault) Set(ctx context.Context, name Name, value []byte) error {
	return v.set(ctx, name, value, true)
}

// Create stores value under name like Set, but only when name holds no
// value yet: else it fails with ErrExists and changes nothing. The check
// and the write are one update under the vault's lock.
func (v *Vault) Create(ctx context.Context, name Name, value []byte) error {
	return v.set(ctx, name, value, false)
}

// set is Set, or Create when replace is false.
func (v *Vault) set(ctx context.Context, name Name, value []byte, replace bool) error {
	if err := name.Validate(); err != nil {
		return err
	}
	if len(value) == 0 {
		return fmt.Errorf("%w: %s", ErrValueEmpty, name)
	}
	if len(value) > MaxSecretBytes {
		return fmt.Errorf("%w: %s: value is %d bytes, over the %d-byte limit", ErrValueTooLarge, name, len(value), MaxSecretBytes)
	}
	return v.update(ctx, func(st *state) (bool, error) {
		k, err := v.key(ctx, st.keyCheck == nil)
		if err != nil {
			return false, err
		}
		aead, err := newAEAD(k)
		if err != nil {
			return false, err
		}
		if st.keyCheck == nil {
			if st.keyCheck, err = newKeyCheck(aead); err != nil {
				return false, err
			}
		} else if !keyMatches(aead, st.keyCheck) {
			return false, v.mismatch()
		}
		if _, ok := st.entries[name]; ok && !replace {
			return false, fmt.Errorf("%w: %s", ErrExists, name)
		}
		if _, ok := st.entries[name]; !ok && len(st.entries) >= MaxEntries {
			return false, fmt.Errorf("%w: %s holds %d secrets, the %d-entry limit; cannot add %s", ErrFull, v.Path(), len(st.entries), MaxEntries, name)
		}
		nonce, ct, err := sealWithNonce(aead, value, entryAAD(name))
		if err != nil {
			return false, err
		}
		st.entries[name] = sealedEntry{nonce: nonce, ciphertext: ct, updatedAt: time.Now().UTC().Truncate(time.Second)}
		return true, nil
	})
}

// Get returns the value stored under name, or an error wrapping ErrNotFound.
// The caller owns the returned slice (and may clear it after use). A key
// that did not seal the vault fails with ErrKeyMismatch; an entry that does
// not authenticate under its name (tampered, or moved from another name)
// fails with ErrCorrupt. Get changes nothing on disk.
func (v *Vault) Get(ctx context.Context, name Name) ([]byte, error) {
	if err := name.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("vault: get %s: %w", name, err)
	}
	st, err := v.load()
	if err != nil {
		return nil, err
	}
	e, ok := st.entries[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s is not in %s", ErrNotFound, name, v.Path())
	}
	k, err := v.key(ctx, false)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(k)
	if err != nil {
		return nil, err
	}
	if !keyMatches(aead, st.keyCheck) {
		return nil, v.mismatch()
	}
	plain, err := aead.Open(nil, e.nonce, e.ciphertext, entryAAD(name))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: entry %s does not authenticate under its name (tampered, or moved from another entry)", ErrCorrupt, v.Path(), name)
	}
	return plain, nil
}

// Has reports whether a secret is stored under name. It reads only the
// vault file's entry names and never needs the key.
func (v *Vault) Has(ctx context.Context, name Name) (bool, error) {
	if err := name.Validate(); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("vault: has %s: %w", name, err)
	}
	st, err := v.load()
	if err != nil {
		return false, err
	}
	_, ok := st.entries[name]
	return ok, nil
}

// List returns every stored secret's name and update time, in name order
// ("<scope>/<key>" byte order). It never needs the key.
func (v *Vault) List(ctx context.Context) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("vault: list: %w", err)
	}
	st, err := v.load()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(st.entries))
	for n, e := range st.entries {
		out = append(out, Entry{Name: n, UpdatedAt: e.updatedAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name.String() < out[j].Name.String() })
	return out, nil
}

// Delete removes the secret stored under name and reports whether there was
// one. It never needs the key.
func (v *Vault) Delete(ctx context.Context, name Name) (bool, error) {
	if err := name.Validate(); err != nil {
		return false, err
	}
	deleted := false
	err := v.update(ctx, func(st *state) (bool, error) {
		if _, ok := st.entries[name]; !ok {
			return false, nil
		}
		delete(st.entries, name)
		deleted = true
		return true, nil
	})
	return deleted, err
}

func (v *Vault) mismatch() error {
	return fmt.Errorf("%w: the key from %s did not seal %s", ErrKeyMismatch, v.keySource(), v.Path())
}

// load reads and parses vault.json; a missing file is an empty vault.
func (v *Vault) load() (*state, error) {
	path := v.Path()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newState(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("vault: open vault file: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxVaultFileBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrFileTooLarge, path, fi.Size(), MaxVaultFileBytes)
	}
	// The file may grow after the stat: the read is capped too.
	data, err := io.ReadAll(io.LimitReader(f, MaxVaultFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("vault: read %s: %w", path, err)
	}
	if len(data) > MaxVaultFileBytes {
		return nil, fmt.Errorf("%w: %s is over the %d-byte limit (read %d bytes before stopping)", ErrFileTooLarge, path, MaxVaultFileBytes, len(data))
	}
	return parseState(data, path)
}

// update runs change on the current state under the vault's locks and, when
// change reports a modification, replaces vault.json atomically.
func (v *Vault) update(ctx context.Context, change func(*state) (bool, error)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	select {
	case v.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("vault: waiting for the vault lock: %w", ctx.Err())
	}
	defer func() { <-v.sem }()
	if err := os.MkdirAll(v.layout.SecretsDir(), 0o700); err != nil {
		return fmt.Errorf("vault: create %s: %w", v.layout.SecretsDir(), err)
	}
	lock, err := fsutil.LockExclusive(ctx, v.layout.VaultLock(), MaxLockWait)
	if errors.Is(err, fsutil.ErrLockTimeout) {
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	defer lock.Close()
	st, err := v.load()
	if err != nil {
		return err
	}
	changed, err := change(st)
	if err != nil || !changed {
		return err
	}
	data, err := st.marshal()
	if err != nil {
		return err
	}
	if len(data) > v.maxFileBytes {
		return fmt.Errorf("%w: %s would be %d bytes, over the %d-byte limit", ErrFull, v.Path(), len(data), v.maxFileBytes)
	}
	if err := fsutil.WriteAtomic(v.Path(), data, 0o600); err != nil {
		return fmt.Errorf("vault: write vault file: %w", err)
	}
	return nil
}
