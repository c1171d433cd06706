package cluster

// PLACEHOLDER (owned by the routing part): calls run on the local host
// only until routing lands.

import (
	"context"

	"github.com/palyra-go/palyra/host"
)

func (n *Node) startRouting(ctx context.Context) error { return nil }
func (n *Node) stopRouting(ctx context.Context) error  { return nil }

// Call implements host.Service.
func (n *Node) Call(ctx context.Context, req host.CallRequest) (*host.CallResult, error) {
	return n.host.Call(ctx, req)
}

// SubmitForm implements host.Service.
func (n *Node) SubmitForm(ctx context.Context, req host.SubmitRequest) (*host.CallResult, error) {
	return n.host.SubmitForm(ctx, req)
}
