package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/mcpserver"
	"github.com/palyra-go/palyra/internal/mcptest"
	"github.com/palyra-go/palyra/internal/testskill"
)

// mcpProbeDir holds the MCP tests' skill and profile (host/mcpserver).
var mcpProbeDir = filepath.Join("..", "mcpserver", "testdata", "mcpprobe")

// mcpProbeArtifact is the mcpprobe skill under skill id id.
func mcpProbeArtifact(t testing.TB, id string) []byte {
	t.Helper()
	m := strings.Replace(string(readFixture(t, filepath.Join(mcpProbeDir, "skill.toml"))), `skill_id = "test.mcpprobe"`, fmt.Sprintf("skill_id = %q", id), 1)
	return testskill.Build(t, m, readFixture(t, filepath.Join(mcpProbeDir, "mcpprobe.wasm")), publisherKey)
}

// mcpClient connects an MCP client with opts to the daemon's /mcp, with
// the token; closed when the test ends.
func (p *proc) mcpClient(opts *mcp.ClientOptions) *mcp.ClientSession {
	p.t.Helper()
	tr := &http.Transport{}
	p.t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: mcptest.Bearer{Token: p.token, Next: tr}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, opts).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: p.url + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		p.t.Fatalf("connect to /mcp: %v", err)
	}
	p.t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// TestMCPHTTP runs the daemon's /mcp with the SDK's streamable HTTP client:
