package cluster

import (
	"context"

	"github.com/palyra-go/palyra/host"
)

// Outdated implements host.Service: this node reads the sources (with its
// host's registry configuration); the inventory is the cluster's.
func (n *Node) Outdated(ctx context.Context, req host.OutdatedRequest) (*host.OutdatedReport, error) {
	return host.OutdatedOf(ctx, n, n.host.Sources(), req)
}

// Update implements host.Service: this node fetches the new version, and
// installs it through the ops stream like any install, so every node
// verifies, audits and installs the same bytes.
func (n *Node) Update(ctx context.Context, req host.UpdateRequest) (*host.UpdateResult, error) {
	return host.UpdateOf(ctx, n, n.host.Sources(), req)
}

// Apply implements host.Service: this node plans (reading the sources
// with its host's configuration) and every change goes through the ops
// stream like the verbs it calls.
func (n *Node) Apply(ctx context.Context, req host.ApplyRequest) (*host.ApplyResult, error) {
	return host.ApplyTo(ctx, n, n.host.Sources(), req)
}
