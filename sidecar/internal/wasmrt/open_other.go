//go:build !unix

package wasmrt

import "os"

// openNoFollow opens path for reading. Without O_NOFOLLOW, a symlink is
// detected with Lstat first.
func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrPermission}
	}
	return os.Open(path)
}

// mapFile reads the first size bytes of f (no mmap here); unmap does
// nothing.
func mapFile(f *os.File, size int64) (data []byte, unmap func(), err error) {
	data = make([]byte, size)
	if n, err := f.ReadAt(data, 0); n != len(data) {
		return nil, nil, err
	}
	return data, func() {}, nil
}
