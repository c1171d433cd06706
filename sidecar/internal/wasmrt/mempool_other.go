//go:build !linux

package wasmrt

import "github.com/bytecodealliance/wasmtime-go/v25"

// memoryPoolSupported: the pool is Linux only (mempool_linux.go).
func memoryPoolSupported() bool { return false }

func installMemoryPool(*wasmtime.Config) bool { return false }

type memoryPoolStats struct {
	Created, Reused, Released, Unmapped uint64
}

func readMemoryPoolStats() memoryPoolStats { return memoryPoolStats{} }
