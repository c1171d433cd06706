// Package mcptest holds what the tests of the MCP server share, whichever
// transport they drive it over: calling a tool and reading the stable
// error code out of a result, and an HTTP client that carries the daemon's
// bearer token.
package mcptest

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host/mcpserver"
)

// Call calls tool name with args and fails the test on a protocol error.
func Call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// ErrorCode is the code of an isError result ("" for a success), after
// checking the result's shape: the code in _meta (mcpserver.ErrorOf), the
// text "<code>: ...", and no structuredContent.
func ErrorCode(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		return ""
	}
	e, ok := mcpserver.ErrorOf(res)
	if !ok {
		t.Fatalf("error result without the %s meta: %+v", mcpserver.MetaError, res)
	}
	if len(res.Content) == 0 {
		t.Fatalf("error result without content: %+v", res)
	}
	if txt, isText := res.Content[0].(*mcp.TextContent); !isText || !strings.HasPrefix(txt.Text, e.Code+": ") {
		t.Fatalf("error text %v does not start with the code %q", res.Content[0], e.Code)
	}
	if res.StructuredContent != nil {
		t.Fatalf("error result with structuredContent %v", res.StructuredContent)
	}
	return e.Code
}

// Bearer is an http.RoundTripper that adds "Authorization: Bearer Token"
// to every request it passes to Next (http.DefaultTransport when nil).
type Bearer struct {
	Token string
	Next  http.RoundTripper
}

// RoundTrip sends a copy of r with the token.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	next := b.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// CancelAfterProgress calls tool with args that make it run until
// cancelled, with progress token token; it waits for two progress
// notifications on progress (numbered 1 and 2), cancels the call, and
// checks that the call ends with context.Canceled within 30 s.
func CancelAfterProgress(t testing.TB, cs *mcp.ClientSession, progress <-chan *mcp.ProgressNotificationParams, tool string, args any, token string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{"progressToken": token}})
		done <- err
	}()
	for i := 1; i <= 2; i++ {
		select {
		case p := <-progress:
			if p.ProgressToken != token || p.Progress != float64(i) {
				t.Errorf("progress %+v, want token %q and progress %d", p, token, i)
			}
		case err := <-done:
			t.Fatalf("the long call ended before it was cancelled: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("no progress notification within 30 s")
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the cancelled call took %v", d)
	}
}

// Recorder is a client's handlers that record what the server sends it:
// tools/list_changed notifications on Changed, progress notifications on
// Progress, and elicitations, answered with approve (true at first: accept
// with {"approve": true}; false: decline) and kept for Asked.
type Recorder struct {
	Changed  chan struct{}
	Progress chan *mcp.ProgressNotificationParams

	mu      sync.Mutex
	approve bool
	asked   []string
}

// NewRecorder returns a Recorder that approves.
func NewRecorder() *Recorder {
	return &Recorder{Changed: make(chan struct{}, 16), Progress: make(chan *mcp.ProgressNotificationParams, 64), approve: true}
}

// Options are the client options with r's handlers.
func (r *Recorder) Options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { r.Changed <- struct{}{} },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			r.Progress <- req.Params
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.asked = append(r.asked, req.Params.Message)
			if r.approve {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}
}

// SetApprove sets the answer to the next elicitations.
func (r *Recorder) SetApprove(approve bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.approve = approve
}

// Asked returns the messages of the elicitations so far.
func (r *Recorder) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asked)
}
