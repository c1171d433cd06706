package mcpserver_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/mcpserver"
)

// echoService is a host.Service whose catalog is fixed and whose calls
// echo their input, holding those of a tool that needs approval as a host
// does. The server uses only Tools, Call and DecideApproval; a real host
// (*host.Host, or the daemon's client) implements the rest.
type echoService struct {
	host.Service
	tools []host.CatalogTool
}

func (s echoService) Tools(context.Context) (*host.ToolCatalog, error) {
	return &host.ToolCatalog{Generation: "1", Tools: s.tools}, nil
}

func (s echoService) Call(_ context.Context, req host.CallRequest) (*host.CallResult, error) {
	for _, t := range s.tools {
		if t.SkillID == req.SkillID && t.Tool.ID == req.ToolID && t.Tool.Risk.RequiresApproval && req.ApprovalID == "" {
			pa := &host.PendingApproval{ID: "apr_example", SkillID: req.SkillID, Version: t.Version, ToolID: req.ToolID,
				Reasons: []host.ApprovalReason{{Kind: host.ReasonManifest, Detail: "requires_approval"}}}
			return &host.CallResult{SkillID: req.SkillID, Version: t.Version, ToolID: req.ToolID, Pending: pa}, &host.PendingError{Approval: pa}
		}
	}
	return &host.CallResult{SkillID: req.SkillID, Version: "1.0.0", ToolID: req.ToolID, Output: req.Input}, nil
}

func (s echoService) DecideApproval(_ context.Context, req host.DecideRequest) (*host.ApprovalInfo, error) {
	return &host.ApprovalInfo{}, nil
}

// A server over a service with a fixed catalog whose calls echo, and an
// MCP client talking to it in memory. With a host, Service is the
// *host.Host.
func Example() {
	ctx := context.Background()
	srv, err := mcpserver.New(mcpserver.Options{Service: echoService{tools: []host.CatalogTool{
		{SkillID: "acme.echo", Version: "1.0.0", Tool: manifest.Tool{ID: "acme.echo", Name: "echo", Description: "Echoes.", InputSchema: map[string]any{"type": "object"}}},
		{SkillID: "acme.other", Version: "2.0.0", Tool: manifest.Tool{ID: "acme.echo", Name: "echo", Description: "Echoes too.", Risk: manifest.Risk{RequiresApproval: true}}},
	}}})
	if err != nil {
		panic(err)
	}
	defer srv.Close(ctx)
	if _, err := srv.Sync(ctx, true); err != nil {
		panic(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		panic(err)
	}
	for _, t := range tools.Tools {
		fmt.Println(t.Name, t.Meta[mcpserver.MetaSkillID], t.Meta[mcpserver.MetaToolID])
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "acme_echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// The second skill's tool needs approval; this client cannot be asked.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.Tools[1].Name})
	if err != nil {
		panic(err)
	}
	e, _ := mcpserver.ErrorOf(res)
	fmt.Println(res.IsError, e.Code)
	// Output:
	// acme_echo acme.echo acme.echo
	// acme_echo_6bae6522 acme.other acme.echo
	// {"text":"hi"}
	// true approval_required
}
