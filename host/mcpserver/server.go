package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/manifest"
)

// Defaults of Options.
const (
	// DefaultPollInterval is how often the server asks the catalog whether
	// the tools changed, besides the wakes of Options.Wake: changes made
	// by another process (the CLI on the same state directory) are seen
	// within it.
	DefaultPollInterval = 500 * time.Millisecond
	// DefaultProgressInterval is how long a call with a progress token runs
	// before its first progress notification, and the time between two.
	DefaultProgressInterval = time.Second
	// ServerName is the implementation name the server announces.
	ServerName = "palyra-host"
)

// Options configure a Server.
type Options struct {
	// Service is the host whose tools the server serves (required): its
	// Tools catalog is the list, its Call runs them. The server uses
	// nothing else of it.
	Service host.Service
	// Wake, when set, makes the server check the catalog at once after
	// every event published on it (the host's lifecycle events), besides
	// polling.
	Wake *events.Bus
	// PollInterval is how often Watch checks the catalog's generation
	// (default DefaultPollInterval).
	PollInterval time.Duration
	// ProgressInterval is the period of progress notifications (default
	// DefaultProgressInterval).
	ProgressInterval time.Duration
	// ApprovalWithoutElicitation is what to do with a call that needs
	// approval from a client without the elicitation capability (default
	// FallbackDeny).
	ApprovalWithoutElicitation Fallback
	// Logger receives the server's logs (nil discards them).
	Logger hclog.Logger
}

// Server serves the tools of a host.Service over MCP, to any number of sessions
// on any transport. It is safe for concurrent use. New starts nothing: run
// Watch (or Serve, which does) to follow the catalog, and Close to end
// every session.
type Server struct {
	opts Options
	log  hclog.Logger
	mcp  *mcp.Server

	// base is cancelled by Close (after its grace) and ends every call.
	base       context.Context
	cancelBase context.CancelFunc
	closed     atomic.Bool
	closeOnce  sync.Once

	syncMu sync.Mutex // one sync at a time
	gen    string
	synced bool

	mu     sync.Mutex
	served map[string]*served // by MCP name
	// hooksOnly are the tools of the catalog marked hooks_only (not
	// served), by the MCP name each would have: a call of one is refused
	// with ErrHooksOnly rather than as an unknown name.
	hooksOnly map[string]ToolRef
}

// served is one tool as the server serves it.
type served struct {
	tool Tool
	def  *mcp.Tool
	fp   string
}

// New returns a server for opts. It serves no tool before the first Sync
// (Watch and Serve sync first).
func New(opts Options) (*Server, error) {
	if opts.Service == nil {
		return nil, fmt.Errorf("%w: Service is required", ErrInvalidOption)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	f, err := ParseFallback(string(opts.ApprovalWithoutElicitation))
	if err != nil {
		return nil, err
	}
	opts.ApprovalWithoutElicitation = f
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	s := &Server{opts: opts, log: opts.Logger.Named("mcp"), served: map[string]*served{}}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "Palyra-Go skills", Version: manifest.RuntimeVersion}, &mcp.ServerOptions{
		Instructions: "The tools of the Palyra-Go skills that are active on this host. Each runs in a WebAssembly sandbox with the limits and capabilities its signed manifest declares.",
		// Tools with listChanged, even while none is served; no logging.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	s.mcp.AddReceivingMiddleware(s.unknownTool)
	return s, nil
}

// MCP returns the underlying SDK server (for embedding).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Names returns the served tools' names, sorted.
func (s *Server) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.served))
	for n := range s.served {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Sync brings the served tools in line with the catalog when its
// generation changed since the last Sync (or always, with force): tools
// that appeared or whose definition changed are added, tools that went are
// removed, and the SDK sends notifications/tools/list_changed to every
// session when (and only when) that changed anything. It reports whether
// it did.
func (s *Server) Sync(ctx context.Context, force bool) (bool, error) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	cat, err := s.opts.Service.Tools(ctx)
	if err != nil {
		return false, fmt.Errorf("mcpserver: listing the tools: %w", err)
	}
	gen := cat.Generation
	if s.synced && !force && gen == s.gen {
		return false, nil
	}
	var refs, hidden []ToolRef
	var usable []Tool
	for _, ct := range cat.Tools {
		t := Tool(ct)
		if t.Tool.HooksOnly {
			// Hooks run it; MCP clients must not see or call it.
			hidden = append(hidden, t.Ref())
			continue
		}
		if typ, ok := t.Tool.InputSchema["type"]; ok && typ != "object" {
			s.log.Warn("tool left out: its input_schema is not an object schema, and MCP arguments are a JSON object",
				"skill_id", t.SkillID, "skill_version", t.Version, "tool_id", t.Tool.ID, "type", fmt.Sprint(typ))
			continue
		}
		usable = append(usable, t)
		refs = append(refs, t.Ref())
	}
	names := Names(refs)
	want := make(map[string]*served, len(usable))
	for _, t := range usable {
		name := names[t.Ref()]
		def := t.MCPTool(name)
		want[name] = &served{tool: t, def: def, fp: fingerprint(def)}
	}
	hooksOnly := map[string]ToolRef{}
	for ref, name := range Names(append(slices.Clone(refs), hidden...)) {
		if slices.Contains(hidden, ref) {
			if _, ok := want[name]; !ok {
				hooksOnly[name] = ref
			}
		}
	}
	s.mu.Lock()
	prev := s.served
	s.served = want
	s.hooksOnly = hooksOnly
	s.mu.Unlock()
	var gone, added []string
	for name := range prev {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		w := want[name]
		if old := prev[name]; old != nil && old.fp == w.fp {
			continue
		}
		if err := s.addTool(w.def); err != nil {
			s.log.Error("tool left out", "tool", name, "skill_id", w.tool.SkillID, "tool_id", w.tool.Tool.ID, "error", err)
			s.mu.Lock()
			delete(s.served, name)
			s.mu.Unlock()
			if prev[name] != nil {
				s.mcp.RemoveTools(name)
				gone = append(gone, name)
			}
			continue
		}
		added = append(added, name)
	}
	s.gen, s.synced = gen, true
	if len(gone)+len(added) > 0 {
		s.log.Info("MCP tool list changed", "added_or_updated", added, "removed", gone, "tools", len(want))
	}
	return len(gone)+len(added) > 0, nil
}

