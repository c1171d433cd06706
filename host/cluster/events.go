package cluster

// PLACEHOLDER (owned by the events part): events are the local host's
// until the cluster's events stream lands.

import (
	"context"
	"time"

	"github.com/palyra-go/palyra/host"
)

func (n *Node) startEvents(ctx context.Context) error { return nil }
func (n *Node) stopEvents(ctx context.Context) error  { return nil }

// Events implements host.Service.
func (n *Node) Events(ctx context.Context, req host.EventsRequest, fn func(host.Event) error) error {
	return n.host.Events(ctx, req, fn)
}

// opApplied is called by the ops applier after this node applied op seq
// (appended at at) with the events the local host journaled for it.
func (n *Node) opApplied(ctx context.Context, seq uint64, at time.Time, evs []host.Event) {}
