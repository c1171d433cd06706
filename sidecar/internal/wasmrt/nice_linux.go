//go:build linux

package wasmrt

import (
	goruntime "runtime"

	"golang.org/x/sys/unix"
)

// PreparerNice is the nice value of the preparer's OS thread (Linux only):
// refilling the pool of prepared instances (instantiate + _initialize) and
// closing used stores is background work, and on a small machine it would
// otherwise compete for the CPU with the call it just served, whose answer
// is still on its way back, and with the supervisor.
const PreparerNice = 10

// backgroundThread pins the calling goroutine to its OS thread and lowers
// that thread's CPU priority to PreparerNice. The goroutine must not unlock
// the thread: when it ends, its thread ends with it, so no other goroutine
// ever runs at the lowered priority.
func backgroundThread() {
	goruntime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), PreparerNice) // best effort
}