// addTool adds def to the SDK server. The SDK panics on a schema it
// refuses; MCPTool's schemas pass its checks, but a panic is turned into
// an error rather than taking the host down.
func (s *Server) addTool(def *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP SDK refused the tool: %v", r)
		}
	}()
	s.mcp.AddTool(def, s.handle)
	return nil
}

// hooksOnlyTool returns the hooks_only tool that would be served under
// name, if there is one.
func (s *Server) hooksOnlyTool(name string) (ToolRef, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.hooksOnly[name]
	return ref, ok
}

// lookup returns the tool served under name, nil when none is.
func (s *Server) lookup(name string) *served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served[name]
}

// Watch syncs at once, then whenever Options.Wake publishes and every
// PollInterval, until ctx ends (then it returns nil). Sync failures are
// logged and retried at the next tick.
func (s *Server) Watch(ctx context.Context) error {
	var wake <-chan events.Event
	if s.opts.Wake != nil {
		sub := s.opts.Wake.Subscribe(ctx, 16)
		defer sub.Close()
		wake = sub.C()
	}
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		if _, err := s.Sync(ctx, false); err != nil && ctx.Err() == nil {
			s.log.Error("syncing the MCP tool list", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-wake:
			if !ok {
				wake = nil
			}
		case <-t.C:
		}
	}
}

// Connect starts a session on t (see mcp.Server.Connect); Close ends it.
func (s *Server) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return s.mcp.Connect(ctx, t, nil)
}

// Serve serves one session on t (stdio) while watching the catalog, until
// the client ends the session or ctx ends; it then closes the server,
// cancelling the calls still running. The SDK sees the end of t's input
// only once no call is in flight, so a caller that can tell earlier (the
// stdio command watches stdin for EOF) cancels ctx then. A session the
// client ended is a nil error.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	if _, err := s.Sync(ctx, true); err != nil {
		return err
	}
	ss, err := s.Connect(ctx, t)
	if err != nil {
		return err
	}
	wctx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.Watch(wctx) }()
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err = <-ended:
	case <-ctx.Done():
		s.cancelBase()
		ss.Close()
		err = <-ended
	}
	stopWatch()
	wg.Wait()
	s.Close(context.Background())
	if err != nil && (ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed)) {
		err = nil
	}
	return err
}

// Handler is the streamable HTTP transport (MCP 2025-03-26 and later) for
// this server: sessions are made on POST initialize, addressed by the
// Mcp-Session-Id header and ended by DELETE or Close; after Close, new
// sessions are refused with 400. It does no authentication: the daemon
// mounts it behind its bearer token.
func (s *Server) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		if s.closed.Load() {
			return nil
		}
		return s.mcp
	}, nil)
}

// Close refuses new sessions and ends every open one. A session's calls in
// flight may finish until ctx ends; then they are cancelled (their sidecar
// calls interrupted) and Close returns once every session is gone. Close is
// idempotent; the server serves nothing afterwards.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { s.closed.Store(true) })
	// A session the HTTP handler was making while closed flipped shows up
	// in a later pass.
	closing := map[*mcp.ServerSession]bool{}
	var wg sync.WaitGroup
	for {
		n := 0
		for ss := range s.mcp.Sessions() {
			if closing[ss] {
				continue
			}
			closing[ss] = true
			n++
			wg.Add(1)
			go func() { defer wg.Done(); ss.Close() }()
		}
		if n == 0 {
			break
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.cancelBase()
			<-done
		}
	}
	s.cancelBase()
	return nil
}
