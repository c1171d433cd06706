//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package fsutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Backoff between attempts to take a lock another process holds: short at
// first, so an uncontended wait costs little, and capped low, so that every
// waiter polls at about the same rate and one that has waited long is not
// starved by newcomers (SQLite's busy handler, which sleeps up to 100 ms
// between tries, starves exactly that way).
const (
	lockPollMin = 500 * time.Microsecond
	lockPollMax = 5 * time.Millisecond
)

// LockExclusive opens (creating it 0600) the lock file at path and takes an
// exclusive flock on it (see Flock for maxWait). Closing the returned file
// releases the lock; so does the death of the process, so no lock is ever
// stale.
func LockExclusive(ctx context.Context, path string, maxWait time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := Flock(ctx, f, maxWait); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Flock takes an exclusive flock on the open file f, polling with LOCK_NB
// (backing off from 0.5 ms to 5 ms) so that the wait ends when ctx is done
// (the error wraps ctx.Err()) or after maxWait (the error wraps
// ErrLockTimeout). maxWait == 0 waits as long as ctx allows; maxWait < 0
// does not wait at all: a held lock is ErrLockTimeout at once. flock locks
// belong to the open file description: they exclude other processes and
// other descriptions of this process alike.
func Flock(ctx context.Context, f *os.File, maxWait time.Duration) error {
	var deadline time.Time
	if maxWait > 0 {
		deadline = time.Now().Add(maxWait)
	}
	wait := lockPollMin
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			return fmt.Errorf("lock %s: %w", f.Name(), err)
		case maxWait < 0:
			return fmt.Errorf("%w: %s is held", ErrLockTimeout, f.Name())
		case !deadline.IsZero() && time.Now().After(deadline):
			return fmt.Errorf("%w: another process held %s for over %v", ErrLockTimeout, f.Name(), maxWait)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", f.Name(), ctx.Err())
		case <-timer.C:
		}
		wait = min(2*wait, lockPollMax)
	}
}

// Unlock releases a lock Flock took, keeping f open.
func Unlock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_UN)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
