package cluster

// The applier: one loop per node that reads OpsStream in order from the
// last sequence this node applied and applies each op to the local host.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// ErrInvalidOp is a message in OpsStream this node cannot read (not JSON,
// an envelope version it does not know, a kind without its fields): the
// node refuses it and moves on.
var ErrInvalidOp = errcode.New("cluster_invalid_op", "an op of the cluster's stream cannot be read")

// CatchUpTimeout bounds how long NewNode waits for the node to apply the
// ops appended before it joined.
const CatchUpTimeout = 5 * time.Minute

// AppliedFile is where a node keeps the last ops-stream sequence it
// applied, under its state directory.
const AppliedFile = "cluster/applied"

const (
	retryMin = 100 * time.Millisecond
	retryMax = 2 * time.Second
)

// startOps reads the node's position, starts the applier and waits
// (bounded by ctx and CatchUpTimeout) until the node applied every op the
// stream held when it joined, so a restarted or new node serves its whole
// state from the start.
func (n *Node) startOps(ctx context.Context) error {
	s := &opsState{waiters: map[string]chan outcome{}, changed: make(chan struct{})}
	applied, err := readApplied(n.appliedPath())
	if err != nil {
		return err
	}
	s.applied = applied
	// The journal's end: events journaled before now belong to no op.
	if err := n.host.Events(ctx, host.EventsRequest{After: 0}, func(ev host.Event) error {
		s.lastEvent = ev.ID
		return nil
	}); err != nil {
		return fmt.Errorf("cluster: read the local journal: %w", err)
	}
	ictx, cancel := context.WithTimeout(ctx, publishBudget)
	info, err := n.link.ops.Info(ictx)
	cancel()
	if err != nil {
		return fmt.Errorf("cluster: the ops stream: %w", Unavailable(err))
	}
	target := info.State.LastSeq
	if applied > target {
		n.log.Warn("this node applied ops past the stream's end: is the state dir from another cluster?", "applied", applied, "stream_last", target)
	}
	var opsCtx context.Context
	opsCtx, s.stop = context.WithCancel(n.ctx)
	n.ops = s
	n.goLoop(func(context.Context) { n.applyLoop(opsCtx) })

	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, CatchUpTimeout)
	defer cancel()
	for {
		s.mu.Lock()
		got, ch := s.applied, s.changed
		s.mu.Unlock()
		if got >= target {
			break
		}
		select {
		case <-ch:
		case <-wctx.Done():
			return fmt.Errorf("%w: node %s applied ops up to %d of %d in %s", ErrClusterUnavailable, n.Name(), got, target, time.Since(start).Round(time.Millisecond))
		}
	}
	n.log.Info("caught up with the cluster's ops", "from", applied, "to", target, "ops", target-min(applied, target), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// stopOps ends the applier; an op being applied is re-applied at the next
// start (harmlessly: see applyLoop).
func (n *Node) stopOps(ctx context.Context) error {
	s := n.ops
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	return nil
}

func (n *Node) appliedPath() string {
	return filepath.Join(n.host.StateDir(), filepath.FromSlash(AppliedFile))
}

// readApplied reads the applied file (0 when there is none).
func readApplied(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cluster: %w", err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s holds %q, not a sequence", ErrInvalidConfig, path, b)
	}
	return v, nil
}

// sleep waits d or until ctx ends, reporting whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// applyLoop applies the stream, in order, from the last applied sequence
// + 1, until ctx ends. It reads each op by its sequence (a stream get,
// which the stream's leader answers whichever server that is), so there is
// no consumer state to lose when servers come and go; a core subscription
// on the ops' subjects wakes it when an op is appended, and it looks
// every PollInterval anyway (a wake lost while reconnecting).
//
// The position is recorded after each op: an op applied just before a
// crash is applied again at the next start, which is harmless (a second
// install of a version is already_installed, a status already set is left
// unchanged, a remove of a version gone is skill_not_found).
func (n *Node) applyLoop(ctx context.Context) {
	defer n.failWaiters()
	wake := make(chan struct{}, 1)
	sub, err := n.link.nc.Subscribe(OpsSubjectPrefix+">", func(*nats.Msg) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		n.log.Warn("no wake-ups on new ops; polling only", "error", err)
	} else {
		defer sub.Unsubscribe()
	}
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	woke, retry := false, 0
	var lastErr string
	for {
		got, err := n.applyAvailable(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && errors.Is(err, errStop):
			n.log.Error("applying the ops stream stopped", "after", n.Applied(), "error", err)
			return
		case err != nil:
			if e := err.Error(); e != lastErr {
				n.log.Warn("reading the ops stream", "after", n.Applied(), "error", err)
				lastErr = e
			}
		default:
			lastErr = ""
		}
		// A wake can come before the op is readable from the stream
		// (the core message and the stream's commit race): look again
		// shortly before waiting for the next wake.
		if woke && got == 0 && err == nil && retry < 8 {
			if !sleep(ctx, time.Millisecond<<retry) {
				return
			}
			retry++
			continue
		}
		woke, retry = false, 0
		select {
		case <-ctx.Done():
			return
		case <-wake:
			woke = true
		case <-tick.C:
		}
	}
}

