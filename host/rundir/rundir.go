package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/statedir"
)

// ErrUnusable reports a run root that cannot hold the host's runtime files:
// not a private directory of the effective user, or no candidate short
// enough for Unix socket paths.
var ErrUnusable = errcode.New("run_dir_unusable", "run directory is unusable")

// Path lengths of the socket budget (see the package comment).
const (
	unixPathMax  = 107 // sun_path is 108 bytes with the NUL
	randomDigits = 10  // a uint32 in decimal, as os.MkdirTemp and os.CreateTemp name
	instanceLen  = len("h") + randomDigits
	childDirLen  = len("sc-") + randomDigits // host/internal/launch's private dirs: sc-, pc-
	pluginDirLen = len("plugin-dir") + randomDigits
	socketLen    = len("plugin") + randomDigits
)

// MaxRootLen is the longest run root whose deepest socket path still fits
// a Unix socket address.
const MaxRootLen = unixPathMax - (1 + instanceLen + 1 + childDirLen + 1 + pluginDirLen + 1 + socketLen)

// lockSuffix ends the name of an instance's lock file.
const lockSuffix = ".lock"

// Candidates returns the run roots of the state directory l in Root's
// order of preference, whatever their length: <state>/run,
// <tmpDir>/palyra-<hash> and /tmp/palyra-<hash> (without duplicates).
// tmpDir "" is os.TempDir(); a caller looking at another process's files
// names that process's $TMPDIR.
func Candidates(l statedir.Layout, tmpDir string) []string {
	if tmpDir == "" {
		tmpDir = os.TempDir()
	}
	sum := sha256.Sum256([]byte(l.Dir()))
	name := "palyra-" + hex.EncodeToString(sum[:8])
	out := []string{l.RunDir()}
	for _, tmp := range []string{tmpDir, "/tmp"} {
		c := filepath.Join(tmp, name)
		if c != out[len(out)-1] {
			out = append(out, c)
		}
	}
	return out
}

// Root returns the run root of the state directory l: the first of
// Candidates(l, tmpDir) that is at most MaxRootLen bytes long. It creates
// nothing.
func Root(l statedir.Layout, tmpDir string) (string, error) {
	for _, c := range Candidates(l, tmpDir) {
		if len(c) <= MaxRootLen {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: every candidate for %s is longer than %d bytes (Unix socket paths): %q", ErrUnusable, l.Dir(), MaxRootLen, Candidates(l, tmpDir))
}

// Instance is one host's runtime directory, locked for the host's life.
type Instance struct {
	root, name string
	lock       *os.File
}

// Acquire makes a new instance in root (creating root, mode 0700, when
// absent) and locks it until Close.
func Acquire(root string) (*Instance, error) {
	const attempts = 16
	var last error
	for range attempts {
		if err := makePrivate(root); errors.Is(err, errRetry) {
			last = err
			continue
		} else if err != nil {
			return nil, err
		}
		in, err := tryAcquire(root)
		if err == nil {
			return in, nil
		}
		if !errors.Is(err, errRetry) {
			return nil, err
		}
		last = err
	}
	return nil, fmt.Errorf("rundir: no instance in %s after %d attempts: %w", root, attempts, last)
}

// errRetry marks a failed attempt another one may mend: a name taken, a
// lock file a sweeper removed, a root that the last instance to close
// removed in between.
var errRetry = errors.New("retry")

func tryAcquire(root string) (*Instance, error) {
	name := "h" + strconv.FormatUint(uint64(rand.Uint32()), 10)
	lockPath := filepath.Join(root, name+lockSuffix)
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) || errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %v", errRetry, err)
	}
	if err != nil {
		return nil, fmt.Errorf("rundir: lock file: %w", err)
	}
	in := &Instance{root: root, name: name, lock: f}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		// A sweeper holds it, taking it for a dead owner's: it removes it.
		f.Close()
		return nil, fmt.Errorf("%w: %v", errRetry, err)
	}
	if !samePath(f, lockPath) {
		// A sweeper took and removed it before we locked it.
		f.Close()
		return nil, fmt.Errorf("%w: lock file replaced", errRetry)
	}
	if err := os.Mkdir(in.Dir(), 0o700); err != nil {
		os.Remove(lockPath)
		f.Close()
		return nil, fmt.Errorf("rundir: instance dir: %w", err)
	}
	return in, nil
}

// Dir is the instance's directory: the parent of the private directories
// of the host's children.
func (in *Instance) Dir() string { return filepath.Join(in.root, in.name) }

// Close removes the instance's directory and lock file, releases the lock,
// and removes the root when it is left empty. The caller closes it after
// every child it started is gone.
func (in *Instance) Close() error {
	if in.lock == nil {
		return nil
	}
	err := os.RemoveAll(in.Dir())
	if rerr := os.Remove(filepath.Join(in.root, in.name+lockSuffix)); rerr != nil && err == nil {
		err = rerr
	}
	in.lock.Close()
	in.lock = nil
	// Only an empty root goes; a concurrent Acquire that loses its root
	// here tries again.
	_ = syscall.Rmdir(in.root)
	if err != nil {
		return fmt.Errorf("rundir: close instance %s: %w", in.name, err)
	}
	return nil
}

