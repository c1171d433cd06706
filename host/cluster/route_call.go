package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
)

// maxAcceptWait bounds how long a caller waits for a node to accept a
// call (at most half the time left before the call's deadline).
const maxAcceptWait = time.Second

// errNotStarted marks an attempt that provably did not start the call on
// any node: no responder, a busy answer, or no accept in time (a node
// does not start a request after its accept-by time).
var errNotStarted = errors.New("the call was not started")

// remoteCall checks req against this node's view, sends it to the skill's
// queue group (CallSubjectPrefix+skill) and checks the output that comes
// back against this node's schemas.
//
// The node that accepts the call answers "accepted" at once; from then
// on, if its heartbeats stop for the liveness window before the result
// arrives, the call fails with ErrNodeLost (the call may or may not have
// run there). An attempt that no node accepted (no responders, a busy
// node, or no accept within min(1 s, half the time left)) provably never
// started, since a node does not start a request after its accept-by
// time (up to the clock difference between the nodes): it is retried
// once, on the live node that serves the skill and was heard from last
// (by name, outside the queue group: another responder) when the peer
// table knows one, else on the queue group
// again; when that fails too the call fails with ErrNoRoute. No call
// waits past its deadline.
func (r *router) remoteCall(ctx context.Context, req host.CallRequest) (*host.CallResult, *host.CallCheck, error) {
	chk, err := r.n.host.PrepareCall(ctx, req)
	if err != nil {
		if pa := host.PendingApprovalOf(err); pa != nil {
			return &host.CallResult{SkillID: pa.SkillID, Version: pa.Version, ToolID: pa.ToolID, Pending: pa}, nil, err
		}
		return nil, nil, err
	}
	res, err := r.sendCall(ctx, req, chk)
	return res, chk, err
}

// sendCall sends a call this node checked (chk) to a node that serves
// its skill.
func (r *router) sendCall(ctx context.Context, req host.CallRequest, chk *host.CallCheck) (*host.CallResult, error) {
	now := time.Now()
	deadline := now.Add(host.MaxCallTimeout)
	if req.Timeout > 0 {
		deadline = now.Add(req.Timeout)
	}
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	env := callEnvelope{V: wireVersion, Request: req, Deadline: deadline, Caller: r.n.Name(), Approved: chk.Approved}
	env.Request.SkillID = chk.SkillID
	if chk.Approved {
		env.Request.Input, env.Request.ApprovalID = chk.Input, ""
	}
	if p, ok := host.NamedPrincipal(ctx); ok {
		env.Principal = p
	}
	subject := CallSubjectPrefix + chk.SkillID
	var why []string
	for attempt := range 2 {
		res, err := r.attempt(ctx, subject, env)
		if !errors.Is(err, errNotStarted) {
			if err != nil {
				return res, err
			}
			return r.n.host.FinishRemoteCall(ctx, res)
		}
		why = append(why, err.Error())
		if attempt == 0 {
			if others := r.peers.serving(chk.SkillID, time.Now(), r.n.Name()); len(others) > 0 {
				subject = HeartbeatSubjectPrefix + others[0] + NodeCallInfix + chk.SkillID
			}
			r.n.log.Debug("call not started, retrying", "skill_id", chk.SkillID, "reason", err, "subject", subject)
		}
	}
	return nil, fmt.Errorf("%w: %s: %s", ErrNoRoute, chk.SkillID, strings.Join(why, "; then "))
}

// attempt sends env to subject once and waits for its answers on an inbox
// of its own (two replies: accepted, then the result).
func (r *router) attempt(ctx context.Context, subject string, env callEnvelope) (*host.CallResult, error) {
	nc := r.n.link.nc
	left := time.Until(env.Deadline)
	wait := min(maxAcceptWait, left/2)
	env.AcceptBy = time.Now().Add(wait)
	data, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("cluster: call request: %w", err)
	}
	if len(data) > MaxPayload {
		return nil, fmt.Errorf("%w: the call request is %d bytes, over the %d-byte message limit", host.ErrInputTooLarge, len(data), MaxPayload)
	}
	ch := make(chan *nats.Msg, 4)
	inbox := nc.NewInbox()
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return nil, Unavailable(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishMsg(&nats.Msg{Subject: subject, Reply: inbox, Data: data}); err != nil {
		return nil, Unavailable(err)
	}
	accept := time.NewTimer(wait)
	defer accept.Stop()
	tick := time.NewTicker(r.n.link.cfg.HeartbeatInterval)
	defer tick.Stop()
	var by string
	var at time.Time
	for {
		select {
		case m := <-ch:
			if m.Header.Get("Status") == "503" {
				return nil, fmt.Errorf("%w: no node answers %s", errNotStarted, subject)
			}
			var rep callReply
			if err := json.Unmarshal(m.Data, &rep); err != nil || rep.V != wireVersion {
				return nil, &RemoteError{Node: rep.Node, ErrCode: errcode.Internal, Message: fmt.Sprintf("a malformed answer to a call of %s (version %d): %v", env.Request.SkillID, rep.V, err)}
			}
			switch rep.Kind {
			case replyBusy:
				return nil, fmt.Errorf("%w: node %s is busy or does not serve the skill", errNotStarted, rep.Node)
			case replyAccepted:
				by, at = rep.Node, time.Now()
				accept.Stop()
			case replyResult:
				if rep.Error != nil {
					return rep.Result, rep.errorOf()
				}
				if rep.Result == nil {
					return nil, &RemoteError{Node: rep.Node, ErrCode: errcode.Internal, Message: "a call result without a result"}
				}
				return rep.Result, nil
			}
		case <-accept.C:
			if by == "" {
				return nil, fmt.Errorf("%w: no node accepted it within %s", errNotStarted, wait)
			}
		case now := <-tick.C:
			if by != "" && r.peers.lost(by, at, now) {
				return nil, fmt.Errorf("%w: node %s (unheard for %s) was running %s tool %s",
					ErrNodeLost, by, r.n.link.cfg.LivenessWindow, env.Request.SkillID, env.Request.ToolID)
			}
		case <-ctx.Done():
			code := errcode.ErrTimeout
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				code = errcode.ErrCanceled
			}
			where := "no node accepted it"
			if by != "" {
				where = "running on node " + by
			}
			return nil, fmt.Errorf("%w: %s tool %s, %s: %v", code, env.Request.SkillID, env.Request.ToolID, where, ctx.Err())
		}
	}
}
