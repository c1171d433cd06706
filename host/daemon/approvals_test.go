package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/internal/testskill"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

// approvalArtifact is skill id whose tool id+".t" requires approval,
// running the WAT echo (its output is its whole input document).
func approvalArtifact(t *testing.T, id string) []byte {
	t.Helper()
	m := strings.Replace(testskill.OneToolManifest(id, "1.0.0", ""), "requires_approval = false", "requires_approval = true", 1)
	return testskill.Build(t, m, readFixture(t, filepath.Join("..", "..", "testdata", "wasm", "echo.wasm")), publisherKey)
}

// pendingBody is the 202 answer of a call waiting for approval.
type pendingBody struct {
	host.CallResult
	Code        string `json:"code"`
	ApprovalURL string `json:"approval_url"`
}

// TestApprovalsAPI: a call of a tool that needs approval is a 202 with the
// approval over HTTP, a pending result over gRPC and the Go client; it runs
// once approved, with the same input only.
func TestApprovalsAPI(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "[approvals]\nttl = \"10m\"\n")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", approvalArtifact(t, "acme.appr"), nil)
	const callPath = "/v1/skills/acme.appr/tools/acme.appr.t/call"
	input := json.RawMessage(`{"n":1}`)

	// HTTP: 202 with the approval and its URL.
	st, data := p.do(http.MethodPost, callPath, map[string]any{"input": input}, nil)
	var pb pendingBody
	if st != http.StatusAccepted || json.Unmarshal(data, &pb) != nil || pb.Code != "approval_pending" || pb.Pending == nil ||
		pb.ApprovalURL != "/v1/approvals/"+pb.Pending.ID || pb.Pending.Reasons[0].Detail != "requires_approval" {
		t.Fatalf("call: HTTP %d %s", st, data)
	}
	if exp := pb.Pending.ExpiresAt.Sub(time.Now()); exp < 9*time.Minute || exp > 11*time.Minute {
		t.Errorf("expires_at %s is not the configured ttl from now", pb.Pending.ExpiresAt)
	}
	id := pb.Pending.ID
	var list host.ApprovalList
	p.must(http.StatusOK, http.MethodGet, "/v1/approvals?state=pending", nil, &list)
	if list.Count != 1 || list.Approvals[0].ID != id || list.Approvals[0].RequestedBy != "user:tester" || string(list.Approvals[0].Input) != `{"n":1}` {
		t.Fatalf("pending approvals: %+v", list)
	}
	st, data = p.do(http.MethodPost, "/v1/approvals/"+id+"/deny", map[string]any{}, nil)
	if st != http.StatusBadRequest || errCode(t, data) != "bad_request" {
		t.Fatalf("deny without reason: HTTP %d %s", st, data)
	}
	var a host.ApprovalInfo
	p.must(http.StatusOK, http.MethodPost, "/v1/approvals/"+id+"/approve", map[string]any{"reason": "ok"}, &a)
	if a.State != "approved" || a.DecidedBy != "user:tester" {
		t.Fatalf("approve: %+v", a)
	}
	st, data = p.do(http.MethodPost, "/v1/approvals/"+id+"/approve", nil, nil)
	if st != http.StatusConflict || errCode(t, data) != "approval_already_decided" {
		t.Fatalf("approve twice: HTTP %d %s", st, data)
	}
	st, data = p.do(http.MethodPost, callPath, map[string]any{"input": json.RawMessage(`{"n":2}`), "approval_id": id}, nil)
	if st != http.StatusConflict || errCode(t, data) != "approval_input_mismatch" {
		t.Fatalf("changed input: HTTP %d %s", st, data)
	}
	var res host.CallResult
	p.must(http.StatusOK, http.MethodPost, callPath, map[string]any{"input": json.RawMessage(`{ "n" : 1 }`), "approval_id": id}, &res)
	if !strings.Contains(string(res.Output), `"input":{"n":1}`) {
		t.Fatalf("approved call output: %s", res.Output)
	}
	st, data = p.do(http.MethodPost, callPath, map[string]any{"input": input, "approval_id": id}, nil)
	if st != http.StatusConflict || errCode(t, data) != "approval_used" {
		t.Fatalf("second use: HTTP %d %s", st, data)
	}
	st, data = p.do(http.MethodGet, "/v1/approvals/apr_unknown", nil, nil)
	if st != http.StatusNotFound || errCode(t, data) != "approval_not_found" {
		t.Fatalf("unknown approval: HTTP %d %s", st, data)
	}

	// The Go client: a typed pending result, then deny.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.New(p.url, p.token)
	if err != nil {
		t.Fatal(err)
	}
	cctx := host.WithPrincipal(ctx, "user:go")
	out, err := c.Call(cctx, host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{"n":3}`)})
	pa := host.PendingApprovalOf(err)
	if !errors.Is(err, host.ErrApprovalPending) || pa == nil || out == nil || out.Pending == nil || out.Pending.ID != pa.ID {
		t.Fatalf("client call: %+v, %v", out, err)
	}
	if _, err := c.DecideApproval(cctx, host.DecideRequest{ID: pa.ID, Reason: "not this one"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(cctx, host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{"n":3}`), ApprovalID: pa.ID})
	if !errors.Is(err, host.ErrApprovalDenied) || !strings.Contains(err.Error(), "not this one") {
		t.Fatalf("denied call through the client: %v", err)
	}
	shown, err := c.Approval(cctx, pa.ID)
	if err != nil || shown.State != "denied" || shown.Reason != "not this one" {
		t.Fatalf("client show: %+v, %v", shown, err)
	}
	st, data = p.do(http.MethodPost, callPath, map[string]any{"input": json.RawMessage(`{"n":3}`), "approval_id": pa.ID}, nil)
	if st != http.StatusForbidden || errCode(t, data) != "approval_denied" {
		t.Fatalf("denied call over HTTP: %d %s", st, data)
	}

	// gRPC: a typed pending field, then the approved call.
	g := dialGRPC(t, p)
	gctx := authed(ctx, p.token)
	r, err := g.CallTool(gctx, &hostv1.CallToolRequest{SkillId: "acme.appr", ToolId: "acme.appr.t", InputJson: []byte(`{"n":4}`)})
	if err != nil || r.GetPending() == nil || r.GetPending().GetId() == "" || r.GetOutputJson() != nil || r.GetPending().GetReasons()[0].GetKind() != "manifest" {
		t.Fatalf("grpc call: %v, %v", r, err)
	}
	gid := r.GetPending().GetId()
	la, err := g.ListApprovals(gctx, &hostv1.ListApprovalsRequest{State: "pending"})
	if err != nil || len(la.GetApprovals()) != 1 || la.GetApprovals()[0].GetId() != gid {
		t.Fatalf("grpc list: %v, %v", la, err)
	}
	if _, err := g.DecideApproval(gctx, &hostv1.DecideApprovalRequest{Id: gid, Approve: true}); err != nil {
		t.Fatal(err)
	}
	r, err = g.CallTool(gctx, &hostv1.CallToolRequest{SkillId: "acme.appr", ToolId: "acme.appr.t", InputJson: []byte(`{"n":4}`), ApprovalId: gid})
	if err != nil || r.GetPending() != nil || !strings.Contains(string(r.GetOutputJson()), `"input":{"n":4}`) {
		t.Fatalf("grpc approved call: %v, %v", r, err)
	}
	_, err = g.CallTool(gctx, &hostv1.CallToolRequest{SkillId: "acme.appr", ToolId: "acme.appr.t", InputJson: []byte(`{"n":4}`), ApprovalId: gid})
	if grpcErrCode(err) != "approval_used" {
		t.Fatalf("grpc second use: %v", err)
	}
}