// PollInterval is how often a node looks for new ops when no wake-up came.
const PollInterval = time.Second

// errStop marks an applier failure that ends the loop.
var errStop = errors.New("the applier cannot go on")

// applyAvailable applies the ops after the last applied one, until the
// stream has no next op, and returns how many it applied.
func (n *Node) applyAvailable(ctx context.Context) (int, error) {
	count := 0
	for {
		seq := n.Applied() + 1
		gctx, cancel := context.WithTimeout(ctx, publishBudget)
		msg, err := n.link.ops.GetMsg(gctx, seq)
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			ictx, cancel := context.WithTimeout(ctx, publishBudget)
			info, ierr := n.link.ops.Info(ictx)
			cancel()
			if ierr != nil || seq >= info.State.FirstSeq {
				// Not appended yet, or appended but not readable yet:
				// the stream denies deletes, so an op after its first
				// sequence never goes away.
				return count, Unavailable(ierr)
			}
			// Before the stream's first sequence: gone for good.
			n.log.Error("an op of the stream is gone; skipped", "seq", seq, "stream_first", info.State.FirstSeq)
			msg, err = &jetstream.RawStreamMsg{Sequence: seq}, nil
		}
		if err != nil {
			return count, Unavailable(err)
		}
		if msg.Data == nil {
			err = n.applyMsg(ctx, seq, []byte("null"))
		} else {
			err = n.applyMsg(ctx, seq, msg.Data)
		}
		if err != nil {
			if ctx.Err() != nil {
				return count, ctx.Err()
			}
			return count, fmt.Errorf("%w: seq %d: %w", errStop, seq, err)
		}
		count++
	}
}

// failWaiters ends every origin still waiting: the node is closing.
func (n *Node) failWaiters() {
	s := n.ops
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, w := range s.waiters {
		w <- outcome{err: fmt.Errorf("cluster: node %s closed before its op applied: %w", n.Name(), host.ErrClosed)}
		delete(s.waiters, id)
	}
}

