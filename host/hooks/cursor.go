package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/palyra-go/palyra/internal/fsutil"
)

// CursorSchemaVersion is the version of the cursors file this package
// writes.
const CursorSchemaVersion = 1

// Cursor is where a hook binding stands in the journal: the id of the last
// journal event the binding is done with (its hooks ran for it, or gave up
// on it, or it was not bound to the event's kind). The Dispatcher delivers
// to the binding the journal events after EventID, in order.
type Cursor struct {
	// EventID is the id of the last journal event the binding is done
	// with; 0 is before the first event.
	EventID int64 `json:"event_id"`
	// BindingCreatedAtUnixMs is the CreatedAtUnixMs of the binding the
	// cursor belongs to: a cursor left by a removed binding whose hook id
	// was bound again (by hand, say) does not match the new binding and is
	// ignored.
	BindingCreatedAtUnixMs int64 `json:"binding_created_at_unix_ms"`
	// UpdatedAtUnixMs is when the cursor last moved.
	UpdatedAtUnixMs int64 `json:"updated_at_unix_ms"`
}

// cursorFile is the content of <state>/hooks/cursors.json.
type cursorFile struct {
	SchemaVersion int               `json:"schema_version"`
	Cursors       map[string]Cursor `json:"cursors"`
}

// JournalHead returns the id of the newest journal event (0 when the
// journal is empty): where a new binding's cursor starts.
type JournalHead func(ctx context.Context) (int64, error)

// StoreOption configures a Store.
type StoreOption func(*Store)

// WithJournalHead makes Bind, and SetEnabled when it enables a disabled
// binding, start the binding's cursor at the journal head that head
// returns, under the bindings lock: the binding is delivered the events
// journaled after that moment, not the history before it. A Store without
// it removes the binding's cursor instead, and the Dispatcher starts the
// cursor at the head when it first sees the binding.
func WithJournalHead(head JournalHead) StoreOption {
	return func(s *Store) { s.head = head }
}

// CursorsPath returns the path of the cursors file, cursors.json beside the
// bindings file.
func (s *Store) CursorsPath() string { return filepath.Join(filepath.Dir(s.path), "cursors.json") }

// Cursors returns the cursors of the bindings by hook id, as stored: a
// cursor whose BindingCreatedAtUnixMs differs from its binding's, or whose
// binding is gone, is stale (see CursorFor). A missing file is no cursors.
// It takes no lock.
func (s *Store) Cursors() (map[string]Cursor, error) {
	cf, err := s.loadCursors()
	if err != nil {
		return nil, err
	}
	return cf.Cursors, nil
}

// CursorFor returns b's cursor from cs, and false when cs holds none for b
// (none at all, or a stale one).
func CursorFor(cs map[string]Cursor, b Binding) (Cursor, bool) {
	c, ok := cs[b.HookID]
	if !ok || c.BindingCreatedAtUnixMs != b.CreatedAtUnixMs {
		return Cursor{}, false
	}
	return c, true
}

func (s *Store) loadCursors() (*cursorFile, error) {
	data, err := fsutil.ReadLimited(s.CursorsPath(), MaxBindingsFileBytes, ErrInvalidBindings, "MaxBindingsFileBytes")
	if errors.Is(err, fs.ErrNotExist) {
		return &cursorFile{SchemaVersion: CursorSchemaVersion, Cursors: map[string]Cursor{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var cf cursorFile
	if err := json.Unmarshal(data, &cf); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidBindings, s.CursorsPath(), err)
	}
	if cf.SchemaVersion > CursorSchemaVersion {
		return nil, fmt.Errorf("%s: %w: version %d, this build knows up to %d", s.CursorsPath(), ErrSchemaTooNew, cf.SchemaVersion, CursorSchemaVersion)
	}
	if cf.Cursors == nil {
		cf.Cursors = map[string]Cursor{}
	}
	return &cf, nil
}

// saveCursors writes cf, keeping only the cursors of f's bindings; the
// caller holds the bindings lock.
func (s *Store) saveCursors(cf *cursorFile, f *File) error {
	keep := make(map[string]Cursor, len(cf.Cursors))
	for _, b := range f.Entries {
		if c, ok := CursorFor(cf.Cursors, b); ok {
			keep[b.HookID] = c
		}
	}
	cf.SchemaVersion, cf.Cursors = CursorSchemaVersion, keep
	data, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return fmt.Errorf("hooks: encode cursors: %w", err)
	}
	if err := fsutil.WriteAtomic(s.CursorsPath(), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("hooks: write cursors: %w", err)
	}
	return nil
}

