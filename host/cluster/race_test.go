//go:build race

package cluster

// raceBuild reports whether the tests run under the race detector, where
// every node's host, its pure-Go SQLite and the embedded nats-servers run
// many times slower on the same cores.
const raceBuild = true
