//go:build !race

package host_test

// raceBuild reports whether the tests run under the race detector, where
// the host's pure-Go SQLite runs many times slower.
const raceBuild = false
