package host

import (
	"context"
	"os"
	"time"

	"github.com/palyra-go/palyra/host/supervisor"
)

// ClusterStatus is what a service knows of the cluster it belongs to. A
// host that is not clustered is a cluster of one: Clustered is false and
// Nodes holds only itself.
type ClusterStatus struct {
	// Clustered is whether the service is a node of a NATS cluster.
	Clustered bool `json:"clustered"`
	// Cluster is the cluster's name ("" when not clustered).
	Cluster string `json:"cluster,omitempty"`
	// Node is the name of the node that answered.
	Node string `json:"node"`
	// StreamLast is the last sequence in the cluster's ops stream (0 when
	// not clustered or unknown).
	StreamLast uint64 `json:"stream_last"`
	// Nodes are the nodes heard from, this one first.
	Nodes []NodeStatus `json:"nodes"`
}

// NodeStatus is one node as its last heartbeat described it.
type NodeStatus struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Live is whether the node was heard within the liveness window.
	Live     bool      `json:"live"`
	LastSeen time.Time `json:"last_seen"`
	// Skills are the skills the node serves now.
	Skills []string `json:"skills"`
	// SidecarsAlive counts the node's running sidecars.
	SidecarsAlive int `json:"sidecars_alive"`
	// CallsPerSecond is the node's call rate over its last few seconds.
	CallsPerSecond float64 `json:"calls_per_second"`
	// Applied is the last ops-stream sequence the node applied.
	Applied uint64 `json:"applied"`
	// PolicySHA256 is PolicyDigest of the operator profile the node
	// judges by: a node whose digest differs from the others' has another
	// policy.
	PolicySHA256 string            `json:"policy_sha256,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	StartedAt    time.Time         `json:"started_at"`
}

// SidecarRunning is the status of a sidecar that is up.
const SidecarRunning = supervisor.StatusRunning

// LocalNodeName is the node name a host that is not clustered reports:
// the machine's host name.
func LocalNodeName() string {
	if n, err := os.Hostname(); err == nil && n != "" {
		return n
	}
	return "local"
}

// Cluster reports the host as a cluster of one: itself, its skills and its
// sidecars.
func (h *Host) Cluster(ctx context.Context) (*ClusterStatus, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	self := NodeStatus{Name: LocalNodeName(), Live: true, LastSeen: time.Now().UTC(), Skills: []string{}, PolicySHA256: h.PolicySHA256()}
	if sc, err := h.Sidecars(ctx); err == nil {
		seen := map[string]bool{}
		for _, s := range sc {
			if s.Status == SidecarRunning {
				self.SidecarsAlive++
			}
			if !seen[s.SkillID] {
				seen[s.SkillID] = true
				self.Skills = append(self.Skills, s.SkillID)
			}
		}
	}
	return &ClusterStatus{Node: self.Name, Nodes: []NodeStatus{self}}, nil
}

// StateDir is the state directory the host was opened on (a clustered
// node keeps its position in the cluster's ops stream there).
func (h *Host) StateDir() string { return h.cfg.StateDir }
