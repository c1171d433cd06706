//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package fsutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// LockExclusive is not implemented on this platform: callers fail rather
// than write without a lock.
func LockExclusive(_ context.Context, path string, _ time.Duration) (*os.File, error) {
	return nil, fmt.Errorf("lock %s: %w", path, errors.ErrUnsupported)
}

// Flock is not implemented on this platform.
func Flock(_ context.Context, f *os.File, _ time.Duration) error {
	return fmt.Errorf("lock %s: %w", f.Name(), errors.ErrUnsupported)
}

// Unlock is not implemented on this platform.
func Unlock(f *os.File) error {
	return fmt.Errorf("unlock %s: %w", f.Name(), errors.ErrUnsupported)
}
