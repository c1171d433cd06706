package wasmrt

// SetPrepareHook sets the hook the preparer runs before each preparation
// and returns a function that removes it. Set it before Load and remove it
// after Close: the preparer reads it without a lock.
func SetPrepareHook(f func()) (restore func()) {
	prepareHook = f
	return func() { prepareHook = nil }
}
