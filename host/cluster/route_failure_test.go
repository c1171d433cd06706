package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/palyra-go/palyra/host"
)

func TestNodeLostMidCallAndRoutingAway(t *testing.T) {
	ctx := context.Background()
	nodes := startRouteCluster(t, 3, serveNothing)
	caller := nodes[0]
	for i := 1; i < 3; i++ {
		waitServing(t, nodes, i, "acme.sleep")
		waitServing(t, nodes, i, "acme.echo")
	}
	// A 10 s call through node 0 runs on node 1 or 2.
	type outcome struct {
		res *host.CallResult
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := caller.node.Call(ctx, host.CallRequest{SkillID: "acme.sleep", ToolID: "acme.sleep.t", Input: json.RawMessage(`{}`), Timeout: 30 * time.Second})
		done <- outcome{res, err, time.Now()}
	}()
	var victim *testNode
	waitFor(t, 10*time.Second, "the call to start", func() bool {
		for _, tn := range nodes[1:] {
			if tn.node.route.running("acme.sleep") > 0 {
				victim = tn
			}
		}
		return victim != nil
	})
	survivor := nodes[1]
	if victim == nodes[1] {
		survivor = nodes[2]
	}
	// The victim's NATS server and connection go away as if its process
	// died: no goodbye, its heartbeats just stop.
	killed := time.Now()
	victim.link.Close()

	// Calls through node 0 keep working from the moment of the kill:
	// measure how long until none goes to the dead node (every call in a row of 10 runs on the survivor at
	// once, with no retry).
	echo := host.CallRequest{SkillID: "acme.echo", ToolID: "acme.echo.t", Input: json.RawMessage(`{"text":"x"}`), Timeout: 10 * time.Second}
	var failed int
	var settled time.Time
	streak := 0
	for streak < 10 {
		if time.Since(killed) > 30*time.Second {
			t.Fatal("calls still go to the dead node after 30 s")
		}
		start := time.Now()
		res, err := caller.node.Call(ctx, echo)
		switch {
		case err != nil:
			failed++
			streak = 0
			t.Logf("call %s after the kill: %v", start.Sub(killed), err)
		case !ranOn(t, survivor.host, res.SidecarPID):
			t.Fatalf("call ran on sidecar %d, not the survivor's", res.SidecarPID)
		case time.Since(start) > maxAcceptWait/2:
			streak = 0 // it waited for an accept: the dead node was tried first
		default:
			if streak == 0 {
				settled = start
			}
			streak++
		}
	}
	t.Logf("no call goes to the dead node %s after the kill (%d calls failed meanwhile)", settled.Sub(killed), failed)
	if failed > 0 {
		t.Errorf("%d calls failed after the kill; a call the dead node never accepted should be retried", failed)
	}
	var out outcome
	select {
	case out = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call hangs after its node died")
	}
	t.Logf("node_lost after %s (liveness window %s): %v", out.at.Sub(killed), caller.link.cfg.LivenessWindow, out.err)
	if !errors.Is(out.err, ErrNodeLost) || out.res != nil || host.CallResultOf(out.err) != nil {
		t.Fatalf("got %v, %+v; want ErrNodeLost and no result", out.err, out.res)
	}

	// The dead node's own call is canceled when it closes.
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	victim.node.Close(cctx)
}

func TestNeverStartedCallIsRetried(t *testing.T) {
	ctx := context.Background()
	nodes := startRouteCluster(t, 2, serveNothing)
	caller := nodes[0]
	waitServing(t, nodes, 1, "acme.echo")
	// A member of the skill's queue group that drops every request, on
	// the caller's own server (NATS prefers local queue members).
	var dropped atomic.Int64
	sub, err := caller.link.Conn().QueueSubscribe(CallSubjectPrefix+"acme.echo", CallQueueGroup, func(*nats.Msg) { dropped.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	caller.link.Conn().Flush()
	calls := 0
	for dropped.Load() < 2 {
		if calls++; calls > 40 {
			t.Fatalf("the dropping member got %d of %d requests", dropped.Load(), calls)
		}
		res, err := caller.node.Call(ctx, host.CallRequest{SkillID: "acme.echo", ToolID: "acme.echo.t", Input: json.RawMessage(`{"text":"x"}`)})
		if err != nil {
			t.Fatalf("call %d: %v", calls, err)
		}
		if !ranOn(t, nodes[1].host, res.SidecarPID) {
			t.Fatalf("call %d ran on sidecar %d, not node 1's", calls, res.SidecarPID)
		}
	}
	t.Logf("%d calls, %d dropped by the first responder and retried on node 1", calls, dropped.Load())
}

func TestNoRoute(t *testing.T) {
	nodes := startRouteCluster(t, 1, serveNothing)
	_, err := nodes[0].node.Call(context.Background(), host.CallRequest{SkillID: "acme.echo", ToolID: "acme.echo.t", Input: json.RawMessage(`{"text":"x"}`)})
	if !errors.Is(err, ErrNoRoute) {
		t.Fatalf("err %v, want ErrNoRoute", err)
	}
	t.Log(err)
}
