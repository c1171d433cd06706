//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package trust

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// lockExclusive is not implemented on this platform: File.Update fails
// rather than write without a lock.
func lockExclusive(ctx context.Context, path string) (*os.File, error) {
	return nil, fmt.Errorf("trust: lock %s: %w", path, errors.ErrUnsupported)
}
