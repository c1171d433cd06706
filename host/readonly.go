package host

import (
	"context"
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/statedir"
)

// ErrReadOnly is a verb that changes or runs something, on a host opened
// with Config.ReadOnly.
var ErrReadOnly = errcode.New("host_read_only", "the host is open read-only")

// openReadOnly opens a host that only looks (Config.ReadOnly): the
// installer's reader over the inventory, and the hooks bindings.
func openReadOnly(ctx context.Context, cfg Config) (*Host, error) {
	ro, err := install.OpenReadOnly(ctx, install.Config{StateDir: cfg.StateDir, Policy: cfg.Policy, TrustStore: cfg.TrustStore})
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	h := &Host{cfg: cfg, ro: ro, log: cfg.Logger.Named("host"), hooks: hooks.OpenStore(cfg.StateDir)}
	h.loopCtx, h.stopLoop = context.WithCancel(context.Background())
	return h, nil
}

// writable refuses a verb on a closed or read-only host.
func (h *Host) writable() error {
	if err := h.open(); err != nil {
		return err
	}
	if h.ro != nil {
		return ErrReadOnly
	}
	return nil
}

// view is what the verbs that only look read: the installer, or the
// reader of a read-only host.
type view interface {
	List(ctx context.Context, opts install.ListOptions) ([]install.Listing, error)
	Info(ctx context.Context, id, version string) (*install.Info, error)
	DenyFeed(ctx context.Context) (*install.FeedInfo, error)
	Layout() statedir.Layout
}

func (h *Host) view() view {
	if h.ro != nil {
		return h.ro
	}
	return h.in
}
