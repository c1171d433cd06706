package scaffold

// FindFrom is findFrom for the tests: FindSourceTree without the directory
// the package was compiled from.
func FindFrom(starts ...string) string { return findFrom(starts) }
