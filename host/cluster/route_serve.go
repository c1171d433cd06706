package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/micro"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
)

// sync follows the local host's catalog: when its generation changed, the
// skills this node serves are recomputed (the current active skills,
// restricted by Config.Skills) and, when they changed, the micro service
// is registered again with one endpoint per skill (micro has no way to
// remove one endpoint).
func (r *router) sync(ctx context.Context) error {
	cat, err := r.n.host.Tools(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	same := cat.Generation == r.gen && r.svc != nil
	r.mu.Unlock()
	if same {
		return nil
	}
	var skills []string
	for _, t := range cat.Tools {
		if r.allowed(t.SkillID) && !slices.Contains(skills, t.SkillID) {
			skills = append(skills, t.SkillID)
		}
	}
	slices.Sort(skills)
	r.mu.Lock()
	if r.stopping {
		r.mu.Unlock()
		return nil
	}
	old := r.svc
	if old != nil && slices.Equal(skills, r.served) {
		r.gen = cat.Generation
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	svc, err := r.register(skills)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.stopping {
		r.mu.Unlock()
		svc.Stop()
		return nil
	}
	r.svc, r.served, r.gen = svc, skills, cat.Generation
	r.mu.Unlock()
	if old != nil {
		old.Stop()
	}
	r.n.log.Info("serving skills", "skills", strings.Join(skills, ","))
	return nil
}

// register adds the node's micro service (version NodeOptions.Version,
// or 0.0.0 when that is not a semantic version): one endpoint per skill in the
// queue group, and the node's own endpoint for retries sent to it by name.
func (r *router) register(skills []string) (micro.Service, error) {
	node := r.n.Name()
	cfg := micro.Config{
		Name: ServiceName, Version: strings.TrimPrefix(r.n.opts.Version, "v"),
		Description: "Palyra-Go skills served by node " + node,
		Metadata:    map[string]string{"node": node, "palyra_version": r.n.opts.Version},
		QueueGroup:  CallQueueGroup,
	}
	svc, err := micro.AddService(r.n.link.nc, cfg)
	if errors.Is(err, micro.ErrConfigValidation) && cfg.Version != "0.0.0" {
		// micro wants a semantic version: a build's "dev" is 0.0.0 there
		// (the metadata keeps it).
		cfg.Version = "0.0.0"
		svc, err = micro.AddService(r.n.link.nc, cfg)
	}
	if err != nil {
		return nil, Unavailable(fmt.Errorf("cluster: micro service: %w", err))
	}
	for i, s := range skills {
		err := svc.AddEndpoint(fmt.Sprintf("call-%d", i), micro.HandlerFunc(r.handle),
			micro.WithEndpointSubject(CallSubjectPrefix+s), micro.WithEndpointQueueGroup(CallQueueGroup),
			micro.WithEndpointMetadata(map[string]string{"skill": s}))
		if err != nil {
			svc.Stop()
			return nil, Unavailable(fmt.Errorf("cluster: endpoint for %s: %w", s, err))
		}
	}
	err = svc.AddEndpoint("node", micro.HandlerFunc(r.handle),
		micro.WithEndpointSubject(HeartbeatSubjectPrefix+node+NodeCallInfix+">"), micro.WithEndpointQueueGroupDisabled())
	if err != nil {
		svc.Stop()
		return nil, Unavailable(fmt.Errorf("cluster: node endpoint: %w", err))
	}
	return svc, nil
}

// queueFactor is how far past its in-flight bound a node takes the calls
// other nodes send it: the bound spreads calls (a node that has room runs
// them itself), and a cluster that is busy everywhere queues them in the
// sidecars' queues rather than refusing them.
const queueFactor = 8

// handle answers a call request: busy when this node does not serve the
// skill, is full (queueFactor × its in-flight bound), is stopping or got the request after its accept-by time
// (the call does not start); else accepted at once, then the result of
// the local host's Call, run under the request's deadline and principal,
// on its own goroutine.
func (r *router) handle(req micro.Request) {
	// reply answers through micro (counted in its stats) while the
	// handler runs; the result, sent later from another goroutine, is
	// published to the reply subject directly (micro's request is not
	// safe to use once its handler returned).
	reply := func(rep callReply) { r.reply(req.Reply(), rep, req.Respond) }
	var env callEnvelope
	if err := json.Unmarshal(req.Data(), &env); err != nil || env.V != wireVersion {
		reply(callReply{Kind: replyResult, Error: &wireError{Code: errcode.Of(host.ErrBadRequest), Message: fmt.Sprintf("call request of version %d (want %d) or malformed: %v", env.V, wireVersion, err)}})
		return
	}
	skill := strings.ToLower(strings.TrimSpace(env.Request.SkillID))
	s, ok := strings.CutPrefix(req.Subject(), CallSubjectPrefix)
	if !ok {
		s, _ = strings.CutPrefix(req.Subject(), HeartbeatSubjectPrefix+r.n.Name()+NodeCallInfix)
	}
	if s != skill {
		reply(callReply{Kind: replyResult, Error: &wireError{Code: errcode.Of(host.ErrBadRequest), Message: fmt.Sprintf("a call of %q sent to the subject of %q", skill, s)}})
		return
	}
	// The slot and the serving count are taken under the lock that
	// stopRouting sets stopping under, so no call starts after it waits.
	r.mu.Lock()
	_, served := slices.BinarySearch(r.served, skill)
	ok = !r.stopping && served && !time.Now().After(env.AcceptBy) && r.inFlight[skill] < r.maxInFlight*queueFactor
	if ok {
		r.inFlight[skill]++
		r.serving.Add(1)
	}
	r.mu.Unlock()
	if !ok {
		reply(callReply{Kind: replyBusy})
		return
	}
	reply(callReply{Kind: replyAccepted})
	go func() {
		defer r.serving.Done()
		defer r.release(skill)
		ctx, cancel := context.WithDeadline(r.serveCtx, env.Deadline)
		defer cancel()
		if env.Principal != "" {
			ctx = host.WithPrincipal(ctx, env.Principal)
		}
		call := r.n.host.CallRouted
		if env.Approved {
			call = r.n.host.CallApproved
		}
		res, err := call(ctx, env.Request)
		rep := callReply{Kind: replyResult, Result: res}
		if err != nil {
			rep.Result = host.CallResultOf(err)
			rep.Error = &wireError{Code: errcode.Of(err), Message: err.Error()}
		}
		r.reply(req.Reply(), rep, nil)
	}()
}

// reply sends rep to subject: through respond when given, else published
// on the node's connection.
func (r *router) reply(subject string, rep callReply, respond func([]byte, ...micro.RespondOpt) error) {
	node := r.n.Name()
	rep.V, rep.Node = wireVersion, node
	data, err := json.Marshal(rep)
	if err == nil && len(data) > MaxPayload {
		err = fmt.Errorf("the reply is %d bytes, over the %d-byte message limit", len(data), MaxPayload)
	}
	if err != nil {
		data, _ = json.Marshal(callReply{V: wireVersion, Node: node, Kind: replyResult, Error: &wireError{Code: errcode.Internal, Message: err.Error()}})
	}
	if respond != nil {
		err = respond(data)
	} else {
		err = r.n.link.nc.Publish(subject, data)
	}
	if err != nil {
		r.n.log.Debug("call reply not sent", "error", err)
	}
}
