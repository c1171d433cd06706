package client

import (
	"context"
	"errors"

	"github.com/palyra-go/palyra/host"
)

// errNotYet marks a verb whose implementation has not landed.
var errNotYet = errors.New("client: not implemented yet")

// Outdated implements host.Service.
func (c *Client) Outdated(ctx context.Context, req host.OutdatedRequest) (*host.OutdatedReport, error) {
	return nil, errNotYet
}

// Update implements host.Service.
func (c *Client) Update(ctx context.Context, req host.UpdateRequest) (*host.UpdateResult, error) {
	return nil, errNotYet
}

// Apply implements host.Service.
func (c *Client) Apply(ctx context.Context, req host.ApplyRequest) (*host.ApplyResult, error) {
	return nil, errNotYet
}
