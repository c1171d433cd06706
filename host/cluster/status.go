package cluster

// PLACEHOLDER (owned by the routing part): the status from heartbeats.

import (
	"context"

	"github.com/palyra-go/palyra/host"
)

// Cluster reports the cluster as this node sees it.
func (n *Node) Cluster(ctx context.Context) (*host.ClusterStatus, error) {
	st, err := n.host.Cluster(ctx)
	if err != nil {
		return nil, err
	}
	st.Clustered, st.Cluster, st.Node = true, n.link.cfg.ClusterName, n.Name()
	st.Nodes[0].Name = n.Name()
	return st, nil
}
