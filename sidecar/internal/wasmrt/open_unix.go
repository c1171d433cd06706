//go:build unix

package wasmrt

import (
	"os"
	"syscall"
)

// openNoFollow opens path for reading, refusing a symlink in its last
// element.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
