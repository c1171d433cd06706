package cluster

// PLACEHOLDER (owned by the events part): events are the local host's
// until the cluster's events stream lands.

import (
	"context"

	"github.com/palyra-go/palyra/host"
)

func (n *Node) startEvents(ctx context.Context) error { return nil }
func (n *Node) stopEvents(ctx context.Context) error  { return nil }

// Events implements host.Service.
func (n *Node) Events(ctx context.Context, req host.EventsRequest, fn func(host.Event) error) error {
	return n.host.Events(ctx, req, fn)
}
