package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteAtomic replaces path with data, durably and atomically, leaving the
// file with mode perm. Missing parent directories are created with mode 0700.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, false)
}

// WriteExclusive creates path with data, durably and atomically, and fails
// with an error wrapping fs.ErrExist when path already exists. It never
// replaces an existing file, even one created concurrently.
func WriteExclusive(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, true)
}

func write(path string, data []byte, perm fs.FileMode, exclusive bool) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("fsutil: create directory %s: %w", dir, err)
	}
	if exclusive {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("fsutil: %s: %w", path, fs.ErrExist)
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("fsutil: create temporary file in %s: %w", dir, err)
	}
	tmpName := tmp.Name()
	defer func() {
		if tmp != nil {
			_ = tmp.Close()
		}
		if err != nil {
			_ = os.Remove(tmpName)
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("fsutil: chmod %s: %w", tmpName, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("fsutil: write %s: %w", tmpName, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsutil: fsync %s: %w", tmpName, err)
	}
	closeErr := tmp.Close()
	tmp = nil
	if closeErr != nil {
		return fmt.Errorf("fsutil: close %s: %w", tmpName, closeErr)
	}
	if exclusive {
		// link(2) fails if path exists, so a concurrent creator cannot be
		// overwritten; the temporary name is removed afterwards.
		if err := os.Link(tmpName, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("fsutil: %s: %w", path, fs.ErrExist)
			}
			return fmt.Errorf("fsutil: link %s: %w", path, err)
		}
		_ = os.Remove(tmpName)
	} else if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("fsutil: rename to %s: %w", path, err)
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory so that a rename or create inside it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsutil: open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsutil: fsync directory %s: %w", dir, err)
	}
	return nil
}

// ReadLimited reads the file at path, refusing one larger than limit bytes
// with an error that wraps tooLarge and names the file, the size seen and
// the limit (name is how the limit is called, e.g. "MaxStoreSize"). A
// missing file is an error wrapping fs.ErrNotExist.
func ReadLimited(path string, limit int64, tooLarge error, name string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, fmt.Errorf("%w: %s is %d bytes, the limit is %d bytes (%s)", tooLarge, path, fi.Size(), limit, name)
	}
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is more than %d bytes, the limit is %d bytes (%s)", tooLarge, path, limit, limit, name)
	}
	return data, nil
}
