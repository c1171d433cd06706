// Package cluster makes palyra-host nodes one service over NATS: a
// [Link] joins the cluster (an existing NATS deployment, or a nats-server
// with JetStream embedded in each node), and a [Node] is a host.Service
// over the node's local host.Host whose lifecycle changes go through the
// cluster's ops stream and whose calls run wherever the skill is served.
//
// The names it uses on NATS (streams, buckets, subjects) are in names.go
// and in the README's "Cluster" section; RATIONALE.md explains the design.
package cluster