// Sweep removes from every candidate root of l (Candidates(l, tmpDir))
// what dead instances left: each instance whose lock it can take, and each
// entry without a lock file; then the root itself when that left it empty.
// Live instances are left alone. It returns the paths it removed. A
// candidate that is absent or not the user's private directory is skipped.
func Sweep(l statedir.Layout, tmpDir string) ([]string, error) { return scanAll(l, tmpDir, true) }

// Leftovers lists what Sweep would remove now, removing nothing: the
// entries that dead instances of l left in its candidate roots (the
// reliability suite and the tests check that it is empty after a
// restart). tmpDir is the $TMPDIR of the hosts in question ("" is this
// process's).
func Leftovers(l statedir.Layout, tmpDir string) ([]string, error) {
	return scanAll(l, tmpDir, false)
}

func scanAll(l statedir.Layout, tmpDir string, remove bool) ([]string, error) {
	var out []string
	var errs []error
	for _, root := range Candidates(l, tmpDir) {
		got, err := scan(root, remove)
		out = append(out, got...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// scan lists (and, with remove, removes) the dead entries of one root.
func scan(root string, remove bool) ([]string, error) {
	if !isPrivate(root) {
		return nil, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("rundir: %w", err)
	}
	var dead []string
	var errs []error
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(root, name)
		if base, ok := strings.CutSuffix(name, lockSuffix); ok && e.Type().IsRegular() {
			gone, err := sweepLocked(root, base, remove)
			dead = append(dead, gone...)
			if err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if _, err := os.Lstat(path + lockSuffix); err == nil {
			continue // an instance: its lock file decides
		}
		// No lock file: never a live instance's (see the package comment).
		dead = append(dead, path)
		if remove {
			if err := os.RemoveAll(path); err != nil {
				errs = append(errs, fmt.Errorf("rundir: %w", err))
			}
		}
	}
	if remove {
		// Only an empty root goes (an Acquire losing it tries again).
		_ = syscall.Rmdir(root)
	}
	return dead, errors.Join(errs...)
}

// sweepLocked takes the lock of instance base if it can: then its owner is
// dead, and its directory and lock file are listed (and removed, with
// remove). A held lock means a live owner.
func sweepLocked(root, base string, remove bool) ([]string, error) {
	lockPath := filepath.Join(root, base+lockSuffix)
	f, err := os.Open(lockPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil // swept by another host meanwhile
		}
		return nil, fmt.Errorf("rundir: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil // a live owner
		}
		return nil, fmt.Errorf("rundir: lock %s: %w", lockPath, err)
	}
	if !samePath(f, lockPath) {
		return nil, nil // removed and made anew meanwhile: not the one we hold
	}
	dir := filepath.Join(root, base)
	var dead []string
	if _, err := os.Lstat(dir); err == nil {
		dead = append(dead, dir)
	}
	dead = append(dead, lockPath)
	if !remove {
		return dead, nil
	}
	// The directory first, the lock file last: a directory never outlives
	// its lock file but for a dead owner's.
	if err := os.RemoveAll(dir); err != nil {
		return dead, fmt.Errorf("rundir: %w", err)
	}
	if err := os.Remove(lockPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return dead, fmt.Errorf("rundir: %w", err)
	}
	return dead, nil
}

// samePath reports whether path still names the file f has open.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// makePrivate creates root (0700) when absent and checks it is private.
func makePrivate(root string) error {
	if err := os.MkdirAll(root, 0o700); errors.Is(err, os.ErrExist) || errors.Is(err, os.ErrNotExist) {
		// Made and removed again by others meanwhile (an instance that
		// closed last): try again.
		return fmt.Errorf("%w: %v", errRetry, err)
	} else if err != nil {
		return fmt.Errorf("%w: %v", ErrUnusable, err)
	}
	fi, err := os.Lstat(root)
	if errors.Is(err, os.ErrNotExist) {
		// The last instance to close removed the root between the two
		// calls: make it again.
		return fmt.Errorf("%w: %v", errRetry, err)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnusable, err)
	}
	if !isPrivateInfo(fi) {
		return fmt.Errorf("%w: %s is not a directory of uid %d with mode 0700 (mode %v)", ErrUnusable, root, os.Geteuid(), fi.Mode())
	}
	return nil
}

// isPrivate reports whether root is a directory (not a link) of the
// effective user that no one else may enter.
func isPrivate(root string) bool {
	fi, err := os.Lstat(root)
	return err == nil && isPrivateInfo(fi)
}

func isPrivateInfo(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.IsDir() && fi.Mode()&os.ModeSymlink == 0 && int(st.Uid) == os.Geteuid() && fi.Mode().Perm()&0o077 == 0
}
