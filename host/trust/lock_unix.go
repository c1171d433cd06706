//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package trust

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Backoff between attempts to take a held lock: it starts short, so an
// uncontended wait costs little, and is capped, so a waiter notices a
// released lock soon.
const (
	lockPollMin = time.Millisecond
	lockPollMax = 50 * time.Millisecond
)

// lockExclusive opens (creating it 0600) the lock file at path and takes an
// exclusive flock on it, polling with LOCK_NB so that ctx is honoured while
// waiting. The caller releases the lock by closing the returned file.
func lockExclusive(ctx context.Context, path string) (*os.File, error) {
	lf, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("trust: open lock file: %w", err)
	}
	wait := lockPollMin
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		err := unix.Flock(int(lf.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return lf, nil
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			lf.Close()
			return nil, fmt.Errorf("trust: lock %s: %w", path, err)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			lf.Close()
			return nil, fmt.Errorf("%w: waiting for %s: %w", ErrLocked, path, ctx.Err())
		case <-timer.C:
		}
		wait = min(2*wait, lockPollMax)
	}
}