// startCursor starts b's cursor at the journal head (or removes it when the
// Store has no JournalHead), in cf and on disk, before f, which holds b, is
// saved. The caller holds the bindings lock.
func (s *Store) startCursor(ctx context.Context, cf *cursorFile, f *File, b Binding) error {
	if s.head == nil {
		if _, ok := cf.Cursors[b.HookID]; !ok {
			return nil
		}
		delete(cf.Cursors, b.HookID)
	} else {
		head, err := s.head(ctx)
		if err != nil {
			return fmt.Errorf("hooks: read the journal head for the cursor of %s: %w", quote(b.HookID), err)
		}
		cf.Cursors[b.HookID] = Cursor{EventID: head, BindingCreatedAtUnixMs: b.CreatedAtUnixMs, UpdatedAtUnixMs: s.now().UnixMilli()}
	}
	return s.saveCursors(cf, f)
}

// StartCursors gives each binding of bs that has no cursor (or a stale
// one) a cursor at head, and returns every cursor of bs. Bindings no
// longer in the file are left out. It takes the bindings lock (ctx bounds
// the wait for it).
func (s *Store) StartCursors(ctx context.Context, bs []Binding, head int64) (map[string]Cursor, error) {
	out := map[string]Cursor{}
	err := s.Locked(ctx, func(f *File, _ func(*File) error) error {
		cf, err := s.loadCursors()
		if err != nil {
			return err
		}
		changed := false
		for _, b := range bs {
			i, ok := find(f, b.HookID)
			if !ok || f.Entries[i].CreatedAtUnixMs != b.CreatedAtUnixMs {
				continue
			}
			c, ok := CursorFor(cf.Cursors, b)
			if !ok {
				c = Cursor{EventID: head, BindingCreatedAtUnixMs: b.CreatedAtUnixMs, UpdatedAtUnixMs: s.now().UnixMilli()}
				cf.Cursors[b.HookID] = c
				changed = true
			}
			out[b.HookID] = c
		}
		if !changed {
			return nil
		}
		return s.saveCursors(cf, f)
	})
	return out, err
}

// AdvanceCursors moves the cursor of each binding of bs to eventID, unless
// it is already there or beyond, or the binding is no longer in the file
// (removed, or bound again since). It takes the bindings lock (ctx bounds
// the wait for it).
func (s *Store) AdvanceCursors(ctx context.Context, bs []Binding, eventID int64) error {
	return s.Locked(ctx, func(f *File, _ func(*File) error) error {
		cf, err := s.loadCursors()
		if err != nil {
			return err
		}
		changed := false
		now := s.now().UnixMilli()
		for _, b := range bs {
			i, ok := find(f, b.HookID)
			if !ok || f.Entries[i].CreatedAtUnixMs != b.CreatedAtUnixMs {
				continue
			}
			if c, ok := CursorFor(cf.Cursors, b); ok && c.EventID >= eventID {
				continue
			}
			cf.Cursors[b.HookID] = Cursor{EventID: eventID, BindingCreatedAtUnixMs: b.CreatedAtUnixMs, UpdatedAtUnixMs: now}
			changed = true
		}
		if !changed {
			return nil
		}
		return s.saveCursors(cf, f)
	})
}
