package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/palyra-go/palyra/host/mcpserver"
)

// The daemon serves the skills' tools over MCP's streamable HTTP transport
// at /mcp, behind the same bearer token as every route (host/mcpserver
// documents the mapping). Its tools/call goes through runTool, as the
// API's call does: host.Host.Call's gates, then A2UI validation, and a
// document result is kept for form submits (its id is in the embedded
// resource's _meta, palyra/a2ui_document_id). The tool list follows the
// journal as the follower publishes it (crash-loop marks included: they
// are status changes), and the catalog's generation is polled every 30 s
// besides, as a safety net. Shutdown ends every MCP session with the other requests:
// in-flight calls may finish within shutdown_timeout, then are cancelled.

// mcpSafetyPoll is how often the daemon's MCP server checks the catalog
// without a wake.
const mcpSafetyPoll = 30 * time.Second

// mcpHandler serves /mcp, bodies capped at max_request_bytes.
type mcpHandler struct {
	h     http.Handler
	limit int64
}

func (m mcpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, m.limit)
	}
	m.h.ServeHTTP(w, r)
}

// newMCP makes the daemon's MCP server (Open); startMCP runs it (Serve).
func (d *Daemon) newMCP() error {
	srv, err := mcpserver.New(mcpserver.Options{
		// The journal follower already reads the journal every 500 ms
		// (changes by other processes included) and publishes each event on
		// d.stream, which wakes the server: its own poll is only a safety
		// net, not a second reader of the journal at the same pace.
		Catalog: mcpserver.HostCatalog(d.host), Call: d.mcpCall, Wake: d.stream, PollInterval: mcpSafetyPoll,
		ApprovalWithoutElicitation: d.cfg.MCP.ApprovalWithoutElicitation, Logger: d.log,
	})
	if err != nil {
		return err
	}
	d.mcp = srv
	d.mcpHTTP = mcpHandler{h: srv.Handler(), limit: d.cfg.MaxRequestBytes}
	return nil
}

// httpMCP is the /mcp route.
func (d *Daemon) httpMCP(w http.ResponseWriter, r *http.Request) error {
	d.mcpHTTP.ServeHTTP(w, r)
	return nil
}

// startMCP syncs the tool list, follows the catalog until ctx ends, and
// closes the MCP server when shutdown starts (sessions end; in-flight calls
// get until ctx ends, which Serve does after the drain).
func (d *Daemon) startMCP(ctx context.Context) {
	// The first list is there before the port serves.
	if _, err := d.mcp.Sync(ctx, true); err != nil {
		d.log.Error("listing the MCP tools", "error", err)
	}
	d.loops.Add(2)
	go func() { defer d.loops.Done(); d.mcp.Watch(ctx) }()
	go func() {
		defer d.loops.Done()
		select {
		case <-d.stopping:
		case <-ctx.Done():
		}
		d.mcp.Close(ctx)
	}()
}

// mcpCall is the MCP server's CallFunc: the API's call path.
func (d *Daemon) mcpCall(ctx context.Context, skillID, toolID string, input json.RawMessage) (*mcpserver.Output, error) {
	res, err := d.callTool(ctx, skillID, toolID, input, 0)
	if err != nil {
		return d.mcpOutput(callResultOf(err)), err
	}
	return d.mcpOutput(res), nil
}

func (d *Daemon) mcpOutput(r *CallResponse) *mcpserver.Output {
	if r == nil {
		return nil
	}
	out := &mcpserver.Output{Output: r.Output, SkillID: r.SkillID, Version: r.Version, InvocationID: r.InvocationID, ToolError: r.ToolError}
	if r.A2UI != nil {
		out.A2UI = &mcpserver.A2UIRef{Surface: r.A2UI.Surface, DocumentID: r.A2UI.DocumentID}
		// An update's output is not the document: the kept one is.
		if kd := d.docs.get(r.A2UI.DocumentID); kd != nil && r.A2UI.Patch != nil {
			out.A2UI.Document = kd.raw
		}
	}
	return out
}
