package cluster

import "github.com/palyra-go/palyra/host/errcode"

// Errors of a clustered node.
var (
	// ErrClusterUnavailable is a change the cluster could not record: no
	// JetStream quorum (too many nodes down), or no NATS connection.
	ErrClusterUnavailable = errcode.New("cluster_unavailable", "the cluster cannot record changes now")
	// ErrNodeLost is a call that was running on a node that stopped
	// answering (its heartbeats ended) before the call finished.
	ErrNodeLost = errcode.New("node_lost", "the node running the call was lost")
	// ErrNoRoute is a call to a skill that no live node serves.
	ErrNoRoute = errcode.New("no_route", "no node serves the skill")
	// ErrInvalidConfig is a cluster configuration that cannot work.
	ErrInvalidConfig = errcode.New("cluster_invalid_config", "invalid cluster configuration")
)
