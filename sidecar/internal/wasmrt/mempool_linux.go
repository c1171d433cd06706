//go:build linux

package wasmrt

/*
#include "mempool.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v25"
)

// Linear memories from a pool (Linux).
//
// wasmtime's on-demand allocator maps a fresh reservation for every linear
// memory, makes its first pages accessible, maps the module's data image
// over it, and unmaps it all when the store is dropped: four to five
// mmap-family calls per instance, each taking the process's mmap lock. A
// sidecar instantiates once per call, so under load that was a fifth of its
// CPU. The pool (mempool.c, a wasmtime memory creator) keeps released
// memories and hands them out again:
//
//   - A released memory is cleared before it is kept, so nothing a call
//     wrote is visible to a later one (TestMemoryPoolClears): up to 64 KiB
//     read-write by writing zeros, beyond that with madvise(MADV_DONTNEED)
//     (private anonymous pages read back as zero), which costs a TLB flush
//     on every CPU and a page fault per page touched again. A memory that
//     cannot be cleared is unmapped, never reused.
//   - Exactly the memory's current size is read-write; everything after it
//     is PROT_NONE, and each reuse sets that boundary again.
//   - The memories are dynamic with no guard region: the generated code
//     bounds-checks every access against the current size, so an
//     out-of-bounds access traps without touching a page beyond it. (A
//     fault in a guard page of a memory wasmtime did not map itself would
//     abort the process instead of trapping, so static memories are never
//     pooled.) This changes the generated code, so it is part of the cache
//     fingerprint.
//   - At most memoryPoolMaxFree memories are kept, and at most
//     memoryPoolMaxFreeRW bytes of them stay read-write (RLIMIT_DATA counts
//     writable mappings); the rest are returned to PROT_NONE or unmapped.
//   - Data segments are copied into a pooled memory at instantiation instead
//     of being mapped copy-on-write.

const (
	// memoryPoolMaxFree is how many released memories an engine keeps.
	memoryPoolMaxFree = 2 * MaxPreparedInstances
	// memoryPoolMaxFreeRW bounds the read-write bytes of kept memories.
	memoryPoolMaxFreeRW = 32 << 20
)

// memoryPoolSupported reports whether installMemoryPool can work here:
// the wasmtime-go Config must be the single C pointer it is in v25.
func memoryPoolSupported() bool {
	return unsafe.Sizeof(wasmtime.Config{}) == unsafe.Sizeof(uintptr(0))
}

// installMemoryPool makes wc's engine take its linear memories from a
// pool, and reports whether it did.
func installMemoryPool(wc *wasmtime.Config) bool {
	if !memoryPoolSupported() {
		return false
	}
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(wc))
	if ptr == nil {
		return false
	}
	return C.palyra_mempool_install(ptr, C.int(memoryPoolMaxFree), C.size_t(memoryPoolMaxFreeRW)) == 0
}

// memoryPoolStats are the process's pool counters: memories mapped,
// handed out again, released by wasmtime, and unmapped.
type memoryPoolStats struct {
	Created, Reused, Released, Unmapped uint64
}

func readMemoryPoolStats() memoryPoolStats {
	var c, r, rel, u C.uint64_t
	C.palyra_mempool_stats(&c, &r, &rel, &u)
	return memoryPoolStats{uint64(c), uint64(r), uint64(rel), uint64(u)}
}
