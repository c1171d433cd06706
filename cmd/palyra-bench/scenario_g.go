package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/mcpserver"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/mcptest"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

// scenarioG: the trivial WAT tool through the palyra-host daemon's HTTP
// JSON API, its gRPC API and its MCP endpoint (token auth, request log,
// metrics, loopback TCP) against host.Call on the daemon's own host: the
// same sidecar, so the ratio is the API's overhead.
func scenarioG(ctx context.Context, e *env) ([]report.Row, error) {
	sock, err := os.MkdirTemp("", "pb")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(sock)
	d, err := daemon.Open(ctx, daemon.Options{
		StateDir: filepath.Join(e.work, "state-g"), SidecarPath: e.sidecar, Logger: hclog.NewNullLogger(),
		Config:     &daemon.Config{Listen: "127.0.0.1:0", ReauditInterval: &daemon.Duration{}},
		Supervisor: supervisor.Config{IdleTimeout: -1, SocketDir: sock},
	})
	if err != nil {
		return nil, err
	}
	ln, err := d.Listen()
	if err != nil {
		d.Close(ctx)
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- d.Serve(sctx, ln) }()
	defer func() { stop(); <-served }()

	data, err := e.trivialArtifact("trivial")
	if err != nil {
		return nil, err
	}
	if _, err := e.install(ctx, d.Host(), data); err != nil {
		return nil, err
	}
	token, err := daemon.ReadToken(daemon.TokenPath(d.StateDir()))
	if err != nil {
		return nil, err
	}
	url := d.URL(ln)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	body, _ := json.Marshal(map[string]json.RawMessage{"input": echoInput})
	httpCall := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/skills/bench.trivial/tools/bench.trivial/call", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var out struct {
			Output json.RawMessage `json:"output"`
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || string(out.Output) != trivialOutput {
			return fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
		}
		return nil
	}
	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	gc := hostv1.NewHostServiceClient(conn)
	grpcCall := func(ctx context.Context) error {
		r, err := gc.CallTool(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token),
			&hostv1.CallToolRequest{SkillId: "bench.trivial", ToolId: "bench.trivial", InputJson: echoInput})
		if err != nil {
			return err
		}
		if string(r.GetOutputJson()) != trivialOutput {
			return fmt.Errorf("output %s", r.GetOutputJson())
		}
		return nil
	}

	// The floor under any HTTP API: a bare net/http server on loopback
	// whose handler decodes the same body, calls host.Call and encodes the
	// result, with no auth, log, metrics or routing.
	bareURL, closeBare, err := bareHTTP(d.Host())
	if err != nil {
		return nil, err
	}
	defer closeBare()
	bareCall := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, bareURL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		var out struct {
			Output json.RawMessage `json:"output"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || string(out.Output) != trivialOutput {
			return fmt.Errorf("bare HTTP %d: %s", resp.StatusCode, b)
		}
		return nil
	}

	mcpCall, closeMCP, err := mcpCaller(ctx, url, token)
	if err != nil {
		return nil, err
	}
	defer closeMCP()
	memCall, closeMem, err := mcpInMemoryCaller(ctx, d.Host())
	if err != nil {
		return nil, err
	}
	defer closeMem()

	lib := &contender{name: "host.Call on the daemon's host (library)", call: hostCall(d.Host(), "bench.trivial", "bench.trivial", echoInput, trivialOutput)}
	ch := &contender{name: "HTTP JSON API POST …/call (keep-alive)", call: httpCall}
	cg := &contender{name: "gRPC CallTool (same port, h2c)", call: grpcCall}
	cm := &contender{name: "MCP tools/call (streamable HTTP, /mcp)", call: mcpCall}
	cb := &contender{name: "bare net/http handler calling host.Call (loopback)", call: bareCall}
	cmm := &contender{name: "MCP tools/call, the SDK's in-memory transport", call: memCall}
	if err := interleave(ctx, e.opts.n(20, 200), e.opts.n(300, 3000), ch, cg, cm, cb, cmm, lib); err != nil {
		return nil, err
	}
	l := lib.timing(time.Microsecond)
	return []report.Row{
		compare("G", "daemon HTTP API call vs the library's host.Call", ch.timing(time.Microsecond), l, ratioGoal("≤ 1.25 × host.Call", 1.25), "same sidecar; the difference is auth, routing, JSON, logs, metrics and loopback HTTP/1.1"),
		compare("G", "floor: a bare net/http handler calling host.Call vs host.Call", cb.timing(time.Microsecond), l, nil,
			"context: what loopback HTTP/1.1 and net/http cost any HTTP API here, before any work of the daemon's"),
		compare("G", "daemon HTTP API call vs the bare net/http floor", ch.timing(time.Microsecond), cb.timing(time.Microsecond), nil,
			"context: the daemon's own work per call (auth, request id, routing, strict JSON, metrics, log)"),
		compare("G", "daemon gRPC call vs the library's host.Call", cg.timing(time.Microsecond), l, nil, "same sidecar; gRPC over h2c on the same port"),
		compare("G", "daemon gRPC call vs the daemon HTTP API call", cg.timing(time.Microsecond), ch.timing(time.Microsecond), ratioGoal("no slower than HTTP (≤ 1 ×)", 1),
			"the same call through both APIs of the one daemon"),
		compare("G", "MCP tools/call over /mcp vs the library's host.Call", cm.timing(time.Microsecond), l, ratioGoal("≤ 1.5 × host.Call", 1.5), "same sidecar; the official MCP go-sdk client and server, JSON-RPC over streamable HTTP"),
		compare("G", "floor: MCP tools/call with no HTTP (in-memory transport) vs host.Call", cmm.timing(time.Microsecond), l, nil,
			"context: the MCP go-sdk's client and server and host/mcpserver, with no socket, HTTP or auth: what any MCP endpoint built on the SDK costs here"),
	}, nil
}

// mcpCaller connects an MCP client (the go-sdk's) to the daemon's /mcp and
// returns a call of bench.trivial's tool through it, and its closer.
func mcpCaller(ctx context.Context, url, token string) (func(context.Context) error, func(), error) {
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	hc := &http.Client{Transport: mcptest.Bearer{Token: token, Next: tr}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "palyra-bench", Version: "0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP connect: %w", err)
	}
	return mcpTrivialCall(ctx, cs, func() { cs.Close(); tr.CloseIdleConnections() })
}

// mcpInMemoryCaller serves h's tools with a server of the daemon's own
// MCP package (host/mcpserver) over the SDK's in-memory transport, and
// returns a call of bench.trivial's tool through it, and its closer: MCP
// with no HTTP, no auth and no socket, the SDK's JSON-RPC alone.
func mcpInMemoryCaller(ctx context.Context, h *host.Host) (func(context.Context) error, func(), error) {
	srv, err := mcpserver.New(mcpserver.Options{Service: h, Logger: hclog.NewNullLogger()})
	if err != nil {
		return nil, nil, err
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st)
	if err != nil {
		srv.Close(ctx)
		return nil, nil, fmt.Errorf("MCP in-memory server: %w", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "palyra-bench", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		srv.Close(ctx)
		return nil, nil, fmt.Errorf("MCP in-memory connect: %w", err)
	}
	return mcpTrivialCall(ctx, cs, func() { cs.Close(); srv.Close(context.Background()) })
}

// mcpTrivialCall finds bench.trivial's tool on the session cs and returns
// a checked call of it; closer ends cs (and is called here on a failure).
func mcpTrivialCall(ctx context.Context, cs *mcp.ClientSession, closer func()) (func(context.Context) error, func(), error) {
	// The MCP server learns of the install from the host's event stream,
	// a moment after it: list until the tool is there (10 s at most).
	name := ""
	for try := 0; name == "" && try < 100; try++ {
		if try > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			closer()
			return nil, nil, fmt.Errorf("MCP tools/list: %w", err)
		}
		for _, t := range tools.Tools {
			if t.Meta[mcpserver.MetaToolID] == "bench.trivial" {
				name = t.Name
			}
		}
	}
	if name == "" {
		closer()
		return nil, nil, fmt.Errorf("MCP tools/list has no bench.trivial")
	}
	var args map[string]any
	if err := json.Unmarshal(echoInput, &args); err != nil {
		closer()
		return nil, nil, err
	}
	call := func(ctx context.Context) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) == 0 {
			return fmt.Errorf("MCP call failed: %+v", res)
		}
		if txt, ok := res.Content[0].(*mcp.TextContent); !ok || txt.Text != trivialOutput {
			return fmt.Errorf("MCP output %+v", res.Content[0])
		}
		return nil
	}
	return call, closer, nil
}

// bareHTTP serves, on a loopback port, a handler that decodes
// {"input": …} like the daemon's call route, calls bench.trivial's tool
// through h and answers {"output": …}. It returns the URL and its closer.
func bareHTTP(h *host.Host) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input json.RawMessage `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res, err := h.Call(r.Context(), host.CallRequest{SkillID: "bench.trivial", ToolID: "bench.trivial", Input: req.Input})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(struct {
			Output json.RawMessage `json:"output"`
		}{res.Output})
	})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/call", func() { srv.Close(); <-done }, nil
}
