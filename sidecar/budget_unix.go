//go:build unix

package sidecar

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// applyCompileBudget caps this process's CPU time (RLIMIT_CPU, soft and hard
// limits equal, so the kernel sends SIGKILL when it is spent: the Go
// runtime ignores SIGXCPU) and its writable private memory (RLIMIT_DATA:
// heap, anonymous mappings, thread stacks; an allocation past it fails, and
// wasmtime then aborts). Zero leaves a limit as it is.
func applyCompileBudget(cpuSeconds, memoryBytes uint64) error {
	if cpuSeconds > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: cpuSeconds, Max: cpuSeconds}); err != nil {
			return fmt.Errorf("setrlimit RLIMIT_CPU %d s: %w", cpuSeconds, err)
		}
	}
	if memoryBytes > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: memoryBytes, Max: memoryBytes}); err != nil {
			return fmt.Errorf("setrlimit RLIMIT_DATA %d bytes: %w", memoryBytes, err)
		}
	}
	return nil
}
