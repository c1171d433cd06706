package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// Store is the bindings file of a state directory, <state>/hooks/
// bindings.json, shared safely by goroutines and processes.
//
// Every mutation (Bind, SetEnabled, Remove, Update, Locked) takes an exclusive
// advisory lock on the sibling file bindings.json.lock, waiting for it as
// long as its ctx allows, then re-reads the file, changes it, and replaces it
// atomically (temporary file, fsync, rename; mode 0600). A legacy file is
// thus rewritten in the current form by the first mutation. Readers (Load,
// List, Get) take no lock: they see the old file or the new one, never a mix.
// The lock file is never removed. A Store holds no open descriptor between
// calls, needs no Close, and any number of Stores may name the same file.
type Store struct {
	path string
	now  func() time.Time
	head JournalHead // nil: see WithJournalHead

	// smu guards the snapshot cache (see Snapshot).
	smu  sync.Mutex
	snap *Snapshot
	skey fileKey
}

// OpenStore returns the bindings store of the state directory stateDir,
// <state>/hooks/bindings.json (statedir.Layout.HookBindings). It does not
// touch the file system: a missing file is an empty set of bindings,
// created by the first mutation (with its directory, mode 0700).
//
// Beside the bindings the Store keeps each binding's journal cursor, in
// <state>/hooks/cursors.json (see Cursor), written under the same lock.
func OpenStore(stateDir string, opts ...StoreOption) *Store {
	s := &Store{path: statedir.At(stateDir).HookBindings(), now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Path returns the path of the bindings file.
func (s *Store) Path() string { return s.path }

func (s *Store) lockPath() string { return s.path + ".lock" }

// Load reads and parses the bindings file (see Parse). A missing file is an
// empty File. It takes no lock.
func (s *Store) Load() (*File, error) {
	data, err := fsutil.ReadLimited(s.path, MaxBindingsFileBytes, ErrInvalidBindings, "MaxBindingsFileBytes")
	if errors.Is(err, fs.ErrNotExist) {
		return emptyFile(), nil
	}
	if err != nil {
		return nil, err
	}
	f, err := parse(data)
	if err != nil {
		if errors.Is(err, ErrSchemaTooNew) {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidBindings, s.path, err)
	}
	return f, nil
}

// List returns every binding, sorted by hook id.
func (s *Store) List() ([]Binding, error) {
	f, err := s.Load()
	if err != nil {
		return nil, err
	}
	return f.Entries, nil
}

// Get returns the binding with the hook id (trimmed and lower-cased first),
// or an error wrapping ErrHookNotFound.
func (s *Store) Get(hookID string) (Binding, error) {
	id, err := normalizeHookIDArg(hookID)
	if err != nil {
		return Binding{}, err
	}
	f, err := s.Load()
	if err != nil {
		return Binding{}, err
	}
	i, ok := find(f, id)
	if !ok {
		return Binding{}, fmt.Errorf("%w: %s", ErrHookNotFound, quote(id))
	}
	return f.Entries[i], nil
}

// Bind adds a binding and returns it as stored: ids lower-cased, event
// normalized, operator fields trimmed, CreatedAtUnixMs and UpdatedAtUnixMs
// set to now. The binding's journal cursor starts at the journal head (see
// WithJournalHead), written before the binding: a new binding is delivered
// the events journaled after it was bound, not the history. Errors wrap
// ErrInvalidBinding (b does not validate; a *FieldError names the field),
// ErrHookExists (the hook id is taken), ErrTooManyHooks (the file already
// holds MaxEntries bindings), ErrLocked, or the errors of Load.
func (s *Store) Bind(ctx context.Context, b Binding) (Binding, error) {
	nb, err := normalizeBinding(b)
	if err != nil {
		return Binding{}, fmt.Errorf("%w: %w", ErrInvalidBinding, err)
	}
	err = s.Locked(ctx, func(f *File, save func(*File) error) error {
		if _, ok := find(f, nb.HookID); ok {
			return fmt.Errorf("%w: %s", ErrHookExists, quote(nb.HookID))
		}
		if len(f.Entries) >= MaxEntries {
			return fmt.Errorf("%w: the file already holds %d bindings, the limit is %d (MaxEntries)", ErrTooManyHooks, len(f.Entries), MaxEntries)
		}
		now := s.now().UnixMilli()
		nb.CreatedAtUnixMs, nb.UpdatedAtUnixMs = now, now
		f.Entries = append(f.Entries, nb)
		sortEntries(f.Entries)
		cf, err := s.loadCursors()
		if err != nil {
			return err
		}
		if err := s.startCursor(ctx, cf, f, nb); err != nil {
			return err
		}
		return save(f)
	})
	if err != nil {
		return Binding{}, err
	}
	return nb, nil
}

// SetEnabled enables or disables a hook, records principal (when not empty)
// as the binding's operator.updated_by, and returns the binding as stored.
// Enabling a disabled binding starts its journal cursor again at the
// journal head (as Bind does): the events journaled while it was disabled
// are not delivered to it. Errors wrap ErrHookNotFound, ErrInvalidBinding,
// ErrLocked, or the errors of Load.
func (s *Store) SetEnabled(ctx context.Context, hookID string, enabled bool, principal string) (Binding, error) {
	id, err := normalizeHookIDArg(hookID)
	if err != nil {
		return Binding{}, err
	}
	by, err := normalizeOperatorField(principal)
	if err != nil {
		return Binding{}, fmt.Errorf("%w: %w", ErrInvalidBinding, &FieldError{Index: -1, Field: "operator.updated_by", Err: err})
	}
	var out Binding
	err = s.Locked(ctx, func(f *File, save func(*File) error) error {
		i, ok := find(f, id)
		if !ok {
			return fmt.Errorf("%w: %s", ErrHookNotFound, quote(id))
		}
		b := &f.Entries[i]
		wasEnabled := b.Enabled
		b.Enabled = enabled
		if by != "" {
			b.Operator.UpdatedBy = by
		}
		b.UpdatedAtUnixMs = s.now().UnixMilli()
		out = *b
		if enabled && !wasEnabled {
			cf, err := s.loadCursors()
			if err != nil {
				return err
			}
			if err := s.startCursor(ctx, cf, f, out); err != nil {
				return err
			}
		}
		return save(f)
	})
	return out, err
}

// Remove deletes a binding and its journal cursor. Errors wrap
// ErrHookNotFound, ErrInvalidBinding, ErrLocked, or the errors of Load.
func (s *Store) Remove(ctx context.Context, hookID string) error {
	id, err := normalizeHookIDArg(hookID)
	if err != nil {
		return err
	}
	return s.Locked(ctx, func(f *File, save func(*File) error) error {
		i, ok := find(f, id)
		if !ok {
			return fmt.Errorf("%w: %s", ErrHookNotFound, quote(id))
		}
		f.Entries = slices.Delete(f.Entries, i, i+1)
		if err := save(f); err != nil {
			return err
		}
		// The cursor goes after the binding, and a failure to drop it is
		// not the remove's: a cursor no binding matches is ignored (see
		// CursorFor) and dropped by the next cursor write.
		if cf, err := s.loadCursors(); err == nil {
			_ = s.saveCursors(cf, f)
		}
		return nil
	})
}

// Update changes the bindings under the exclusive lock: it waits for the
// lock until ctx is done (the error then wraps ErrLocked and ctx.Err()),
// reads the file, and calls fn with it. If fn returns an error, Update
// returns it unchanged and writes nothing. Otherwise the file is validated
// (see Marshal), stamped with the current time and written atomically before
// the lock is released. ctx governs only the wait for the lock.
func (s *Store) Update(ctx context.Context, fn func(*File) error) error {
	return s.Locked(ctx, func(f *File, save func(*File) error) error {
		if err := fn(f); err != nil {
			return err
		}
		return save(f)
	})
}

// Locked runs fn under the exclusive lock, as Update does, with the file as
// read, but lets fn decide when to write: each call of save validates f
// (see Marshal), stamps it with the current time and writes it atomically,
// and fn may call it any number of times (to write a change, do something
// else that must happen while the bindings cannot change, and write the
// previous content back if that failed). Nothing is written unless fn calls
// save. Locked returns fn's error unchanged. ctx governs only the wait for
// the lock.
func (s *Store) Locked(ctx context.Context, fn func(f *File, save func(*File) error) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: hooks: update %s: %w", ErrLocked, s.path, err)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("hooks: create bindings directory: %w", err)
	}
	lf, err := fsutil.LockExclusive(ctx, s.lockPath(), 0)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: hooks: %w", ErrLocked, err)
		}
		return fmt.Errorf("hooks: lock %s: %w", s.lockPath(), err)
	}
	defer lf.Close() // closing the descriptor releases the flock
	f, err := s.Load()
	if err != nil {
		return err
	}
	return fn(f, s.save)
}

