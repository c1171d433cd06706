package cluster

// Events of the cluster: one stream (EventsStream) that every node
// publishes to and reads from, and hooks fired once per cluster from a
// durable consumer on it.
//
// Publishing. Every node applies every op and so journals the same
// lifecycle events; each publishes them (opApplied) with the message id
// "op-<seq>-<i>" (the op's sequence in OpsStream, the event's index among
// the op's events), and JetStream keeps the first and drops the others as
// duplicates within the stream's de-duplication window. A node catching up
// ops older than that window does not publish them: the live nodes did
// when the ops were new, and a second copy would no longer be dropped. At
// start a node also reads the op sequence (HeaderOpSeq) of the last stored
// op event and publishes no event of an older op. Events that come from
// no op are published by the node that recorded them: the outcomes of the
// hooks it ran (hook:dispatched, hook:failed; not journaled), before it
// acks the event that fired them, and a quarantine its own anomaly
// detector made (principal host.PrincipalAnomaly, message id
// "<node>-<journal id>"; an anomaly quarantine is assumed to be no op, so
// no other node publishes it).
//
// Hooks. The host does not dispatch hooks itself in cluster mode
// (host.Config.DispatchHooks is false). Every node pulls from one durable
// consumer, HooksConsumer, on the skill lifecycle events
// (HooksFilterSubject), with explicit acks and MaxAckPending 1: the
// cluster runs one event's hooks at a time, in stream order, on whichever
// node pulled it, which runs host.FireHooks and acks. A node that pulls
// an op's event before it applied that op itself (the event is published
// by the first node that applied it) waits until it did, so the bindings
// the ops before it made are in place on its host. So a hook skill sees
// the events in stream order, as host/hooks promises for one host (the
// price: a slow hook delays the next event's hooks on every node, up to
// the hook's time limit). A node tells the server it is still working
// every hooksProgressEvery, so the ack wait (hooksAckWait) need not exceed
// the longest hook time limit; when a node dies mid-hook the event is
// redelivered to another node after hooksAckWait and its hooks run again:
// hooks are exactly once per cluster in a run without crashes and at least
// once when a node dies while running them (or loses its NATS connection
// for longer than hooksAckWait). The consumer's acknowledged position is
// the cluster's one hook cursor: the per-binding journal cursors of a
// single host (host/hooks) are not used in cluster mode. A node that closes lets the
// event it is running finish (within the ctx of Close) before it leaves;
// if it cannot, it hands the event back (nak) for another node to run.
//
// Reading. Node.Events reads EventsStream message by message from the
// stream's leader; an event's ID is its stream sequence, the same on every
// node.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/palyra-go/palyra/host"
)

const (
	// hooksAckWait is how long the server waits for a node running an
	// event's hooks to ack or report progress before it redelivers the
	// event to another node: a node that died mid-hook delays the
	// cluster's hooks by this much.
	hooksAckWait = 10 * time.Second
	// hooksProgressEvery is how often a node running hooks reports
	// progress (resetting the ack wait).
	hooksProgressEvery = hooksAckWait / 3
	// hooksRetryDelay is how long an event handed back (its node closing
	// or its host unable to fire) waits before it is delivered again.
	hooksRetryDelay = time.Second
	// hooksPullWait is how long one pull for hook events waits.
	hooksPullWait = time.Second
	// lastOpScan bounds how many of the last stored events a starting
	// node reads to find the last op event.
	lastOpScan = 256
	// windowMargin is taken off the stream's de-duplication window before
	// comparing an op's age with it, for the clocks of the servers and
	// the node.
	windowMargin = 10 * time.Second
	// eventPublishBudget is how long an event is retried (the message id makes
	// a retry safe) before its loss is logged: longer than a stream
	// leader's re-election after a node of three goes away.
	eventPublishBudget = 15 * time.Second
)

