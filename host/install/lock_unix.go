//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/palyra-go/palyra/internal/fsutil"
)

// errWouldBlock is returned by lockSkill in try mode when the lock is held.
var errWouldBlock = errors.New("install: lock held")

// skillLock is an exclusive flock on <skills>/<id>/.lock. flock locks
// belong to an open file description, so they exclude other processes and
// other lockSkill calls of this process alike, and the kernel drops them
// when their holder dies (a SIGKILLed installer leaves no stale lock).
type skillLock struct {
	f    *os.File
	dir  string
	path string
}

// lockSkill takes the lock of the skill directory dir, creating dir and
// the lock file when missing. It waits until ctx is done or timeout passes;
// with try set it does not wait and returns errWouldBlock.
//
// The lock file may be removed by a holder that removes the skill's last
// version (releaseAndRemove); a waiter that then gets the lock on the
// unlinked file notices that the path no longer names its file and starts
// over, so two processes never hold "the" lock on two different files.
func lockSkill(ctx context.Context, dir string, timeout time.Duration, try bool) (*skillLock, error) {
	deadline := time.Now().Add(timeout)
	path := filepath.Join(dir, lockName)
	for {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("install: create %s: %w", dir, err)
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if errors.Is(err, os.ErrNotExist) {
			continue // the directory went away between the two calls
		}
		if err != nil {
			return nil, fmt.Errorf("install: open lock %s: %w", path, err)
		}
		wait := time.Until(deadline)
		if try || wait <= 0 {
			wait = -1 // one attempt
		}
		err = fsutil.Flock(ctx, f, wait)
		if err == nil {
			if same, serr := samePath(f, path); serr != nil {
				f.Close()
				return nil, serr
			} else if same {
				return &skillLock{f: f, dir: dir, path: path}, nil
			}
			f.Close() // our file was unlinked while we waited: start over
			continue
		}
		f.Close()
		switch {
		case errors.Is(err, fsutil.ErrLockTimeout) && try:
			return nil, errWouldBlock
		case errors.Is(err, fsutil.ErrLockTimeout):
			return nil, fmt.Errorf("%w: %s held for over %v", ErrLocked, path, timeout)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%w: waiting for %s: %w", ErrLocked, path, ctx.Err())
		}
		return nil, fmt.Errorf("install: %w", err)
	}
}

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("install: stat lock: %w", err)
	}
	pi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("install: stat lock: %w", err)
	}
	return os.SameFile(fi, pi), nil
}

// unlock releases the lock. Closing the descriptor releases the flock.
func (l *skillLock) unlock() {
	if l.f != nil { // nil for a Reader's no-op lock
		_ = l.f.Close()
	}
}

// releaseAndRemove removes the lock file and the skill directory (when it
// is empty once the lock file is gone), then releases the lock. It is used
// when a skill's last version is removed.
func (l *skillLock) releaseAndRemove() {
	_ = os.Remove(l.path)
	_ = os.Remove(l.dir) // fails, harmlessly, unless empty
	_ = syncDir(filepath.Dir(l.dir))
	l.unlock()
}
