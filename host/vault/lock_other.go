//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// flockExclusive is not implemented on this platform: Set and Delete fail
// rather than write without a lock.
func flockExclusive(_ context.Context, path string) (*os.File, error) {
	return nil, fmt.Errorf("vault: lock %s: %w", path, errors.ErrUnsupported)
}
