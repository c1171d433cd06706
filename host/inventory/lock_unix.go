//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package inventory

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/palyra-go/palyra/internal/fsutil"
)

// writerLock is an exclusive flock on "<db>.lock", held by a process's
// writer for the length of one write transaction. It queues the writers of
// cooperating processes outside SQLite; SQLite's own lock (BEGIN IMMEDIATE
// plus the busy timeout) still guards against writers that do not take it.
type writerLock struct {
	f *os.File
}

func openWriterLock(path string) (*writerLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("inventory: open lock file: %w", err)
	}
	return &writerLock{f: f}, nil
}

// lock takes the lock, waiting at most budget and while ctx is not done.
// The caller serialises calls (one open file description is one owner).
func (l *writerLock) lock(ctx context.Context, budget time.Duration) error {
	err := fsutil.Flock(ctx, l.f, max(budget, time.Nanosecond))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fsutil.ErrLockTimeout):
		return fmt.Errorf("%w: another process held %s for over %v", ErrBusy, l.f.Name(), budget)
	case ctx.Err() != nil:
		return fmt.Errorf("inventory: waiting for the write lock: %w", ctx.Err())
	}
	return fmt.Errorf("inventory: %w", err)
}

func (l *writerLock) unlock() error { return fsutil.Unlock(l.f) }

func (l *writerLock) close() error { return l.f.Close() }

// generation reads the change counter kept in the lock file's first eight
// bytes (little endian; a new, empty file is generation 0). ok is false when
// it cannot be read, and then callers must not trust a cache.
func (l *writerLock) generation() (gen uint64, ok bool) {
	var b [8]byte
	n, err := l.f.ReadAt(b[:], 0)
	switch {
	case n == len(b):
		return binary.LittleEndian.Uint64(b[:]), true
	case n == 0 && errors.Is(err, io.EOF):
		return 0, true
	}
	return 0, false
}

// bump advances the change counter. The caller holds the lock.
func (l *writerLock) bump() error {
	gen, ok := l.generation()
	if !ok {
		gen = uint64(time.Now().UnixNano()) // unreadable: any new value does
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], gen+1)
	if _, err := l.f.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("inventory: bump the change counter: %w", err)
	}
	return nil
}