// eventRelay is a node's part of the cluster's events: its publisher and
// its hook runner.
type eventRelay struct {
	initOnce sync.Once
	window   time.Duration // the events stream's de-duplication window
	skipOps  uint64        // ops below this have their events stored

	fires atomic.Uint64 // counts Node.FireHooks calls, for message ids

	stopHooks context.CancelFunc // ends the hooks loop's pulls
	abortHook context.CancelFunc // cancels the event whose hooks run
	hooksDone chan struct{}
}

// eventSubject is the subject of an event of kind ("skill:enabled" is
// palyra.events.skill.enabled).
func eventSubject(kind string) string {
	r := strings.NewReplacer(":", ".", " ", "_", "*", "_", ">", "_")
	return EventsSubjectPrefix + r.Replace(kind)
}

// initPublisher reads what publishing needs from the stream, once: the
// de-duplication window and the op of the last stored op event.
func (n *Node) initPublisher(ctx context.Context) {
	r := &n.ev
	r.initOnce.Do(func() {
		r.window = 2 * time.Minute
		s := n.link.Events()
		info, err := s.Info(ctx)
		if err != nil {
			n.log.Warn("reading the events stream; publishing every op's events", "error", Unavailable(err))
			return
		}
		if info.Config.Duplicates > 0 {
			r.window = info.Config.Duplicates
		}
		for seq, k := info.State.LastSeq, 0; seq >= info.State.FirstSeq && seq > 0 && k < lastOpScan; seq, k = seq-1, k+1 {
			m, err := s.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				n.log.Warn("reading the last events; publishing every op's events", "error", Unavailable(err))
				return
			}
			if v := m.Header.Get(HeaderOpSeq); v != "" {
				if op, err := strconv.ParseUint(v, 10, 64); err == nil {
					r.skipOps = op
					return
				}
			}
		}
	})
}

func (n *Node) startEvents(ctx context.Context) error {
	n.initPublisher(ctx)
	// The consumer is created (or found) with retries, bounded by the
	// link's ConnectTimeout: a node restarted right after another died
	// meets the consumer's raft group electing a leader.
	var cons jetstream.Consumer
	err := retryUnavailable(ctx, n.link.cfg.ConnectTimeout, func(c context.Context) (err error) {
		cons, err = n.link.JetStream().CreateOrUpdateConsumer(c, EventsStream, hooksConsumerConfig(n.link.cfg.Replicas))
		return err
	})
	if err != nil {
		return fmt.Errorf("cluster: hooks consumer %s: %w", HooksConsumer, Unavailable(err))
	}
	r := &n.ev
	var stop, hookCtx context.Context
	stop, r.stopHooks = context.WithCancel(n.ctx)
	hookCtx, r.abortHook = context.WithCancel(context.WithoutCancel(n.ctx))
	r.hooksDone = make(chan struct{})
	go func() {
		defer close(r.hooksDone)
		n.runHooks(stop, hookCtx, cons)
	}()
	n.goLoop(n.followLocal)
	return nil
}

// hooksConsumerConfig is the durable consumer HooksConsumer.
func hooksConsumerConfig(replicas int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:     HooksConsumer,
		Description: "Palyra-Go hooks: each lifecycle event to one node, which fires its hooks",
		// Events stored before the consumer first existed (a cluster
		// that ran without it) fire no hooks.
		DeliverPolicy: jetstream.DeliverNewPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       hooksAckWait,
		MaxDeliver:    -1,
		// One event's hooks at a time in the cluster, in stream order.
		MaxAckPending: 1,
		FilterSubject: HooksFilterSubject,
		Replicas:      replicas,
	}
}

// stopEvents stops pulling events for hooks and waits for the event whose
// hooks run to finish, until ctx ends: then they are canceled and the
// event handed back.
func (n *Node) stopEvents(ctx context.Context) error {
	r := &n.ev
	if r.stopHooks == nil {
		return nil
	}
	r.stopHooks()
	select {
	case <-r.hooksDone:
		r.abortHook()
		return nil
	case <-ctx.Done():
	}
	r.abortHook()
	<-r.hooksDone
	return nil
}

