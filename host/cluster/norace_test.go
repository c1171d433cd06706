//go:build !race

package cluster

// raceBuild reports whether the tests run under the race detector.
const raceBuild = false
