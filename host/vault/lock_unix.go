//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Backoff between attempts to take a lock another process holds: short at
// first, so an uncontended wait costs little, and capped, so a waiter sees
// a released lock soon.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 20 * time.Millisecond
)

// flockExclusive opens (creating it 0600) the lock file at path and takes an
// exclusive flock on it, polling with LOCK_NB so that ctx and MaxLockWait
// are honoured while waiting. Closing the returned file releases the lock.
func flockExclusive(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("vault: open lock file: %w", err)
	}
	deadline := time.Now().Add(MaxLockWait)
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
			return f, nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EWOULDBLOCK):
			f.Close()
			return nil, fmt.Errorf("vault: lock %s: %w", path, err)
		case time.Now().After(deadline):
			f.Close()
			return nil, fmt.Errorf("%w: another process held %s for over %v", ErrBusy, path, MaxLockWait)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("vault: waiting for %s: %w", path, ctx.Err())
		case <-timer.C:
		}
		wait = min(2*wait, lockPollMax)
	}
}