// applyMsg applies the op at seq, records the position, publishes the
// op's local events (opApplied) and hands the outcome to the origin's
// waiter. It returns an error only when the node cannot go on (ctx ended,
// the host closed, the position cannot be recorded); the op is then not
// recorded as applied.
func (n *Node) applyMsg(ctx context.Context, seq uint64, data []byte) error {
	s := n.ops
	var op Op
	var o outcome
	start := time.Now()
	if err := json.Unmarshal(data, &op); err != nil {
		o.err = fmt.Errorf("%w: seq %d: %v", ErrInvalidOp, seq, err)
	} else if op.V != OpVersion {
		o.err = fmt.Errorf("%w: seq %d: envelope version %d, this node reads %d", ErrInvalidOp, seq, op.V, OpVersion)
	} else {
		// Events journaled since the last op (by no op: an anomaly
		// quarantine of this node) are not this op's.
		if err := n.skipEvents(ctx); err != nil {
			return err
		}
		o = n.applyOp(ctx, seq, op)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(o.err, host.ErrClosed) {
		return o.err
	}
	if refusedOp(o.err) {
		r := Refusal{Seq: seq, Kind: op.Kind, Origin: op.Origin, At: time.Now().UTC(), Code: errcode.Of(o.err), Error: o.err.Error()}
		n.log.Error("op refused", "seq", seq, "kind", op.Kind, "origin", op.Origin, "code", r.Code, "error", o.err)
		s.mu.Lock()
		s.refused = append(s.refused, r)
		if len(s.refused) > maxRefusals {
			s.refused = s.refused[len(s.refused)-maxRefusals:]
		}
		s.refusedN++
		s.mu.Unlock()
	} else {
		n.log.Debug("op applied", "seq", seq, "kind", op.Kind, "origin", op.Origin, "code", errcode.Of(o.err), "took", time.Since(start).Round(time.Millisecond))
	}
	if err := fsutil.WriteAtomic(n.appliedPath(), []byte(strconv.FormatUint(seq, 10)+"\n"), 0o600); err != nil {
		return fmt.Errorf("cluster: record applied op %d: %w", seq, err)
	}
	var evs []host.Event
	if err := n.host.Events(ctx, host.EventsRequest{After: s.lastEvent}, func(ev host.Event) error {
		evs = append(evs, ev)
		s.lastEvent = ev.ID
		return nil
	}); err != nil && ctx.Err() == nil {
		n.log.Warn("reading the events of an op", "seq", seq, "error", err)
	}
	if !op.Quiet {
		n.opApplied(ctx, seq, op.At, evs)
	}

	s.mu.Lock()
	s.applied = seq
	close(s.changed)
	s.changed = make(chan struct{})
	if w, ok := s.waiters[op.ID]; ok && op.ID != "" {
		w <- o
		delete(s.waiters, op.ID)
	}
	s.mu.Unlock()
	return nil
}

// skipEvents moves the node's journal cursor to the journal's end.
func (n *Node) skipEvents(ctx context.Context) error {
	s := n.ops
	err := n.host.Events(ctx, host.EventsRequest{After: s.lastEvent}, func(ev host.Event) error {
		s.lastEvent = ev.ID
		return nil
	})
	if err != nil && (ctx.Err() != nil || errors.Is(err, host.ErrClosed)) {
		return err
	}
	return nil
}

// refusedOp reports whether err is a refusal of the op itself (its
// artifact or its envelope), as opposed to the local host's ordinary
// answer to it.
func refusedOp(err error) bool {
	return errors.Is(err, artifact.ErrPayloadHashMismatch) || errors.Is(err, ErrArtifactMissing) || errors.Is(err, ErrInvalidOp)
}

// applyOp applies op on the local host as op.Principal.
func (n *Node) applyOp(ctx context.Context, seq uint64, op Op) outcome {
	actx := ctx
	if op.Principal != "" {
		actx = host.WithPrincipal(ctx, op.Principal)
	}
	missing := func(field string) outcome {
		return outcome{err: fmt.Errorf("%w: seq %d: a %s op without %s", ErrInvalidOp, seq, op.Kind, field)}
	}
	h := n.host
	wrap := func(res any, err error) outcome { return outcome{res: res, err: err} }
	switch op.Kind {
	case OpInstall:
		if op.Install == nil {
			return missing("install")
		}
		data, err := n.fetchArtifact(ctx, op.ArtifactSHA256)
		if err != nil {
			return outcome{err: err}
		}
		o := op.Install
		return wrap(h.Install(actx, host.InstallRequest{
			Artifact: data, AllowTOFU: o.AllowTOFU, Force: o.Force, AcceptCapabilities: o.AcceptCapabilities,
			TrustedPublishers: o.TrustedPublishers, Source: o.Source,
		}))
	case OpEnable:
		if op.Enable == nil {
			return missing("enable")
		}
		return wrap(h.Enable(actx, *op.Enable))
	case OpReviewApprove:
		if op.Review == nil {
			return missing("review")
		}
		return wrap(h.ApproveReview(actx, *op.Review))
	case OpDisable:
		if op.Status == nil {
			return missing("status")
		}
		return wrap(h.Disable(actx, *op.Status))
	case OpQuarantine:
		if op.Status == nil {
			return missing("status")
		}
		return wrap(h.Quarantine(actx, *op.Status))
	case OpRemove:
		if op.Remove == nil {
			return missing("remove")
		}
		return wrap(h.Remove(actx, *op.Remove))
	case OpReaudit:
		return wrap(h.Reaudit(actx))
	case OpHookBind:
		if op.Hook == nil {
			return missing("hook")
		}
		return wrap(h.BindHook(actx, *op.Hook))
	case OpHookEnable:
		return wrap(h.SetHookEnabled(actx, op.HookID, op.Enabled))
	case OpHookRemove:
		return outcome{err: h.RemoveHook(actx, op.HookID)}
	case OpTrustRotate:
		if len(op.Statement) == 0 {
			return missing("statement")
		}
		return wrap(h.RotateTrust(actx, host.RotateTrustRequest{Statement: op.Statement}))
	case OpPolicySet:
		if len(op.Profile) == 0 {
			return missing("profile")
		}
		return wrap(h.SetPolicy(actx, host.SetPolicyRequest{Profile: op.Profile}))
	case OpDenyFeedUpdate:
		if len(op.Feed) == 0 {
			return missing("feed")
		}
		return wrap(h.UpdateDenyFeed(actx, host.UpdateDenyFeedRequest{Feed: op.Feed, TrustedPublishers: op.FeedTrusted}))
	}
	return outcome{err: fmt.Errorf("%w: seq %d: unknown kind %q", ErrInvalidOp, seq, op.Kind)}
}

// fetchArtifact is getArtifact, retried while the store cannot be
// reached: a node never skips an install for a passing outage. A missing
// or mismatching object is read again a few times before the op is
// refused: the object store's reads may be answered by a replica a moment
// behind the put the op follows.
func (n *Node) fetchArtifact(ctx context.Context, sum string) ([]byte, error) {
	wait, stale := retryMin, 0
	for {
		gctx, cancel := context.WithTimeout(ctx, publishBudget)
		data, err := n.getArtifact(gctx, sum)
		cancel()
		switch {
		case err == nil:
			return data, nil
		case errors.Is(err, ErrClusterUnavailable):
			n.log.Warn("reading an artifact; retrying", "sha256", sum, "error", err)
		case stale < staleReads:
			stale++
			n.log.Debug("reading an artifact again", "sha256", sum, "error", err)
		default:
			return nil, err
		}
		if !sleep(ctx, wait) {
			return nil, ctx.Err()
		}
		wait = min(2*wait, retryMax)
	}
}

// staleReads is how many times a missing or mismatching artifact is read
// again before its op is refused.
const staleReads = 3