// opApplied is called by the ops applier after this node applied op seq
// (appended at at) with the events the local host journaled for it: it
// publishes them, unless they are stored already or too old to be told
// apart from a stored copy.
func (n *Node) opApplied(ctx context.Context, seq uint64, at time.Time, evs []host.Event) {
	if len(evs) == 0 {
		return
	}
	n.initPublisher(ctx)
	r := &n.ev
	if seq < r.skipOps {
		return
	}
	if age := time.Since(at); age > r.window-windowMargin {
		n.log.Debug("op older than the events' de-duplication window; its events are not published again",
			"op", seq, "age", age, "window", r.window)
		return
	}
	for i, ev := range evs {
		h := nats.Header{}
		h.Set(HeaderOpSeq, strconv.FormatUint(seq, 10))
		n.publishEvent(ctx, ev, fmt.Sprintf("op-%d-%d", seq, i), h)
	}
}

// publishEvent publishes ev (its ID left out: the stream's sequence is the
// cluster's ID) under msgID, with h.
func (n *Node) publishEvent(ctx context.Context, ev host.Event, msgID string, h nats.Header) {
	localID := ev.ID
	ev.ID = 0
	data, err := json.Marshal(ev)
	if err != nil {
		n.log.Error("encoding an event", "kind", ev.Kind, "error", err)
		return
	}
	h.Set(HeaderNode, n.Name())
	msg := &nats.Msg{Subject: eventSubject(ev.Kind), Header: h, Data: data}
	giveUp := time.Now().Add(eventPublishBudget)
	for attempt := 1; ; attempt++ {
		_, err = n.link.JetStream().PublishMsg(ctx, msg, jetstream.WithMsgID(msgID), jetstream.WithRetryAttempts(10))
		if err == nil || time.Now().After(giveUp) || ctx.Err() != nil {
			break
		}
		// Another node storing the same event right now is the common
		// case: the next attempt finds it stored (or stores it).
		select {
		case <-ctx.Done():
		case <-time.After(min(time.Duration(attempt)*50*time.Millisecond, time.Second)):
		}
	}
	if err != nil {
		n.log.Warn("event not published to the cluster", "kind", ev.Kind, "skill_id", ev.SkillID,
			"local_id", localID, "msg_id", msgID, "error", Unavailable(err))
	}
}

