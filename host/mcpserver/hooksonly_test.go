package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
)

// withHookTool adds the tool test.hook, marked hooks_only, to the probe's
// manifest.
func withHookTool(m string) string {
	return strings.Replace(m, "[capabilities.quotas]", `[[entrypoints.tools]]
id = "test.hook"
name = "hook"
description = "Echoes the hook input; run by hooks only."
input_schema = { type = "object" }
output_schema = { type = "object" }
hooks_only = true

[capabilities.quotas]`, 1)
}

// TestHooksOnlyTool checks a tool its manifest marks hooks_only: the
// catalog marks it, MCP clients do not see it and are refused when they
// call its name, while a hook bound to it still runs it and an operator's
// direct call (the host's Call, as over HTTP or gRPC) still works.
func TestHooksOnlyTool(t *testing.T) {
	ctx := context.Background()
	h := openHost(t)
	h.install(t, probeArtifact(t, "test.hooked", withHookTool))
	s := newServer(t, h, "")
	cs := connect(t, s, nil)

	// The catalog (GET /v1/tools, the console's source) marks it.
	cat, err := h.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{}
	for _, ct := range cat.Tools {
		js, err := json.Marshal(ct)
		if err != nil {
			t.Fatal(err)
		}
		marked[ct.Tool.ID] = strings.Contains(string(js), `"hooks_only":true`)
	}
	if len(marked) != 4 || !marked["test.hook"] || marked["test.echo"] {
		t.Errorf("catalog hooks_only marks: %v", marked)
	}

	// MCP lists every tool but it.
	tools := listTools(t, cs)
	if _, ok := tools["test_hook"]; ok {
		t.Errorf("tools/list offers the hooks_only tool: %v", s.Names())
	}
	if _, ok := tools["test_echo"]; !ok || len(tools) != 3 {
		t.Errorf("tools/list = %v, want test_echo, test_guarded and test_raw", s.Names())
	}
	// A call of its name is refused, saying why, and runs nothing.
	before := h.AllStats()["test.hooked"].Calls
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_hook", Arguments: map[string]any{"hook_id": "forged"}})
	if err == nil || !strings.Contains(err.Error(), "tool_hooks_only") || !strings.Contains(err.Error(), "test.hook") {
		t.Errorf("MCP call of the hooks_only tool: %v", err)
	}
	if after := h.AllStats()["test.hooked"].Calls; after != before {
		t.Errorf("the refused call ran: %d calls, %d before", after, before)
	}
	// A name nothing has is still unknown_tool.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_nothing"}); err == nil || !strings.Contains(err.Error(), "unknown_tool") {
		t.Errorf("unknown name: %v", err)
	}

	// A hook bound to it runs it.
	if _, err := h.BindHook(ctx, host.HookBinding{HookID: "probe.on-enabled", Event: "skill:enabled", PluginID: "test.hooked", ToolID: "test.hook", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	fired, err := h.FireHooks(ctx, host.FireRequest{Event: "skill:enabled", Payload: json.RawMessage(`{"skill_id":"acme.x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(fired.Outcomes) != 1 || fired.Outcomes[0].Err != "" || !strings.Contains(string(fired.Outcomes[0].Output), `"hook_id":"probe.on-enabled"`) {
		t.Errorf("fired hook: %+v", fired)
	}
	// An operator may call it directly.
	res, err := h.Call(ctx, host.CallRequest{SkillID: "test.hooked", ToolID: "test.hook", Input: json.RawMessage(`{"text":"operator"}`)})
	if err != nil || !strings.Contains(string(res.Output), "operator") {
		t.Errorf("direct call: %v %+v", err, res)
	}
}
