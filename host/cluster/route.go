package cluster

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/palyra-go/palyra/host"
)

// router is a node's part in routing calls: the micro service that
// serves this node's skills to the cluster, the calls it sends to other
// nodes, and the heartbeats and peer table that tell who is live.
type router struct {
	n *Node
	// maxInFlight bounds the calls of one skill running on this node at
	// once (local and served to others): 4×GOMAXPROCS. A call over it is
	// sent to another node; a request over it is answered busy.
	maxInFlight int
	peers       *peers
	calls       rate
	hbSub       *nats.Subscription

	mu       sync.Mutex
	inFlight map[string]int
	served   []string // sorted
	gen      string
	svc      micro.Service
	stopping bool

	// serving counts the calls this node runs for others; serveCtx ends
	// them when Close's drain runs out of time.
	serving     sync.WaitGroup
	serveCtx    context.Context
	serveCancel context.CancelFunc
}

// servePoll is how often the node re-reads its host's catalog to follow
// the skills it serves.
const servePoll = 250 * time.Millisecond

func (n *Node) startRouting(ctx context.Context) error {
	r := &router{
		n: n, maxInFlight: 4 * runtime.GOMAXPROCS(0),
		peers: newPeers(n.link.cfg.LivenessWindow), inFlight: map[string]int{},
	}
	r.serveCtx, r.serveCancel = context.WithCancel(context.WithoutCancel(ctx))
	n.route = r
	if err := r.sync(ctx); err != nil {
		return err
	}
	if err := r.startHeartbeats(); err != nil {
		return err
	}
	n.goLoop(func(ctx context.Context) {
		t := time.NewTicker(servePoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := r.sync(ctx); err != nil && ctx.Err() == nil {
				n.log.Warn("following the served skills", "error", err)
			}
		}
	})
	return nil
}

// stopRouting stops the endpoints first (other nodes stop routing here),
// then waits for the calls this node runs for others to end, at most
// until ctx ends, when the rest are canceled.
func (n *Node) stopRouting(ctx context.Context) error {
	r := n.route
	if r == nil {
		return nil
	}
	r.mu.Lock()
	r.stopping = true
	svc := r.svc
	r.svc = nil
	r.mu.Unlock()
	var err error
	if svc != nil {
		if e := svc.Stop(); e != nil && !errors.Is(e, nats.ErrConnectionClosed) {
			err = e
		}
	}
	if r.hbSub != nil {
		r.hbSub.Unsubscribe()
	}
	done := make(chan struct{})
	go func() { r.serving.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		r.serveCancel()
		<-done
	}
	r.serveCancel()
	return err
}

// allowed reports whether Config.Skills lets this node serve skill.
func (r *router) allowed(skill string) bool {
	s := r.n.link.cfg.Skills
	return len(s) == 0 || slices.ContainsFunc(s, func(id string) bool { return strings.EqualFold(strings.TrimSpace(id), skill) })
}

// servedSkills returns the skills this node serves now.
func (r *router) servedSkills() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.served)
}

// serves reports whether this node serves skill now.
func (r *router) serves(skill string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := slices.BinarySearch(r.served, skill)
	return ok
}

// acquire takes a slot of skill's in-flight bound when this node serves
// skill; false when it does not or the bound is reached.
func (r *router) acquire(skill string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, served := slices.BinarySearch(r.served, skill); !served || r.inFlight[skill] >= r.maxInFlight {
		return false
	}
	r.inFlight[skill]++
	return true
}

// release gives back a slot and counts the call.
func (r *router) release(skill string) {
	r.mu.Lock()
	r.inFlight[skill]--
	if r.inFlight[skill] <= 0 {
		delete(r.inFlight, skill)
	}
	r.mu.Unlock()
	r.calls.add(time.Now())
}

// Call implements host.Service. The call runs on the local host when this
// node serves the skill and has a free slot (at most 4×GOMAXPROCS calls
// of one skill at once); otherwise this node checks it against its own
// view (host.PrepareCall) and sends it to a node that serves the skill
// (see remoteCall), and checks the output that comes back
// (host.FinishRemoteCall). A call no other node can take (ErrNoRoute)
// runs locally when Config.Skills lets this node serve the skill.
func (n *Node) Call(ctx context.Context, req host.CallRequest) (*host.CallResult, error) {
	r := n.route
	skill := strings.ToLower(strings.TrimSpace(req.SkillID))
	if r.acquire(skill) {
		defer r.release(skill)
		return n.host.Call(ctx, req)
	}
	res, chk, err := r.remoteCall(ctx, req)
	if errors.Is(err, ErrNoRoute) && r.allowed(skill) {
		r.mu.Lock()
		r.inFlight[skill]++
		r.mu.Unlock()
		defer r.release(skill)
		if chk != nil && chk.Approved {
			// The approval was used when the call was checked for sending.
			req.Input, req.ApprovalID = chk.Input, ""
			return n.host.CallApproved(ctx, req)
		}
		return n.host.Call(ctx, req)
	}
	return res, err
}

// Approvals implements host.Service. An approval lives on the node where
// the call that needs it entered (Call checks it there, before routing):
// a node lists, shows and decides its own.
func (n *Node) Approvals(ctx context.Context, req host.ApprovalsRequest) (*host.ApprovalList, error) {
	return n.host.Approvals(ctx, req)
}

// Approval implements host.Service (this node's approvals).
func (n *Node) Approval(ctx context.Context, id string) (*host.ApprovalInfo, error) {
	return n.host.Approval(ctx, id)
}

// DecideApproval implements host.Service (this node's approvals).
func (n *Node) DecideApproval(ctx context.Context, req host.DecideRequest) (*host.ApprovalInfo, error) {
	return n.host.DecideApproval(ctx, req)
}

// SubmitForm implements host.Service: a form submit runs on this node,
// which keeps the A2UI documents of the calls made through it.
func (n *Node) SubmitForm(ctx context.Context, req host.SubmitRequest) (*host.CallResult, error) {
	return n.host.SubmitForm(ctx, req)
}

// running is the number of calls of skill running on this node now.
func (r *router) running(skill string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inFlight[skill]
}
