//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package install

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errWouldBlock is returned by lockSkill in try mode when the lock is held.
var errWouldBlock = errors.New("install: lock held")

// On this platform skills are locked within the process only: two
// processes installing the same skill at once are not kept apart (the
// inventory's SQLite lock still keeps the database consistent).
var (
	localLocksMu sync.Mutex
	localLocks   = map[string]chan struct{}{}
)

type skillLock struct{ ch chan struct{} }

func lockSkill(ctx context.Context, dir string, timeout time.Duration, try bool) (*skillLock, error) {
	localLocksMu.Lock()
	ch, ok := localLocks[dir]
	if !ok {
		ch = make(chan struct{}, 1)
		localLocks[dir] = ch
	}
	localLocksMu.Unlock()
	if try {
		select {
		case ch <- struct{}{}:
			return &skillLock{ch: ch}, nil
		default:
			return nil, errWouldBlock
		}
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case ch <- struct{}{}:
		return &skillLock{ch: ch}, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for %s: %w", ErrLocked, dir, ctx.Err())
	case <-t.C:
		return nil, fmt.Errorf("%w: %s held for over %v", ErrLocked, dir, timeout)
	}
}

func (l *skillLock) unlock() {
	if l.ch != nil { // nil for a Reader's no-op lock
		<-l.ch
	}
}

func (l *skillLock) releaseAndRemove() { l.unlock() }
