package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/mcpserver"
)

// The daemon serves the skills' tools over MCP's streamable HTTP transport
// at /mcp, behind the same bearer token as every route (host/mcpserver
// documents the mapping). The MCP server works on the daemon's Service, as
// the HTTP and gRPC APIs do: its tools/list is the Service's tool catalog
// and its tools/call is the Service's Call (the gates, A2UI validation, and
// a document result kept for form submits: its id is in the embedded
// resource's _meta, palyra/a2ui_document_id). The tool list follows the
// Service's event stream (crash-loop marks included: they are status
// changes), and the catalog's generation is polled every 30 s besides, as
// a safety net. Shutdown ends every MCP session with the other requests:
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
		// The host's journal follower reads the journal every 500 ms
		// (changes by other processes included); startMCP relays each event
		// of the Service's stream to mcpWake, which wakes the server: its
		// own poll is only a safety net.
		Service: d.svc, Wake: d.mcpWake, PollInterval: mcpSafetyPoll,
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

// startMCP relays the Service's events to the MCP server's wake, syncs the
// tool list, follows the catalog until ctx ends, and closes the MCP server
// when shutdown starts (sessions end; in-flight calls get until ctx ends,
// which Serve does after the drain).
func (d *Daemon) startMCP(ctx context.Context) {
	d.loops.Add(3)
	go func() {
		defer d.loops.Done()
		err := d.svc.Events(ctx, host.EventsRequest{After: -1, Follow: true}, func(ev host.Event) error {
			d.mcpWake.Publish(ev)
			return nil
		})
		if err != nil && ctx.Err() == nil {
			d.log.Error("following events for MCP", "error", err)
		}
	}()
	// The first list is there before the port serves.
	if _, err := d.mcp.Sync(ctx, true); err != nil {
		d.log.Error("listing the MCP tools", "error", err)
	}
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
