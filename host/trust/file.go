package trust

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// File is a trust store on disk, shared safely by goroutines and processes.
//
// Writers (Update, Decide when it pins, ApplyRotation) serialize on an
// exclusive advisory lock (flock) on the sibling file "<path>.lock", re-read
// the store under the lock, and replace the file atomically: a temporary file
// in the same directory is written, fsynced and renamed over the store, and
// the directory is fsynced. Readers (Load) take no lock: thanks to the rename
// they see either the old file or the new one, never a mix. The lock file is
// created with mode 0600 and is never removed (removing it would let two
// writers lock different files). The store is written with mode 0600 and
// missing parent directories are created with mode 0700.
//
// The lock is advisory: a process that writes the file without taking it
// (Palyra itself, an editor) is not kept out, though its write cannot tear a
// write of ours. A File holds no open descriptor between calls, so it needs
// no Close, and any number of File values may name the same path.
type File struct {
	path     string
	vaultKey func(context.Context) ([]byte, error)
	// vaultStrict refuses key-file seals while the vault key is available.
	vaultStrict bool
	// vault holds the "sealed once" marker of vault seals (WithVault).
	vault *vault.Vault
	log   hclog.Logger
}

// OpenFile returns the trust store at path. It does not touch the file
// system: a missing file is an empty store, and it is created by the first
// write. See the package documentation (Integrity) for the seal it checks
// and keeps.
func OpenFile(path string, opts ...Option) *File {
	f := &File{path: path, log: hclog.NewNullLogger()}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Path returns the path of the store file.
func (f *File) Path() string { return f.path }

// lockPath is the sibling file that writers lock.
func (f *File) lockPath() string { return f.path + ".lock" }

// Load reads and parses the store (see Parse) and checks it against its
// seal; a missing file is an empty store. A store whose content is not the
// sealed content is refused with a *TamperedError (ErrTampered); a store
// with no seal yet is adopted: sealed as it is, under the lock, and logged.
// Only an adoption takes the lock, and ctx governs the wait for it.
func (f *File) Load(ctx context.Context) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("trust: load %s: %w", f.path, err)
	}
	s, _, r, err := f.readVerified(ctx, false)
	if err != nil || r.Status != IntegrityUnsealed {
		return s, err
	}
	err = f.withLock(ctx, func() error {
		s, _, _, err = f.readVerified(ctx, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// LoadSettled is Load made under the exclusive lock: it waits for a writer
// in flight (ctx governs the wait) and reads what it wrote. A reader whose
// unlocked read refused a publisher asks again with it: an install commits
// its skill while holding the lock and saves the skill's new TOFU pin just
// before releasing it, so a reader that sees the skill but not yet the pin
// would otherwise refuse a publisher that is pinned a moment later.
//
// A store never locked (no lock file) has no writer in flight: it is read
// as by Load, and nothing is created on disk.
func (f *File) LoadSettled(ctx context.Context) (*Store, error) {
	if _, err := os.Stat(f.lockPath()); errors.Is(err, fs.ErrNotExist) {
		return f.Load(ctx)
	}
	var s *Store
	err := f.withLock(ctx, func() error {
		var err error
		s, _, _, err = f.readVerified(ctx, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Update changes the store under the exclusive lock: it takes the lock
// (waiting for other writers, in this process or another, until ctx is done;
// then the error wraps ErrLocked and ctx.Err()), reads the store, and calls
// fn with it. If fn returns an error, Update returns it (unwrapped) and writes
// nothing. If fn reports changed and the store's encoding differs from the
// file, the new store is written atomically before the lock is released. ctx
// governs only the wait for the lock.
func (f *File) Update(ctx context.Context, fn func(*Store) (changed bool, err error)) error {
	return f.withLock(ctx, func() error {
		s, old, _, err := f.readVerified(ctx, true)
		if err != nil {
			return err
		}
		prev := s.Clone()
		changed, err := fn(s)
		if err != nil || !changed {
			return err
		}
		data, err := s.Marshal()
		if err != nil {
			return fmt.Errorf("trust: encode store: %w", err)
		}
		if bytes.Equal(data, old) {
			return nil
		}
		return f.commit(ctx, prev, s, data)
	})
}

// withLock runs fn while holding the exclusive lock of the store, creating
// the store's directory if needed.
func (f *File) withLock(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("trust: update %s: %w", f.path, err)
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("trust: create store directory: %w", err)
	}
	lf, err := fsutil.LockExclusive(ctx, f.lockPath(), 0)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: trust: %w", ErrLocked, err)
		}
		return fmt.Errorf("trust: %w", err)
	}
	defer lf.Close() // closing the descriptor releases the flock
	return fn()
}

// Decide makes the trust decision of Store.Decide against the file and
// persists a new TOFU pin, so that of two concurrent first uses by different
// keys exactly one wins and the other gets ErrTOFUKeyMismatch. Decisions that
// change nothing (allowlisted, pinned) read the file without taking the
// lock; a pin takes it, and the decision is then re-made under the lock on
// a fresh read; so does an untrusted publisher before it is refused (see
// LoadSettled). ctx governs the wait for the lock.
func (f *File) Decide(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (Decision, error) {
	s, err := f.Load(ctx)
	if err != nil {
		return "", err
	}
	d, err := s.Decide(publisher, key, allowTOFU)
	if errors.Is(err, ErrUntrustedPublisher) {
		// A pin may be on its way (see LoadSettled): ask again once the
		// writer in flight, if any, is done.
		if s, err = f.LoadSettled(ctx); err != nil {
			return "", err
		}
		d, err = s.Decide(publisher, key, allowTOFU)
	}
	if err != nil || d != DecisionTOFUNewlyPinned {
		return d, err
	}
	err = f.Update(ctx, func(s *Store) (bool, error) {
		d, err = s.Decide(publisher, key, allowTOFU)
		return d == DecisionTOFUNewlyPinned, err
	})
	if err != nil {
		return "", err
	}
	return d, nil
}

// Decider adapts a trust decision to callers that want it as a plain string,
// such as the artifact package's TrustDecider interface, so that package does
// not need to import trust. Get one from File.Decider or Store.Decider; the
// zero Decider is not usable.
type Decider struct {
	decide func(context.Context, string, ed25519.PublicKey, bool) (Decision, error)
}

// Decide returns string(decision) of the underlying File or Store decision,
// with the same errors.
func (d Decider) Decide(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error) {
	dec, err := d.decide(ctx, publisher, key, allowTOFU)
	return string(dec), err
}

// Decider returns f as a Decider: decisions are made against the file and
// new pins are persisted, as by File.Decide. It is safe for concurrent use.
func (f *File) Decider() Decider { return Decider{decide: f.Decide} }

// Decider returns s as a Decider: decisions are made in memory and a new
// pin changes s only (the caller saves it). ctx is ignored. Like s, it is
// not safe for concurrent use.
func (s *Store) Decider() Decider {
	return Decider{decide: func(_ context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (Decision, error) {
		return s.Decide(publisher, key, allowTOFU)
	}}
}

// readStore reads and parses the store at path and also returns the bytes
// read. A missing file is an empty store.
func readStore(path string) (*Store, []byte, error) {
	data, err := fsutil.ReadLimited(path, MaxStoreSize, ErrInvalidStore, "MaxStoreSize")
	if errors.Is(err, fs.ErrNotExist) {
		return &Store{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	s, err := parseStore(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrInvalidStore, path, err)
	}
	return s, data, nil
}

// writeAtomic replaces the file at path with data (mode 0600) atomically
// and durably; on failure path is left as it was.
func writeAtomic(path string, data []byte) error {
	if err := fsutil.WriteAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("trust: write %s: %w", path, err)
	}
	return nil
}
