//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package inventory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Polling interval bounds while another process holds the writer lock. The
// cap is short on purpose: every waiter polls at about the same rate, so a
// writer that has waited long is not starved by newcomers (SQLite's own busy
// handler sleeps up to 100 ms between tries, which is what starves).
const (
	lockPollMin = 500 * time.Microsecond
	lockPollMax = 5 * time.Millisecond
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
	deadline := time.Now().Add(budget)
	wait := lockPollMin
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		err := unix.Flock(int(l.f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return fmt.Errorf("inventory: lock %s: %w", l.f.Name(), err)
		case time.Now().After(deadline):
			return fmt.Errorf("%w: another process held %s for over %v", ErrBusy, l.f.Name(), budget)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("inventory: waiting for the write lock: %w", ctx.Err())
		case <-timer.C:
		}
		wait = min(2*wait, lockPollMax)
	}
}

func (l *writerLock) unlock() error {
	for {
		err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func (l *writerLock) close() error { return l.f.Close() }
