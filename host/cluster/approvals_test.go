package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
)

// TestApprovalLivesWhereTheCallEntered: a routed call that needs approval
// becomes a pending approval of the calling node; once approved there, the
// call with it is sent to the serving node and runs once, and the serving
// node keeps no approval of its own.
func TestApprovalLivesWhereTheCallEntered(t *testing.T) {
	ctx := context.Background()
	nodes := startRouteCluster(t, 2, serveNothing)
	caller, server := nodes[0], nodes[1]
	for _, tn := range nodes {
		installSkill(t, tn.host, approvalArtifact(t))
	}
	waitServing(t, nodes, 1, "acme.appr")
	var sent atomic.Int64
	spy, err := server.link.Conn().Subscribe(CallSubjectPrefix+">", func(*nats.Msg) { sent.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Unsubscribe()
	server.link.Conn().Flush()

	req := host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{"n":1}`)}
	res, err := caller.node.Call(ctx, req)
	pa := host.PendingApprovalOf(err)
	if pa == nil || res == nil || res.Pending == nil || res.Pending.ID != pa.ID {
		t.Fatalf("routed call: %+v, %v; want a pending approval", res, err)
	}
	server.link.Conn().Flush()
	if sent.Load() != 0 {
		t.Fatalf("a call waiting for approval crossed NATS")
	}
	if l, err := caller.node.Approvals(ctx, host.ApprovalsRequest{State: host.ApprovalPending}); err != nil || l.Count != 1 || l.Approvals[0].ID != pa.ID {
		t.Fatalf("caller's approvals: %+v, %v", l, err)
	}
	if _, err := caller.node.DecideApproval(ctx, host.DecideRequest{ID: pa.ID, Approve: true}); err != nil {
		t.Fatal(err)
	}
	req.ApprovalID = pa.ID
	out, err := caller.node.Call(ctx, req)
	server.link.Conn().Flush()
	if err != nil || !strings.Contains(string(out.Output), `"input":{"n":1}`) {
		t.Fatalf("approved routed call: %+v, %v", out, err)
	}
	if sent.Load() == 0 {
		t.Fatalf("the approved call did not cross NATS: it ran on the caller")
	}
	if _, err := caller.node.Call(ctx, req); !errors.Is(err, host.ErrApprovalUsed) {
		t.Fatalf("second use: %v (code %s), want approval_used", err, errcode.Of(err))
	}
	if l, err := server.node.Approvals(ctx, host.ApprovalsRequest{}); err != nil || l.Count != 0 {
		t.Fatalf("the serving node keeps approvals: %+v, %v", l, err)
	}
	// The serving node's own callers still need approval there.
	if _, err := server.node.Call(ctx, host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{}`)}); !errors.Is(err, host.ErrApprovalPending) {
		t.Fatalf("a call entering the serving node: %v, want approval_pending", err)
	}
}

// approvalArtifact is acme.appr: routeArtifact's shape, its one tool
// requiring approval, running the echo module.
func approvalArtifact(t *testing.T) []byte {
	t.Helper()
	return routeArtifactWith(t, "acme.appr", "echo", `{ type = "object" }`, "", "\n[entrypoints.tools.risk]\nrequires_approval = true\n")
}
