//go:build !unix

package sidecar

// applyCompileBudget does nothing where there are no rlimits: the
// supervisor's PrecompileTimeout is then the only bound of a compile.
func applyCompileBudget(cpuSeconds, memoryBytes uint64) error { return nil }
