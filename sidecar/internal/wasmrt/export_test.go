package wasmrt

// SetPrepareHook sets the hook the preparer runs before each preparation
// and returns a function that removes it. Set it before Load and remove it
// after Close: the preparer reads it without a lock.
func SetPrepareHook(f func()) (restore func()) {
	prepareHook = f
	return func() { prepareHook = nil }
}

// MemoryPoolStats are the linear-memory pool's counters (mempool_linux.go):
// memories mapped, handed out again, released and unmapped.
type MemoryPoolStats = memoryPoolStats

// ReadMemoryPoolStats reads the process's pool counters.
func ReadMemoryPoolStats() MemoryPoolStats { return readMemoryPoolStats() }

// MemoryPoolSupported reports whether the pool works on this platform.
func MemoryPoolSupported() bool { return memoryPoolSupported() }

// PoolShares returns the two parts of m's pool target: the calls' (raised
// by calls that found the pool empty) and the call rate's.
func PoolShares(m *Module) (want, batch int) { return int(m.want.Load()), int(m.batch.Load()) }

// RefillWakes counts the preparer's refill wakes.
func RefillWakes(m *Module) int64 { return m.wakes.Load() }

// RefillPending reports whether a refill wake is signalled but not yet
// taken by the preparer.
func RefillPending(m *Module) bool { return len(m.refill) > 0 }
