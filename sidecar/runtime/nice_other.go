//go:build !linux

package runtime

// backgroundThread is a no-op where threads have no priority of their own.
func backgroundThread() {}
