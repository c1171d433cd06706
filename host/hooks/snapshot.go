package hooks

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// Snapshot is the bindings file as it was when read, indexed for the
// questions asked on every tool call: which enabled hooks are bound to an
// event. It is immutable; Store.Snapshot shares one among its callers.
type Snapshot struct {
	entries []Binding
	// enabled holds the enabled bindings by event, in hook id order.
	enabled map[string][]Binding
	// run is set when an enabled binding names a run phase.
	run bool
}

// newSnapshot indexes f's entries.
func newSnapshot(f *File) *Snapshot {
	s := &Snapshot{entries: f.Entries, enabled: map[string][]Binding{}}
	for _, b := range f.Entries {
		if !b.Enabled {
			continue
		}
		s.enabled[b.Event] = append(s.enabled[b.Event], b)
		s.run = s.run || IsRunPhase(b.Event)
	}
	return s
}

// Entries returns every binding, sorted by hook id. The caller must not
// change the slice.
func (s *Snapshot) Entries() []Binding { return s.entries }

// Enabled returns the enabled bindings of event (normalized), sorted by
// hook id. The caller must not change the slice.
func (s *Snapshot) Enabled(event string) []Binding { return s.enabled[event] }

// HasRunHooks reports whether any enabled binding names a run phase: when
// it does not, a tool call has no run hooks to fire.
func (s *Snapshot) HasRunHooks() bool { return s.run }

// fileKey identifies one version of the bindings file without reading
// it: the file (device and inode, through os.SameFile), its size and its
// modification time. Every write replaces the file by a rename, so a
// write gives a new inode as well as a new time.
type fileKey struct {
	fi     os.FileInfo // nil when the file does not exist
	size   int64
	mtime  time.Time
	exists bool
}

func (k fileKey) same(o fileKey) bool {
	if k.exists != o.exists {
		return false
	}
	if !k.exists {
		return true
	}
	return k.size == o.size && k.mtime.Equal(o.mtime) && os.SameFile(k.fi, o.fi)
}

// Snapshot returns the bindings as they are now, reading the file only
// when it changed since the last Snapshot: the check is one stat of the
// file (its inode, size and modification time), so that the code that
// asks on every tool call costs nothing more when no binding changed.
// Changes made through this Store invalidate the cache at once; changes
// made by another process (the CLI) are seen at the next call, since
// every write replaces the file. Errors are those of Load.
func (s *Store) Snapshot() (*Snapshot, error) {
	var key fileKey
	fi, err := os.Stat(s.path)
	switch {
	case err == nil:
		key = fileKey{fi: fi, size: fi.Size(), mtime: fi.ModTime(), exists: true}
	case errors.Is(err, fs.ErrNotExist):
	default:
		// Let Load say what is wrong.
		f, lerr := s.Load()
		if lerr != nil {
			return nil, lerr
		}
		return newSnapshot(f), nil
	}
	s.smu.Lock()
	if s.snap != nil && s.skey.same(key) {
		snap := s.snap
		s.smu.Unlock()
		return snap, nil
	}
	s.smu.Unlock()
	f, err := s.Load()
	if err != nil {
		return nil, err
	}
	snap := newSnapshot(f)
	// Keep it only if the file is still the one stat saw: a write between
	// the stat and the read would otherwise be cached under the old key.
	if fi2, err := os.Stat(s.path); (err == nil && key.exists && os.SameFile(fi, fi2) && fi2.Size() == key.size && fi2.ModTime().Equal(key.mtime)) ||
		(errors.Is(err, fs.ErrNotExist) && !key.exists) {
		s.smu.Lock()
		s.snap, s.skey = snap, key
		s.smu.Unlock()
	}
	return snap, nil
}
