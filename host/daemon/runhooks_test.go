package daemon_test

import (
	"net/http"
	"strings"
	"testing"

	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestRunHooksOverAPI: run-phase hooks bound through the API fire in
// calls made through it. An annotating hook's annotation reaches the
// caller in the call's JSON and in gRPC's CallToolResponse; a blocking
// hook makes the call fail with blocked_by_hook (HTTP 403, gRPC
// PermissionDenied) naming the hook and its reason; on_failure is
// carried both ways.
func TestRunHooksOverAPI(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "hook_timeout = \"5s\"\n")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.hookprobe"), nil)
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.target"), nil)
	// tool_error.wasm exits 1 with {"code":"bad_thing","message":"it broke"}: an annotate decision.
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", wasmArtifact(t, "test.annot", "tool_error.wasm", ""), nil)

	var b map[string]any
	p.must(http.StatusCreated, http.MethodPost, "/v1/hooks", map[string]any{"hook_id": "note", "event": "run:before_tool", "plugin_id": "test.annot", "tool_id": "test.run", "on_failure": "open"}, &b)
	if b["on_failure"] != "open" || b["enabled"] != true {
		t.Fatalf("bind: %v", b)
	}
	st, body := p.do(http.MethodPost, "/v1/hooks", map[string]any{"hook_id": "bad", "event": "run:before_tool", "plugin_id": "test.annot", "on_failure": "sometimes"}, nil)
	if st != http.StatusBadRequest || errCode(t, body) != "invalid_hook_binding" {
		t.Fatalf("bind with a bad on_failure: HTTP %d %s", st, body)
	}

	var cr struct {
		Output      map[string]any   `json:"output"`
		Annotations []map[string]any `json:"annotations"`
	}
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.target/tools/test.probe/call", map[string]any{"input": map[string]any{"hello": "world"}}, &cr)
	if cr.Output["hello"] != "world" || len(cr.Annotations) != 1 || cr.Annotations[0]["hook_id"] != "note" ||
		cr.Annotations[0]["event"] != "run:before_tool" || cr.Annotations[0]["message"] != "it broke" {
		t.Fatalf("call with an annotating hook: %+v", cr)
	}

	c := dialGRPC(t, p)
	ctx := authed(t.Context(), p.token)
	gr, err := c.CallTool(ctx, &hostv1.CallToolRequest{SkillId: "test.target", ToolId: "test.probe", InputJson: []byte(`{"n":1}`)})
	if err != nil || len(gr.GetAnnotations()) != 1 || gr.GetAnnotations()[0].GetHookId() != "note" || gr.GetAnnotations()[0].GetMessage() != "it broke" {
		t.Fatalf("gRPC call: %v, %v", gr, err)
	}
	hl, err := c.ListHooks(ctx, &hostv1.ListHooksRequest{})
	if err != nil || len(hl.GetBindings()) != 1 || hl.GetBindings()[0].GetOnFailure() != "open" {
		t.Fatalf("gRPC hooks: %v, %v", hl, err)
	}

	// The hook probe blocks when what it is given contains exit:30: here
	// the call's input, which a before_tool hook sees.
	p.must(http.StatusCreated, http.MethodPost, "/v1/hooks", map[string]any{"hook_id": "gate", "event": "run:before_tool", "plugin_id": "test.hookprobe", "tool_id": "test.probe"}, nil)
	st, body = p.do(http.MethodPost, "/v1/skills/test.target/tools/test.probe/call", map[string]any{"input": map[string]any{"hello": "exit:30"}}, nil)
	if st != http.StatusForbidden || errCode(t, body) != "blocked_by_hook" || !strings.Contains(string(body), "hook gate at run:before_tool") {
		t.Fatalf("blocked call: HTTP %d %s", st, body)
	}
	_, err = c.CallTool(ctx, &hostv1.CallToolRequest{SkillId: "test.target", ToolId: "test.probe", InputJson: []byte(`{"hello":"exit:30"}`)})
	if status.Code(err) != codes.PermissionDenied || grpcErrCode(err) != "blocked_by_hook" {
		t.Fatalf("gRPC blocked call: %v", err)
	}
}
