//go:build !linux

package wasmrt

// backgroundThread is a no-op where threads have no priority of their own.
func backgroundThread() {}
