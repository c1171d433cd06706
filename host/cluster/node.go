package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
)

// NodeOptions tune a Node.
type NodeOptions struct {
	// Version is the palyra-host version the node reports.
	Version string
	// Logger receives the node's logs (nil: the link's logger).
	Logger hclog.Logger
}

// Node is a host that is one node of a cluster: a host.Service whose
// lifecycle changes are appended to the cluster's ops stream and applied,
// in stream order, by every node to its own local host (this one
// included), and whose calls run locally or on another node that serves
// the skill. Reads (list, info, sidecars, metrics) answer from the local
// view, which is the stream applied up to Applied.
type Node struct {
	link  *Link
	host  *host.Host
	opts  NodeOptions
	log   hclog.Logger
	start time.Time
	ops   *opsState
	ev    eventRelay // the cluster's events and hooks (events.go)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// route is the routing part: served skills, calls, heartbeats.
	route *router

	closeOnce sync.Once

	secrets *secretSync // the vault's replication (secrets.go)
}

// Compile-time check: a node is a Service.
var _ host.Service = (*Node)(nil)

// NewNode makes h (opened on this node's state directory, with the link's
// storage) a node of link's cluster and starts following the cluster:
// applying the ops stream, serving calls, publishing heartbeats and
// events. Close stops it; the caller closes h and link after.
func NewNode(ctx context.Context, link *Link, h *host.Host, opts NodeOptions) (*Node, error) {
	if link == nil || h == nil {
		return nil, errors.New("cluster: NewNode needs a link and a host")
	}
	log := opts.Logger
	if log == nil {
		log = link.log
	}
	n := &Node{link: link, host: h, opts: opts, log: log.Named("node"), start: time.Now().UTC()}
	n.ctx, n.cancel = context.WithCancel(context.WithoutCancel(ctx))
	ok := false
	defer func() {
		if !ok {
			n.Close(context.WithoutCancel(ctx))
		}
	}()
	for _, part := range []func(context.Context) error{n.startOps, n.startRouting, n.startEvents, n.startSecrets} {
		if err := part(ctx); err != nil {
			return nil, err
		}
	}
	ok = true
	return n, nil
}

// Close stops following the cluster: the node's endpoints go away (other
// nodes stop routing to it), then its loops end.
func (n *Node) Close(ctx context.Context) error {
	var err error
	n.closeOnce.Do(func() {
		err = errors.Join(n.stopRouting(ctx), n.stopEvents(ctx), n.stopOps(ctx))
		n.cancel()
		n.wg.Wait()
	})
	return err
}

// Name is the node's name.
func (n *Node) Name() string { return n.link.cfg.NodeName }

// Host is the node's local host.
func (n *Node) Host() *host.Host { return n.host }

// Link is the node's link to the cluster.
func (n *Node) Link() *Link { return n.link }

// go runs fn on the node's wait group.
func (n *Node) goLoop(fn func(ctx context.Context)) {
	n.wg.Add(1)
	go func() { defer n.wg.Done(); fn(n.ctx) }()
}

// Reads answer from the local view.

// List implements host.Service.
func (n *Node) List(ctx context.Context, req host.ListRequest) (*host.SkillList, error) {
	return n.host.List(ctx, req)
}

// Info implements host.Service.
func (n *Node) Info(ctx context.Context, ref host.SkillRef) (*host.SkillInfo, error) {
	return n.host.Info(ctx, ref)
}

// Verify implements host.Service: this node's own verification.
func (n *Node) Verify(ctx context.Context, ref host.SkillRef) (*host.VerifyResult, error) {
	return n.host.Verify(ctx, ref)
}

// Audit implements host.Service: this node's own audit.
func (n *Node) Audit(ctx context.Context, ref host.SkillRef) (*host.AuditResult, error) {
	return n.host.Audit(ctx, ref)
}

// Tools implements host.Service.
func (n *Node) Tools(ctx context.Context) (*host.ToolCatalog, error) { return n.host.Tools(ctx) }

// RunInline implements host.Service: an inline module runs on this node,
// under the cluster's profile as this node applied it.
func (n *Node) RunInline(ctx context.Context, req host.InlineRunRequest) (*host.CallResult, error) {
	return n.host.RunInline(ctx, req)
}

// Hooks implements host.Service.
func (n *Node) Hooks(ctx context.Context) ([]host.HookBinding, error) { return n.host.Hooks(ctx) }

// DenyFeed implements host.Service: this node's installed deny feed.
func (n *Node) DenyFeed(ctx context.Context) (*host.DenyFeedInfo, error) { return n.host.DenyFeed(ctx) }

// Sidecars implements host.Service: this node's sidecars.
func (n *Node) Sidecars(ctx context.Context) ([]host.SidecarState, error) {
	return n.host.Sidecars(ctx)
}

// SkillMetrics implements host.Service: this node's calls.
func (n *Node) SkillMetrics(ctx context.Context, skillID string) (*host.SkillMetrics, error) {
	return n.host.SkillMetrics(ctx, skillID)
}
