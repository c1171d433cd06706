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
