package cluster

// PLACEHOLDER (owned by the replication part): the write verbs run on the
// local host only until the ops stream lands.

import (
	"context"

	"github.com/palyra-go/palyra/host"
)

func (n *Node) startOps(ctx context.Context) error { return nil }
func (n *Node) stopOps(ctx context.Context) error  { return nil }

// Install implements host.Service.
func (n *Node) Install(ctx context.Context, req host.InstallRequest) (*host.InstallResult, error) {
	return n.host.Install(ctx, req)
}

// Enable implements host.Service.
func (n *Node) Enable(ctx context.Context, req host.EnableRequest) (*host.StatusResult, error) {
	return n.host.Enable(ctx, req)
}

// Disable implements host.Service.
func (n *Node) Disable(ctx context.Context, req host.StatusRequest) (*host.StatusResult, error) {
	return n.host.Disable(ctx, req)
}

// Quarantine implements host.Service.
func (n *Node) Quarantine(ctx context.Context, req host.StatusRequest) (*host.StatusResult, error) {
	return n.host.Quarantine(ctx, req)
}

// Remove implements host.Service.
func (n *Node) Remove(ctx context.Context, req host.RemoveRequest) (*host.RemoveResult, error) {
	return n.host.Remove(ctx, req)
}

// Reaudit implements host.Service.
func (n *Node) Reaudit(ctx context.Context) (*host.ReauditReport, error) { return n.host.Reaudit(ctx) }

// BindHook implements host.Service.
func (n *Node) BindHook(ctx context.Context, b host.HookBinding) (*host.HookBinding, error) {
	return n.host.BindHook(ctx, b)
}

// SetHookEnabled implements host.Service.
func (n *Node) SetHookEnabled(ctx context.Context, hookID string, enabled bool) (*host.HookBinding, error) {
	return n.host.SetHookEnabled(ctx, hookID, enabled)
}

// RemoveHook implements host.Service.
func (n *Node) RemoveHook(ctx context.Context, hookID string) error {
	return n.host.RemoveHook(ctx, hookID)
}

// Applied is the last ops-stream sequence this node applied.
func (n *Node) Applied() uint64 { return 0 }
