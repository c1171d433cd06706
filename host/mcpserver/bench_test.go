package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
)

// The overhead of MCP over a direct host.Host.Call, on the echo tool of
// the probe skill (a warm sidecar; the same input each call). Run them side
// by side:
//
//	go test ./host/mcpserver -run '^$' -bench 'HostCall|MCPCall' -count 3

func BenchmarkHostCall(b *testing.B) {
	h := openHost(b)
	h.install(b, probeArtifact(b, "test.mcpprobe", nil))
	ctx := context.Background()
	req := host.CallRequest{SkillID: "test.mcpprobe", ToolID: "test.echo", Input: json.RawMessage(`{"text":"hi"}`)}
	if _, err := h.Call(ctx, req); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Call(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMCPCall(b *testing.B) {
	h := openHost(b)
	h.install(b, probeArtifact(b, "test.mcpprobe", nil))
	s := newServer(b, h, "")
	run := func(b *testing.B, cs *mcp.ClientSession) {
		ctx := context.Background()
		p := &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"text": "hi"}}
		if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := cs.CallTool(ctx, p)
			if err != nil || res.IsError {
				b.Fatalf("%v %v", err, res)
			}
		}
	}
	b.Run("inmemory", func(b *testing.B) { run(b, connect(b, s, nil)) })
	b.Run("http", func(b *testing.B) {
		ts := httptest.NewServer(s.Handler())
		b.Cleanup(ts.Close)
		tr := &http.Transport{}
		b.Cleanup(tr.CloseIdleConnections)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		run(b, cs)
	})
}
