package cluster

import (
	"context"
	"time"

	"github.com/palyra-go/palyra/host"
)

// Cluster reports the cluster as this node sees it: this node first (its
// status now), then every other node heard from, as its last heartbeat
// described it (Live when heard within the liveness window). StreamLast is
// the ops stream's last sequence, 0 when the stream cannot be read now.
func (n *Node) Cluster(ctx context.Context) (*host.ClusterStatus, error) {
	r := n.route
	now := time.Now().UTC()
	self := nodeStatus(r.status(ctx), now, true)
	st := &host.ClusterStatus{Clustered: true, Cluster: n.link.cfg.ClusterName, Node: n.Name(), Nodes: []host.NodeStatus{self}}
	for _, p := range r.peers.all() {
		if p.hb.Name == n.Name() {
			continue
		}
		ns := nodeStatus(p.hb, p.seen.UTC(), now.Sub(p.seen) <= n.link.cfg.LivenessWindow)
		st.Nodes = append(st.Nodes, ns)
	}
	if ops := n.link.Ops(); ops != nil {
		ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if info, err := ops.Info(ictx); err == nil {
			st.StreamLast = info.State.LastSeq
		} else {
			n.log.Debug("ops stream info", "error", err)
		}
	}
	return st, nil
}

func nodeStatus(hb heartbeat, seen time.Time, live bool) host.NodeStatus {
	skills := hb.Skills
	if skills == nil {
		skills = []string{}
	}
	return host.NodeStatus{
		Name: hb.Name, Version: hb.Version, Live: live, LastSeen: seen, Skills: skills,
		SidecarsAlive: hb.SidecarsAlive, CallsPerSecond: hb.CallsPerSecond, Applied: hb.Applied,
		Labels: hb.Labels, StartedAt: hb.StartedAt, PolicySHA256: hb.PolicySHA256,
	}
}