// save writes f (validated, stamped with the current time) atomically; the
// caller holds the lock.
func (s *Store) save(f *File) error {
	f.UpdatedAtUnixMs = s.now().UnixMilli()
	data, err := Marshal(f)
	if err != nil {
		return err
	}
	err = fsutil.WriteAtomic(s.path, data, 0o600)
	// This process's own writes never wait for the file's stat to differ.
	s.smu.Lock()
	s.snap = nil
	s.smu.Unlock()
	if err != nil {
		return fmt.Errorf("hooks: write bindings: %w", err)
	}
	return nil
}

// EnabledFor returns the enabled bindings of f whose hook skill is pluginID
// (trimmed and lower-cased first), sorted by hook id.
func (f *File) EnabledFor(pluginID string) []Binding {
	id := strings.ToLower(strings.TrimSpace(pluginID))
	var out []Binding
	for _, b := range f.Entries {
		if b.Enabled && b.PluginID == id {
			out = append(out, b)
		}
	}
	return out
}

// Clone returns a deep copy of f.
func (f *File) Clone() *File {
	c := *f
	c.Entries = slices.Clone(f.Entries)
	return &c
}

// DisableIn disables the bindings of f named by hookIDs (already normalized,
// as in f), records principal (when not empty) as their operator.updated_by
// and stamps them with the current time. It changes f only; the caller
// saves it (see Locked). Unknown ids are ignored.
func (s *Store) DisableIn(f *File, hookIDs []string, principal string) {
	by := strings.TrimSpace(principal)
	now := s.now().UnixMilli()
	for _, id := range hookIDs {
		i, ok := find(f, id)
		if !ok {
			continue
		}
		b := &f.Entries[i]
		b.Enabled = false
		if by != "" {
			b.Operator.UpdatedBy = by
		}
		b.UpdatedAtUnixMs = now
	}
}

// find returns the index of the binding with the (normalized) hook id.
func find(f *File, id string) (int, bool) {
	return slices.BinarySearchFunc(f.Entries, id, func(b Binding, id string) int {
		switch {
		case b.HookID < id:
			return -1
		case b.HookID > id:
			return 1
		}
		return 0
	})
}

// normalizeHookIDArg normalizes a hook id given to an API call.
func normalizeHookIDArg(hookID string) (string, error) {
	id, err := normalizeID(hookID)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidBinding, &FieldError{Index: -1, Field: "hook_id", Err: err})
	}
	return id, nil
}
