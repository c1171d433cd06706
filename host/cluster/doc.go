// Package cluster makes palyra-host nodes one service over NATS: a
// [Link] joins the cluster (an existing NATS deployment, or a nats-server
// with JetStream embedded in each node), and a [Node] is a host.Service
// over the node's local host.Host whose lifecycle changes go through the
// cluster's ops stream and whose calls run wherever the skill is served.
//
// The names it uses on NATS (streams, buckets, subjects) are in names.go
// and in the README's "Cluster" section; RATIONALE.md explains the design.
//
// # Events and hooks
//
// The cluster's events are one JetStream stream, EventsStream. Every node
// publishes the events of the ops it applies, and JetStream's message-id
// de-duplication stores each once; Node.Events on any node reads that
// stream, an event's ID being its stream sequence. Hooks fire once per
// cluster: every node pulls from one durable consumer, HooksConsumer,
// which hands each lifecycle event to one node at a time (MaxAckPending
// 1, so hook skills see events in stream order) and is acked once the
// hooks ran. That is exactly once in a run without crashes; an event whose
// node dies while its hooks run is delivered again after an ack wait, so
// its hooks run at least once. events.go has the details.
package cluster
