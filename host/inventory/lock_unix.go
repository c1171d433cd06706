//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package inventory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/palyra-go/palyra/host/fsutil"
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
