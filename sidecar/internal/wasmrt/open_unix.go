//go:build unix

package wasmrt

import (
	"fmt"
	"os"
	"syscall"
)

// openNoFollow opens path for reading, refusing a symlink in its last
// element.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// mapFile maps the first size bytes of f read-only; unmap releases them.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), err error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, fmt.Errorf("runtime: cannot map %d bytes", size)
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("runtime: mmap: %w", err)
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
