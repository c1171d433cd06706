package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host/mcpserver"
)

var recordSeeds = flag.Bool("record-seeds", false, "the tests' MCP clients write the messages they send to testdata/fuzz/FuzzServer (seeds of FuzzServer)")

// recordingTransport is t itself, or with -record-seeds t logging what the
// client writes, each message saved as a FuzzServer seed when the test ends.
func recordingTransport(tb testing.TB, t mcp.Transport) mcp.Transport {
	if !*recordSeeds {
		return t
	}
	var log bytes.Buffer
	tb.Cleanup(func() {
		dir := filepath.Join("testdata", "fuzz", "FuzzServer")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(&log)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			msg, ok := strings.CutPrefix(sc.Text(), "write: ")
			if !ok {
				continue
			}
			data := fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", msg)
			sum := sha256.Sum256(data)
			if err := os.WriteFile(filepath.Join(dir, hex.EncodeToString(sum[:8])), data, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	})
	return &mcp.LoggingTransport{Transport: t, Writer: &log}
}

// FuzzServer sends one JSON-RPC message, any, to the server over the
// SDK's in-memory transport, after a real client's initialize: the
// handling of tools/list and tools/call (names, arguments, meta, progress
// tokens) and of everything else the SDK routes to it. The seeds are the
// messages the tests' clients send (recorded by connect with
// -record-seeds). A request always gets its one answer: a result, or a
// JSON-RPC error with a standard code other than internal error; a tool
// failure is a result marked isError.
func FuzzServer(f *testing.F) {
	h := openHost(f)
	h.install(f, probeArtifact(f, "test.mcpprobe", nil))
	s := newServer(f, h, mcpserver.FallbackDeny)
	ctx := context.Background()
	initialize := []byte(`{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`)
	initialized := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if bytes.Contains(raw, []byte("spin!")) {
			return // the probe tool's documented loop (until its 60 s budget)
		}
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return // not JSON-RPC: the transport refuses it before the server
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := ct.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			conn.Close()
			ss.Wait()
		}()
		// A hang guard, not a timing assertion: a request the server never
		// answers fails the input instead of stalling the fuzzer.
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		send := func(b []byte) {
			m, err := jsonrpc.DecodeMessage(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := conn.Write(rctx, m); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
		answer := func(id jsonrpc.ID) *jsonrpc.Response {
			for {
				m, err := conn.Read(rctx)
				if err != nil {
					t.Fatalf("no answer to %q: %v", raw, err)
				}
				if r, ok := m.(*jsonrpc.Response); ok && r.ID == id {
					return r
				}
			}
		}
		send(initialize)
		if r := answer(mustID("fuzz-init")); r.Error != nil {
			t.Fatalf("initialize: %v", r.Error)
		}
		send(initialized)
		if err := conn.Write(rctx, msg); err != nil {
			return // the SDK's connection refused it
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.ID.IsValid() {
			return // a notification or a response: nothing to answer
		}
		r := answer(req.ID)
		if r.Error == nil {
			return
		}
		var we *jsonrpc.Error
		if !errors.As(r.Error, &we) {
			t.Fatalf("%q: error %v is not a JSON-RPC error", raw, r.Error)
		}
		if we.Code == jsonrpc.CodeInternalError {
			t.Fatalf("%q: internal error %d %s", raw, we.Code, we.Message)
		}
	})
}

func mustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}