// the token is required; list, echo, a failing tool, an A2UI document kept
// for submits, approval by elicitation (accepted, declined, refused without
// elicitation), progress and cancellation of a long call, list_changed
// after a quarantine; and the sessions end with the daemon.
func TestMCPHTTP(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "", "--policy", filepath.Join(mcpProbeDir, "policy.toml"))
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", mcpProbeArtifact(t, "test.mcpprobe"), nil)
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", mcpProbeArtifact(t, "test.other"), nil)

	// No token, a wrong token: 401, as every route.
	initBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	for name, hdr := range map[string]string{"no token": "", "wrong token": "Bearer palyra_wrong_wrong_wrong_wrong_wrong_wrong_wr"} {
		req, _ := http.NewRequest(http.MethodPost, p.url+"/mcp", bytes.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if hdr != "" {
			req.Header.Set("Authorization", hdr)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || errCode(t, b.Bytes()) != "unauthorized" {
			t.Errorf("%s: HTTP %d %s", name, resp.StatusCode, b.Bytes())
		}
	}

	rec := mcptest.NewRecorder()
	cs := p.mcpClient(rec.Options())
	ctx := context.Background()
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range lr.Tools {
		tools[tl.Name] = tl
	}
	if len(tools) != 6 || tools["test_echo"] == nil || tools["test_echo"].Meta[mcpserver.MetaSkillID] != "test.mcpprobe" {
		t.Fatalf("tools: %v", lr.Tools)
	}
	if in, _ := json.Marshal(tools["test_echo"].InputSchema); string(in) != `{"properties":{"text":{"type":"string"}},"type":"object"}` {
		t.Errorf("inputSchema %s", in)
	}
	if a := tools["test_guarded"].Annotations; a == nil || a.ReadOnlyHint || !*a.DestructiveHint {
		t.Errorf("test_guarded annotations %+v", a)
	}

	res := mcpCall(t, cs, "test_echo", map[string]any{"text": "hi"})
	if sc, _ := json.Marshal(res.StructuredContent); res.IsError || string(sc) != `{"text":"hi"}` {
		t.Fatalf("echo: %s %v", sc, res.Content)
	}
	if code := mcptest.ErrorCode(t, mcpCall(t, cs, "test_echo", map[string]any{"text": "fail!"})); code != "tool_error" {
		t.Errorf("fail!: code %q", code)
	}
	// An A2UI document: the embedded resource names the document the
	// daemon keeps for form submits.
	doc := map[string]any{"v": 1, "surface": "board", "components": []any{map[string]any{"id": "t", "type": "text", "props": map[string]any{"value": "x"}}}}
	res = mcpCall(t, cs, "test_echo", doc)
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("a2ui: %v", res.Content)
	}
	if er, ok := res.Content[1].(*mcp.EmbeddedResource); !ok || er.Resource.MIMEType != mcpserver.A2UIMIMEType || er.Resource.URI != "palyra-a2ui://test.mcpprobe/board" || er.Resource.Meta[mcpserver.MetaDocumentID] == "" {
		t.Errorf("a2ui resource: %+v", res.Content[1])
	}

	// Approval by elicitation: accepted, then declined.
	if res := mcpCall(t, cs, "test_guarded", map[string]any{"text": "ok"}); res.IsError {
		t.Errorf("approved: %v", res.Content)
	}
	rec.SetApprove(false)
	if code := mcptest.ErrorCode(t, mcpCall(t, cs, "test_guarded", map[string]any{"text": "no"})); code != "approval_declined" {
		t.Errorf("declined: code %q", code)
	}
	if asked := rec.Asked(); len(asked) != 2 || !strings.Contains(asked[0], "test.mcpprobe") || !strings.Contains(asked[0], `{"text":"ok"}`) {
		t.Errorf("approval requests %q", asked)
	}
	// A session without elicitation is refused.
	plain := p.mcpClient(nil)
	if code := mcptest.ErrorCode(t, mcpCall(t, plain, "test_guarded", map[string]any{})); code != "approval_required" {
		t.Errorf("without elicitation: code %q", code)
	}

	// A long call: progress, then a cancel that ends it in the sidecar.
	mcptest.CancelAfterProgress(t, cs, rec.Progress, "test_echo", map[string]any{"text": "spin!"}, "h1")
	// The sidecar stopped the guest: nothing in flight, the same sidecar
	// (no crash, no kill) answers the next call.
	type sidecar struct {
		SkillID  string `json:"skill_id"`
		PID      int    `json:"pid"`
		InFlight int    `json:"in_flight"`
		Crashes  int    `json:"crashes"`
	}
	var sc struct {
		Sidecars []sidecar `json:"sidecars"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		p.must(http.StatusOK, http.MethodGet, "/v1/sidecars", nil, &sc)
		i := slices.IndexFunc(sc.Sidecars, func(s sidecar) bool { return s.SkillID == "test.mcpprobe" })
		if i >= 0 && sc.Sidecars[i].InFlight == 0 {
			if sc.Sidecars[i].Crashes != 0 || sc.Sidecars[i].PID == 0 {
				t.Errorf("sidecar after the cancel: %+v", sc.Sidecars[i])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled call is still in flight: %+v", sc)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res := mcpCall(t, cs, "test_echo", map[string]any{"text": "after"}); res.IsError {
		t.Fatalf("call after the cancel: %v", res.Content)
	}

	// Quarantine test.other through the API: list_changed, its tools gone.
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.other/quarantine", map[string]any{"reason": "mcp test"}, nil)
	for {
		select {
		case <-rec.Changed:
		case <-time.After(30 * time.Second):
			t.Fatal("no list_changed after the quarantine")
		}
		lr, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(lr.Tools) == 3 && !slices.ContainsFunc(lr.Tools, func(tl *mcp.Tool) bool { return tl.Meta[mcpserver.MetaSkillID] == "test.other" }) {
			break
		}
	}

	// Shutdown with the sessions open (their SSE streams hanging): they
	// end with the daemon, without waiting for the drain deadline.
	p.stop()
	if strings.Contains(p.err.String(), "drain deadline passed") {
		t.Errorf("the MCP sessions held the shutdown until the drain deadline:\n%s", p.err)
	}
}

// TestMCPConfig: the [mcp] table, its default and a bad value.
func TestMCPConfig(t *testing.T) {
	cases := []struct {
		toml string
		want mcpserver.Fallback
		bad  bool
	}{
		{"", mcpserver.FallbackDeny, false},
		{"[mcp]\napproval_without_elicitation = \"allow\"\n", mcpserver.FallbackAllow, false},
		{"[mcp]\napproval_without_elicitation = \"deny\"\n", mcpserver.FallbackDeny, false},
		{"[mcp]\napproval_without_elicitation = \"ask\"\n", "", true},
		{"[mcp]\napproval = \"allow\"\n", "", true},
	}
	for _, c := range cases {
		cfg, err := daemon.ParseConfig([]byte(c.toml))
		if c.bad {
			if !errors.Is(err, daemon.ErrInvalidConfig) {
				t.Errorf("%q: %v, want daemon_config_invalid", c.toml, err)
			}
			continue
		}
		if err != nil || cfg.MCP.ApprovalWithoutElicitation != c.want {
			t.Errorf("%q: %+v %v, want %q", c.toml, cfg, err, c.want)
		}
	}
}
