// Package dirsnap takes snapshots of a directory tree, for tests that prove
// an operation wrote nothing: every path under the root with its mode, size,
// modification time (to the nanosecond) and the SHA-256 of its contents
// (or a symbolic link's target). Two snapshots are equal only if nothing was
// created, removed, renamed, written, chmodded or touched in between.
package dirsnap

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Snapshot is the state of a tree. A root that does not exist is the
// snapshot with Missing set and no entries.
type Snapshot struct {
	Root    string
	Missing bool
	// Entries are keyed by the path relative to Root ("." is Root).
	Entries map[string]Entry
}

// Entry is one path's state.
type Entry struct {
	Mode    fs.FileMode
	Size    int64
	ModTime int64 // Unix nanoseconds
	SHA256  string
}

// Take snapshots the tree at root, failing tb on a read error.
func Take(tb testing.TB, root string) Snapshot {
	tb.Helper()
	s := Snapshot{Root: root, Entries: map[string]Entry{}}
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		s.Missing = true
		return s
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		e := Entry{Mode: fi.Mode(), Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			e.SHA256 = hex.EncodeToString(sum[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			e.SHA256 = "-> " + target
		}
		s.Entries[rel] = e
		return nil
	})
	if err != nil {
		tb.Fatalf("dirsnap: %s: %v", root, err)
	}
	return s
}

// Diff lists how after differs from s, one line per path; nil when equal.
func (s Snapshot) Diff(after Snapshot) []string {
	var out []string
	if s.Missing != after.Missing {
		out = append(out, fmt.Sprintf("root %s: missing %t, then %t", s.Root, s.Missing, after.Missing))
	}
	paths := map[string]bool{}
	for p := range s.Entries {
		paths[p] = true
	}
	for p := range after.Entries {
		paths[p] = true
	}
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	for _, p := range keys {
		b, inBefore := s.Entries[p]
		a, inAfter := after.Entries[p]
		switch {
		case !inBefore:
			out = append(out, fmt.Sprintf("created %s (%v, %d bytes)", p, a.Mode, a.Size))
		case !inAfter:
			out = append(out, fmt.Sprintf("removed %s", p))
		case a != b:
			out = append(out, fmt.Sprintf("changed %s: %+v -> %+v", p, b, a))
		}
	}
	return out
}

// Unchanged fails tb, listing the differences, when the tree at before.Root
// is no longer as before.
func Unchanged(tb testing.TB, before Snapshot) {
	tb.Helper()
	if d := before.Diff(Take(tb, before.Root)); len(d) > 0 {
		tb.Errorf("%s changed:", before.Root)
		for _, line := range d {
			tb.Errorf("  %s", line)
		}
	}
}
