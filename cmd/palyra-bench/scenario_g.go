package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/supervisor"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

// scenarioG: the trivial WAT tool through the palyra-host daemon's HTTP
// JSON API and its gRPC API (token auth, request log, metrics, loopback
// TCP) against host.Call on the daemon's own host: the same sidecar, so
// the ratio is the API's overhead.
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

	lib := &contender{name: "host.Call on the daemon's host (library)", call: hostCall(d.Host(), "bench.trivial", "bench.trivial", echoInput, trivialOutput)}
	ch := &contender{name: "HTTP JSON API POST …/call (keep-alive)", call: httpCall}
	cg := &contender{name: "gRPC CallTool (same port, h2c)", call: grpcCall}
	if err := interleave(ctx, e.opts.n(20, 200), e.opts.n(300, 3000), ch, cg, lib); err != nil {
		return nil, err
	}
	l := lib.timing(time.Microsecond)
	return []report.Row{
		compare("G", "daemon HTTP API call vs the library's host.Call", ch.timing(time.Microsecond), l, nil, "same sidecar; the difference is auth, routing, JSON, logs, metrics and loopback HTTP/1.1"),
		compare("G", "daemon gRPC call vs the library's host.Call", cg.timing(time.Microsecond), l, nil, "same sidecar; gRPC over h2c on the same port"),
	}, nil
}