// followLocal publishes the quarantines this node's anomaly detector
// makes: they come from no op.
func (n *Node) followLocal(ctx context.Context) {
	for ctx.Err() == nil {
		err := n.host.Events(ctx, host.EventsRequest{After: -1, Follow: true}, func(ev host.Event) error {
			if ev.ID > 0 && ev.Principal == host.PrincipalAnomaly {
				n.publishEvent(ctx, ev, fmt.Sprintf("%s-%d", n.Name(), ev.ID), nats.Header{})
				if ev.Kind == "skill:quarantined" {
					n.replicateAnomaly(ctx, ev)
				}
			}
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			n.log.Warn("following the local events", "error", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// replicateAnomaly makes a quarantine by this node's anomaly detector the
// cluster's: an op every node applies (this one finds the version
// quarantined already), quiet because ev is published already. Its
// principal names the node, system:anomaly@<node>: the other nodes record
// who quarantined, and do not take it for their own detector's.
func (n *Node) replicateAnomaly(ctx context.Context, ev host.Event) {
	qctx, cancel := context.WithTimeout(host.WithPrincipal(ctx, host.PrincipalAnomaly+"@"+n.Name()), 30*time.Second)
	defer cancel()
	req := host.StatusRequest{SkillID: ev.SkillID, Version: ev.Version, Reason: ev.Reason}
	if _, err := n.submit(qctx, Op{Kind: OpQuarantine, Status: &req, Quiet: true}); err != nil && ctx.Err() == nil {
		n.log.Error("the anomaly quarantine was not replicated; the other nodes still serve the version",
			"skill_id", ev.SkillID, "skill_version", ev.Version, "error", err)
	}
}

// fireHooks runs the hooks bound to req's event on this node's host and
// publishes their outcomes (hook:dispatched, hook:failed) to the cluster's
// stream under the message ids idPrefix-<i>, before it returns.
func (n *Node) fireHooks(ctx context.Context, req host.FireRequest, idPrefix string) (*host.FireResult, error) {
	res, err := n.host.FireHooks(ctx, req)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for i, o := range res.Outcomes {
		n.publishEvent(pctx, host.HookOutcomeEvent(o), fmt.Sprintf("%s-%d", idPrefix, i), nats.Header{})
	}
	return res, nil
}

// FireHooks implements host.Service: the hooks run on this node, and
// their outcomes join the cluster's events.
func (n *Node) FireHooks(ctx context.Context, req host.FireRequest) (*host.FireResult, error) {
	id := fmt.Sprintf("%s-%d-fire-%d", n.Name(), n.start.UnixNano(), n.ev.fires.Add(1))
	return n.fireHooks(ctx, req, id)
}

// runHooks pulls events from the hooks consumer, one at a time, and fires
// their hooks, until stop ends. hookCtx bounds the hooks themselves. A
// pull is not canceled when stop ends (the server could have sent an
// event the node would then never see, holding the cluster's hooks for
// hooksAckWait): it lasts at most hooksPullWait, and an event it brings
// after stop is handed back at once.
func (n *Node) runHooks(stop, hookCtx context.Context, cons jetstream.Consumer) {
	for stop.Err() == nil {
		msg, err := cons.Next(jetstream.FetchMaxWait(hooksPullWait))
		if err != nil {
			if !errors.Is(err, nats.ErrTimeout) && stop.Err() == nil {
				n.log.Debug("pulling events for hooks", "error", err)
				select {
				case <-stop.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		if stop.Err() != nil {
			_ = msg.Nak()
			return
		}
		n.fireEvent(stop, hookCtx, msg)
	}
}

// fireEvent fires the hooks of the event msg holds and acks it; an event
// whose hooks could not run (the node closing: stop or ctx ended) is
// handed back.
func (n *Node) fireEvent(stop, ctx context.Context, msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		n.log.Error("hook event without metadata; dropped", "subject", msg.Subject(), "error", err)
		_ = msg.Term()
		return
	}
	var ev host.Event
	if err := json.Unmarshal(msg.Data(), &ev); err != nil {
		n.log.Error("hook event not decodable; dropped", "seq", meta.Sequence.Stream, "error", err)
		_ = msg.Term()
		return
	}
	ev.ID = int64(meta.Sequence.Stream)
	payload, err := json.Marshal(ev)
	if err != nil {
		_ = msg.Term()
		return
	}
	// The server redelivers an event whose node stops reporting progress
	// (it died): then its hooks run again elsewhere, at least once.
	done := make(chan struct{})
	progress := make(chan struct{})
	go func() {
		defer close(progress)
		t := time.NewTicker(hooksProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	// An op's event is published by the first node that applied the op,
	// and may be pulled here before this node applied it: its hooks
	// wait for this host to be there (the bindings of earlier ops in
	// place), or a hook bound just before would be missed.
	if err = n.waitApplied(stop, ctx, msg.Headers().Get(HeaderOpSeq)); err == nil {
		// The outcomes' message ids name the delivery: a second run of the
		// hooks (after a node died mid-hook) is told, not hidden.
		id := fmt.Sprintf("%s-hook-%d-%d", n.Name(), meta.Sequence.Stream, meta.NumDelivered)
		_, err = n.fireHooks(ctx, host.FireRequest{Event: ev.Kind, Payload: payload}, id)
	}
	close(done)
	<-progress
	switch {
	case ctx.Err() != nil || errors.Is(err, host.ErrClosed) || errors.Is(err, errNotApplied):
		n.log.Info("hooks of an event not run here; handed back", "seq", ev.ID, "event", ev.Kind)
		_ = msg.NakWithDelay(hooksRetryDelay)
		return
	case err != nil:
		// An event no hook can bind to, or a host that cannot fire: the
		// event is done with (it would fail the same way elsewhere).
		n.log.Warn("hooks of an event not fired", "seq", ev.ID, "event", ev.Kind, "error", err)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		n.log.Warn("hook event ack not confirmed; it may run again", "seq", ev.ID, "error", Unavailable(err))
	}
}

// errNotApplied: the node stopped before it applied the op of an event
// whose hooks wait for it.
var errNotApplied = errors.New("cluster: the node stopped before it applied the event's op")

// waitApplied waits until this node applied the op whose sequence is
// opSeq (an event's HeaderOpSeq; nothing to wait for when empty), or
// stop or ctx ends (errNotApplied). The applier applies every op in
// order, so it gets there unless the node closes.
func (n *Node) waitApplied(stop, ctx context.Context, opSeq string) error {
	if opSeq == "" || n.ops == nil {
		return nil
	}
	seq, err := strconv.ParseUint(opSeq, 10, 64)
	if err != nil {
		return nil // not ours to judge: the hooks run as for any event
	}
	s := n.ops
	for {
		s.mu.Lock()
		got, ch := s.applied, s.changed
		s.mu.Unlock()
		if got >= seq {
			return nil
		}
		select {
		case <-ch:
		case <-stop.Done():
			return errNotApplied
		case <-ctx.Done():
			return errNotApplied
		}
	}
}

// Events implements host.Service over the cluster's events stream: the
// events after req.After (a stream sequence, which is an event's ID on
// every node; req.After < 0: none of the past), then, with req.Follow,
// live ones until ctx ends or the node closes. Events are read by
// sequence (like the ops applier), woken by a plain subscription to the
// events' subjects; a follower rides out a stream leader's re-election.
func (n *Node) Events(ctx context.Context, req host.EventsRequest, fn func(host.Event) error) error {
	if !req.Follow && req.After < 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(n.ctx, cancel)()
	s := n.link.Events()
	wake := make(chan struct{}, 1)
	if req.Follow {
		sub, err := n.link.Conn().Subscribe(EventsSubjectPrefix+">", func(*nats.Msg) {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		if err != nil {
			return fmt.Errorf("cluster: events: %w", Unavailable(err))
		}
		defer sub.Unsubscribe()
	}
	// bounds returns the stream's first and last sequences.
	bounds := func() (uint64, uint64, error) {
		c, cancel := context.WithTimeout(ctx, publishBudget)
		defer cancel()
		info, err := s.Info(c)
		if err != nil {
			return 0, 0, err
		}
		return info.State.FirstSeq, info.State.LastSeq, nil
	}
	first, last, err := bounds()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("cluster: events: %w", Unavailable(err))
	}
	next := last + 1
	if req.After >= 0 {
		next = uint64(req.After) + 1
	}
	// The stream's info may come from a member that is behind (a server
	// that sees the stream's group without a leader answers with its own
	// state), so its last sequence is a hint: a message is read by
	// sequence from the stream's leader, and the replay ends at the first
	// sequence past that hint that is not stored. Below it, a missing
	// message aged out (or was deleted) and is skipped.
	for {
		next = max(next, first)
	replay:
		for {
			c, cancel := context.WithTimeout(ctx, publishBudget)
			m, err := s.GetMsg(c, next)
			cancel()
			switch {
			case errors.Is(err, jetstream.ErrMsgNotFound) && next > last:
				break replay // the end of the stream
			case errors.Is(err, jetstream.ErrMsgNotFound):
				next++ // aged out or deleted
				continue
			case err != nil && ctx.Err() != nil:
				return nil
			case err != nil && !req.Follow:
				return fmt.Errorf("cluster: events: %w", Unavailable(err))
			case err != nil:
				n.log.Debug("reading the events stream; retrying", "seq", next, "error", err)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(250 * time.Millisecond):
				}
				continue
			}
			var ev host.Event
			if err := json.Unmarshal(m.Data, &ev); err != nil {
				n.log.Warn("event not decodable; skipped", "seq", next, "error", err)
			} else {
				ev.ID = int64(m.Sequence)
				if err := fn(ev); err != nil {
					return err
				}
			}
			next++
		}
		if !req.Follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-time.After(time.Second):
		}
		if f, l, err := bounds(); err == nil {
			first, last = f, l
		} else if ctx.Err() != nil {
			return nil
		}
	}
}
