package fsutil

import "errors"

// ErrLockTimeout is wrapped by LockExclusive when another process held the
// lock for longer than the caller's maxWait.
var ErrLockTimeout = errors.New("fsutil: lock wait timed out")
