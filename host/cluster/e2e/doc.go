// Package e2e holds the cluster's process-level tests: real palyra-host
// processes on 127.0.0.1, each a node with its own embedded nats-server
// (--cluster-embedded, the route ports picked ahead), real sidecars and
// real example skills, driven through each node's HTTP API with the
// daemon client (internal/clusterproc). They kill nodes with SIGKILL,
// restart them on their state directories and add nodes, and check that
// no process, socket or goroutine is left behind. The figures of the
// issue (time to first success, propagation median, routing window,
// catch-up time) go to t.Log; nothing is asserted on a duration. It has
// no non-test code.
package e2e
