package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/mcpserver"
)

// staticCatalog is a Catalog of fixed tools (a host's is HostCatalog).
type staticCatalog []mcpserver.Tool

func (c staticCatalog) Tools(context.Context) ([]mcpserver.Tool, error) { return c, nil }
func (c staticCatalog) Generation(context.Context) (string, error)      { return "1", nil }

// A server over a fixed catalog and a call function that echoes, and an
// MCP client talking to it in memory. With a host, Catalog and Call are
// HostCatalog(h) and HostCall(h).
func Example() {
	ctx := context.Background()
	echo := func(_ context.Context, skillID, toolID string, input json.RawMessage) (*mcpserver.Output, error) {
		return &mcpserver.Output{Output: input, SkillID: skillID, Version: "1.0.0"}, nil
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Catalog: staticCatalog{
			{SkillID: "acme.echo", Version: "1.0.0", Tool: manifest.Tool{ID: "acme.echo", Name: "echo", Description: "Echoes.", InputSchema: map[string]any{"type": "object"}}},
			{SkillID: "acme.other", Version: "2.0.0", Tool: manifest.Tool{ID: "acme.echo", Name: "echo", Description: "Echoes too.", Risk: manifest.Risk{RequiresApproval: true}}},
		},
		Call: echo,
	})
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
