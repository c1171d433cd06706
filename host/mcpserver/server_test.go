package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/hashicorp/go-hclog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/mcpserver"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/mcptest"
	"github.com/palyra-go/palyra/internal/proctest"
)

// TestListAndCall lists the probe's tools and calls them: echo, a tool
// error, a wrapped non-object output, an A2UI document, an unknown name.
func TestListAndCall(t *testing.T) {
	h := openHost(t)
	h.install(t, probeArtifact(t, "test.mcpprobe", nil))
	s := newServer(t, h, "")
	cs := connect(t, s, nil)

	tools := listTools(t, cs)
	if len(tools) != 3 {
		t.Fatalf("tools %v, want test_echo, test_guarded, test_raw", tools)
	}
	echo := tools["test_echo"]
	if echo == nil || echo.Title != "echo" || !strings.HasPrefix(echo.Description, "Echoes its input") {
		t.Fatalf("test_echo: %+v", echo)
	}
	if in, _ := json.Marshal(echo.InputSchema); string(in) != `{"properties":{"text":{"type":"string"}},"type":"object"}` {
		t.Errorf("test_echo inputSchema %s", in)
	}
	if out, _ := json.Marshal(echo.OutputSchema); string(out) != `{"type":"object"}` {
		t.Errorf("test_echo outputSchema %s", out)
	}
	if echo.Meta[mcpserver.MetaSkillID] != "test.mcpprobe" || echo.Meta[mcpserver.MetaToolID] != "test.echo" || echo.Meta[mcpserver.MetaVersion] != "0.1.0" {
		t.Errorf("test_echo _meta %v", echo.Meta)
	}
	if a := echo.Annotations; a == nil || !a.ReadOnlyHint || *a.DestructiveHint || *a.OpenWorldHint {
		t.Errorf("test_echo annotations %+v", a)
	}
	if a := tools["test_guarded"].Annotations; a == nil || a.ReadOnlyHint || !*a.DestructiveHint {
		t.Errorf("test_guarded annotations %+v", a)
	}
	raw := tools["test_raw"]
	if in, _ := json.Marshal(raw.InputSchema); string(in) != `{"properties":{"text":{"type":"string"}},"type":"object"}` {
		t.Errorf("test_raw inputSchema %s (want type object added)", in)
	}
	if raw.OutputSchema != nil {
		t.Errorf("test_raw outputSchema %v, want none", raw.OutputSchema)
	}

	// echo: structuredContent is the output, the text its JSON.
	res := mcptest.Call(t, cs, "test_echo", map[string]any{"text": "hi"})
	if res.IsError {
		t.Fatalf("echo: %v", res.Content)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"text":"hi"}` {
		t.Errorf("echo structuredContent %s", sc)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; txt != `{"text":"hi"}` {
		t.Errorf("echo text %q", txt)
	}
	if res.Meta[mcpserver.MetaInvocationID] == "" || res.Meta[mcpserver.MetaVersion] != "0.1.0" {
		t.Errorf("echo result _meta %v", res.Meta)
	}

	// A tool error: isError, the code in the text and in _meta.
	res = mcptest.Call(t, cs, "test_echo", map[string]any{"text": "fail!"})
	if code := mcptest.ErrorCode(t, res); code != "tool_error" {
		t.Errorf("fail!: code %q, want tool_error", code)
	}
	if e, _ := mcpserver.ErrorOf(res); e.ToolError == nil || e.ToolError.Code != "bad_thing" || e.ToolError.Message != "it broke" {
		t.Errorf("fail! error %+v lacks the tool's error", e)
	}
	// The text is the code and the readable sentence (not the host's
	// chain of wrappers); the chain is the error's detail.
	if e, _ := mcpserver.ErrorOf(res); e.Detail == "" || !strings.HasSuffix(e.Detail, e.Message) || strings.HasPrefix(e.Message, "host:") ||
		res.Content[0].(*mcp.TextContent).Text != "tool_error: "+e.Message {
		t.Errorf("fail! error %+v, text %q: want the readable message in the text and the chain as detail", e, res.Content[0].(*mcp.TextContent).Text)
	}
	// Input the input_schema refuses: the host's gate, as an isError result.
	if code := mcptest.ErrorCode(t, mcptest.Call(t, cs, "test_echo", map[string]any{"text": 7})); code != "invalid_input" {
		t.Errorf("text 7: code %q, want invalid_input", code)
	}

	// A non-object output is wrapped as {"result": ...}.
	res = mcptest.Call(t, cs, "test_raw", nil)
	if res.IsError {
		t.Fatalf("raw: %v", res.Content)
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{}` {
		t.Errorf("raw with no arguments: structuredContent %s, want {} (no arguments is {})", sc)
	}

	// An A2UI document is also an embedded resource.
	doc := map[string]any{"v": 1, "surface": "main board", "components": []any{map[string]any{"id": "t1", "type": "text", "props": map[string]any{"value": "hello"}}}}
	res = mcptest.Call(t, cs, "test_echo", doc)
	if res.IsError {
		t.Fatalf("a2ui: %v", res.Content)
	}
	if len(res.Content) != 2 {
		t.Fatalf("a2ui: %d contents, want text and resource", len(res.Content))
	}
	er, ok := res.Content[1].(*mcp.EmbeddedResource)
	if !ok || er.Resource.MIMEType != mcpserver.A2UIMIMEType || er.Resource.URI != "palyra-a2ui://test.mcpprobe/main%20board" || !strings.Contains(er.Resource.Text, `"surface":"main board"`) {
		t.Errorf("a2ui resource %+v", res.Content[1])
	}
	// The host keeps the document for form submits: its id is in the
	// resource's _meta.
	if ok && (er.Resource.Meta == nil || er.Resource.Meta[mcpserver.MetaDocumentID] == "") {
		t.Errorf("a2ui resource _meta %v lacks %s", er.Resource.Meta, mcpserver.MetaDocumentID)
	}
	// An A2UI update is applied (here to the empty document of its
	// surface): the resource is the whole document after it, the text
	// content the update as the tool returned it.
	upd := map[string]any{"a2ui_update": map[string]any{"surface": "board", "patch": map[string]any{"v": 1, "ops": []any{
		map[string]any{"op": "add", "path": "/components/-", "value": map[string]any{"id": "u1", "type": "text", "props": map[string]any{"value": "patched"}}},
	}}}}
	res = mcptest.Call(t, cs, "test_echo", upd)
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("a2ui update: %+v", res.Content)
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, `"a2ui_update"`) {
		t.Errorf("a2ui update text %q, want the update", txt)
	}
	er, ok = res.Content[1].(*mcp.EmbeddedResource)
	if !ok || er.Resource.URI != "palyra-a2ui://test.mcpprobe/board" || strings.Contains(er.Resource.Text, "a2ui_update") ||
		!strings.Contains(er.Resource.Text, `"surface":"board"`) || !strings.Contains(er.Resource.Text, `"patched"`) {
		t.Errorf("a2ui update resource %+v, want the whole patched document", res.Content[1])
	}
	// An invalid A2UI document fails the call with the validator's code.
	bad := map[string]any{"v": 1, "surface": "s", "components": []any{map[string]any{"id": "x", "type": "marquee"}}}
	if code := mcptest.ErrorCode(t, mcptest.Call(t, cs, "test_echo", bad)); !strings.HasPrefix(code, "a2ui_") {
		t.Errorf("invalid a2ui: code %q, want a2ui_*", code)
	}

	// An unknown name is a protocol error that says so.
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"})
	if err == nil || !strings.Contains(err.Error(), "unknown_tool") || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("unknown tool: %v", err)
	}
}

// TestListChanged: quarantine, disable, enable, remove and install change
// the list, each with a list_changed notification; the list follows.
func TestListChanged(t *testing.T) {
	h := openHost(t)
	h.install(t, probeArtifact(t, "test.a", nil))
	h.install(t, probeArtifact(t, "test.b", nil))
	s := newServer(t, h, "")
	changed := make(chan struct{}, 16)
	cs := connect(t, s, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	// Two skills with the same tool ids: test.a keeps the plain names.
	tools := listTools(t, cs)
	if len(tools) != 6 || tools["test_echo"].Meta[mcpserver.MetaSkillID] != "test.a" {
		t.Fatalf("tools: %v", names(tools))
	}
	var bEcho string
	for n, tl := range tools {
		if tl.Meta[mcpserver.MetaSkillID] == "test.b" && tl.Meta[mcpserver.MetaToolID] == "test.echo" {
			bEcho = n
		}
	}
	if !strings.HasPrefix(bEcho, "test_echo_") || !mcpserver.ValidName(bEcho) {
		t.Fatalf("test.b's echo is %q", bEcho)
	}
	ctx := host.WithPrincipal(context.Background(), "user:test")
	// wait waits for a list_changed after which the listed skills are
	// wantSkills (a notification of an earlier change, sent late, may come
	// first: the SDK batches them for 10 ms).
	wait := func(what string, wantSkills ...string) {
		t.Helper()
		slices.Sort(wantSkills)
		var got []string
		for {
			select {
			case <-changed:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: no tools/list_changed leading to skills %v (last listed: %v)", what, wantSkills, got)
			}
			got = nil
			for _, tl := range listTools(t, cs) {
				if id := tl.Meta[mcpserver.MetaSkillID].(string); !slices.Contains(got, id) {
					got = append(got, id)
				}
			}
			slices.Sort(got)
			if slices.Equal(got, wantSkills) {
				return
			}
		}
	}
	if _, err := h.Quarantine(ctx, host.StatusRequest{SkillID: "test.a", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	wait("quarantine a", "test.b")
	// test.b's echo now has the plain name: the set decides the names.
	if tl := listTools(t, cs)["test_echo"]; tl == nil || tl.Meta[mcpserver.MetaSkillID] != "test.b" {
		t.Errorf("after quarantine, test_echo is %v", tl)
	}
	// A call of the quarantined skill's old name is refused.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: bEcho}); err == nil {
		t.Errorf("call of a name no longer served: no error")
	}
	if _, err := h.Disable(ctx, host.StatusRequest{SkillID: "test.b", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	wait("disable b")
	if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "test.a", Override: true}); err != nil {
		t.Fatal(err)
	}
	wait("enable a", "test.a")
	if _, err := h.Remove(ctx, host.RemoveRequest{SkillID: "test.a"}); err != nil {
		t.Fatal(err)
	}
	wait("remove a")
	h.install(t, probeArtifact(t, "test.c", nil))
	wait("install c", "test.c")
	if got := s.Names(); len(got) != 3 || got[0] != "test_echo" {
		t.Errorf("Names() = %v", got)
	}
	// A sync with nothing changed sends nothing.
	if did, err := s.Sync(ctx, true); err != nil || did {
		t.Errorf("Sync with nothing changed: %t, %v", did, err)
	}
}

func names(m map[string]*mcp.Tool) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	return out
}

// TestApproval: a tool that requires approval asks by elicitation; accept,
// decline, cancel and approve=false; a client without elicitation is
// refused unless the server allows it.
func TestApproval(t *testing.T) {
	h := openHost(t)
	h.install(t, probeArtifact(t, "test.mcpprobe", nil))
	s := newServer(t, h, "")
	var mu sync.Mutex
	var asked []string
	answer := &mcp.ElicitResult{}
	cs := connect(t, s, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params.Message)
		return answer, nil
	}})
	cases := []struct {
		name   string
		answer mcp.ElicitResult
		code   string
	}{
		{"accepted", mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, ""},
		{"accepted with approve false", mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, "approval_declined"},
		{"declined", mcp.ElicitResult{Action: "decline"}, "approval_declined"},
		{"cancelled", mcp.ElicitResult{Action: "cancel"}, "approval_declined"},
	}
	for _, c := range cases {
		mu.Lock()
		*answer = c.answer
		asked = nil
		mu.Unlock()
		res := mcptest.Call(t, cs, "test_guarded", map[string]any{"text": "please"})
		if code := mcptest.ErrorCode(t, res); code != c.code {
			t.Errorf("%s: code %q, want %q (%v)", c.name, code, c.code, res.Content)
		}
		mu.Lock()
		if len(asked) != 1 || !strings.Contains(asked[0], "test.mcpprobe") || !strings.Contains(asked[0], "test.guarded") || !strings.Contains(asked[0], `{"text":"please"}`) {
			t.Errorf("%s: asked %q", c.name, asked)
		}
		mu.Unlock()
	}
	// A tool that needs no approval does not ask.
	mu.Lock()
	asked = nil
	mu.Unlock()
	if res := mcptest.Call(t, cs, "test_echo", map[string]any{}); res.IsError {
		t.Errorf("echo: %v", res.Content)
	}
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("echo asked for approval: %q", asked)
	}
	mu.Unlock()

	// No elicitation capability: refused by default.
	plain := connect(t, s, nil)
	res := mcptest.Call(t, plain, "test_guarded", map[string]any{})
	if code := mcptest.ErrorCode(t, res); code != "approval_required" || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "approval_without_elicitation") {
		t.Errorf("without elicitation: %q %v", code, res.Content)
	}
	// ... and run when the server is configured to allow it.
	allow := connect(t, newServer(t, h, mcpserver.FallbackAllow), nil)
	if res := mcptest.Call(t, allow, "test_guarded", map[string]any{}); res.IsError {
		t.Errorf("without elicitation, allow: %v", res.Content)
	}

	// Every answer is recorded on the host's approval of the call (in any
	// order: several may share a millisecond), with the principal: the approved calls ran with theirs (used), the rest
	// were denied with what the client said. Nothing is left pending.
	l, err := h.Approvals(context.Background(), host.ApprovalsRequest{SkillID: "test.mcpprobe"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range l.Approvals {
		got = append(got, string(a.State)+": "+a.Reason)
		if a.DecidedBy != host.DefaultPrincipal {
			t.Errorf("approval %s decided by %q", a.ID, a.DecidedBy)
		}
	}
	want := []string{
		"used: approved by the MCP client's user (elicitation)",
		"denied: the MCP client's user answered approve = false",
		"denied: declined by the MCP client's user",
		"denied: the MCP client's user dismissed the request (cancel)",
		"denied: the MCP client cannot be asked (no elicitation capability)",
		"used: approved by the MCP endpoint's approval_without_elicitation = allow (the client cannot be asked)",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("approvals:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProgressAndCancel: a long call sends progress notifications each
// interval; cancelling it ends it promptly, the sidecar (not killed) stops
// the guest, and the next call runs.
func TestProgressAndCancel(t *testing.T) {
	h := openHost(t)
	h.install(t, probeArtifact(t, "test.mcpprobe", nil))
	s := newServer(t, h, "")
	progress := make(chan *mcp.ProgressNotificationParams, 64)
	cs := connect(t, s, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		progress <- req.Params
	}})
	// Warm the sidecar, and learn its pid.
	if res := mcptest.Call(t, cs, "test_echo", map[string]any{}); res.IsError {
		t.Fatalf("echo: %v", res.Content)
	}
	pid := h.sidecar(t, "test.mcpprobe").PID

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		// (SetProgressToken on params without _meta sets nothing, SDK v1.4.0.)
		p := &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"text": "spin!"}, Meta: mcp.Meta{"progressToken": "tok-1"}}
		res, err := cs.CallTool(ctx, p)
		done <- outcome{res, err}
	}()
	var last float64
	for i := 0; i < 2; i++ {
		select {
		case p := <-progress:
			if p.ProgressToken != "tok-1" || p.Progress <= last || !strings.Contains(p.Message, "test_echo running") {
				t.Errorf("progress %+v after %v", p, last)
			}
			last = p.Progress
		case o := <-done:
			t.Fatalf("the spinning call ended before two progress notifications: %+v %v", o.res, o.err)
		case <-time.After(30 * time.Second):
			t.Fatal("no progress notification")
		}
	}
	cancel()
	o := <-done
	if !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled call: %+v, %v", o.res, o.err)
	}
	// The wall clock (60 s) did not end it: the cancel did.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the cancelled call returned after %v", d)
	}
	// The server side ends too: nothing stays in flight in the sidecar,
	// which was not killed for it.
	deadline := time.Now().Add(30 * time.Second)
	for st := h.sidecar(t, "test.mcpprobe"); st.InFlight != 0; st = h.sidecar(t, "test.mcpprobe") {
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled call is still in flight: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	res := mcptest.Call(t, cs, "test_echo", map[string]any{"text": "after"})
	if res.IsError {
		t.Fatalf("call after the cancel: %v", res.Content)
	}
	if st := h.sidecar(t, "test.mcpprobe"); st.PID != pid || st.Crashes != 0 {
		t.Errorf("sidecar after the cancel: pid %d (was %d), crashes %d", st.PID, pid, st.Crashes)
	}
	// A short call with a progress token sends no progress.
	p := &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": "tok-2"}}
	if _, err := cs.CallTool(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for len(progress) > 0 {
		if q := <-progress; q.ProgressToken == "tok-2" {
			t.Errorf("a short call sent progress %+v", q)
		}
	}
}

// TestCloseCancelsCalls: Close with no grace cancels a call in flight and
// refuses new sessions.
func TestCloseCancelsCalls(t *testing.T) {
	h := openHost(t)
	h.install(t, probeArtifact(t, "test.mcpprobe", nil))
	s, err := mcpserver.New(mcpserver.Options{Service: h.Host})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sync(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	progress := make(chan struct{}, 8)
	cs := connect(t, s, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		progress <- struct{}{}
	}})
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"text": "spin!"}, Meta: mcp.Meta{"progressToken": 1}}
		_, err := cs.CallTool(context.Background(), p)
		done <- err
	}()
	select {
	case <-progress:
	case <-time.After(30 * time.Second):
		t.Fatal("the spinning call sent no progress")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Error("the call in flight at Close ended without an error")
	}
	if _, err := s.Connect(context.Background(), &mcp.InMemoryTransport{}); !errors.Is(err, mcpserver.ErrClosed) {
		t.Errorf("Connect after Close: %v", err)
	}
}

// TestCrashLoopLeavesList: a skill whose sidecar keeps dying (killed from
// outside, as a crash would end it) is marked crashlooping by the host and
// its tools leave the list, with a list_changed; an operator's enable
// brings them back.
func TestCrashLoopLeavesList(t *testing.T) {
	h := openHostWith(t, supervisor.Config{CrashLoopThreshold: 2, CrashLoopWindow: time.Minute})
	h.install(t, probeArtifact(t, "test.a", nil))
	h.install(t, probeArtifact(t, "test.b", nil))
	s := newServer(t, h, "")
	changed := make(chan struct{}, 16)
	cs := connect(t, s, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	skillsListed := func() []string {
		var got []string
		for _, tl := range listTools(t, cs) {
			if id := tl.Meta[mcpserver.MetaSkillID].(string); !slices.Contains(got, id) {
				got = append(got, id)
			}
		}
		slices.Sort(got)
		return got
	}
	waitFor := func(what string, want ...string) {
		t.Helper()
		for {
			if got := skillsListed(); slices.Equal(got, want) {
				return
			}
			select {
			case <-changed:
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: no tools/list_changed leading to %v (listed: %v)", what, want, skillsListed())
			}
		}
	}
	waitFor("start", "test.a", "test.b")
	ctx := context.Background()
	for i := 0; ; i++ {
		if i == 10 {
			t.Fatalf("test.a not crashlooping after %d kills: %+v", i, h.sidecar(t, "test.a"))
		}
		_, err := h.Call(ctx, host.CallRequest{SkillID: "test.a", ToolID: "test.echo", Input: json.RawMessage(`{"text":"hi"}`)})
		if errcode.Of(err) == "crashlooping" {
			break
		}
		if pid := h.sidecar(t, "test.a").PID; pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
			proctest.WaitGone(t, []int{pid}, 10*time.Second)
		}
	}
	waitFor("crashloop", "test.b")
	if _, err := h.Enable(host.WithPrincipal(ctx, "user:test"), host.EnableRequest{SkillID: "test.a", Override: true}); err != nil {
		t.Fatal(err)
	}
	waitFor("enable", "test.a", "test.b")
	if res := mcptest.Call(t, cs, "test_echo", map[string]any{"text": "back"}); res.IsError {
		t.Fatalf("call after the enable: %+v", res.Content)
	}
}

// TestListIsCurrent: tools/list answers with the catalog as it is, not as
// the event-following Watch last saw it: a skill installed a moment before
// the list is in it. The server here runs no Watch at all.
func TestListIsCurrent(t *testing.T) {
	h := openHost(t)
	h.install(t, probeArtifact(t, "test.a", nil))
	s, err := mcpserver.New(mcpserver.Options{Service: h.Host, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("server Close: %v", err)
		}
	})
	if _, err := s.Sync(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s, nil)
	if tools := listTools(t, cs); len(tools) != 3 {
		t.Fatalf("before: tools %v", names(tools))
	}
	h.install(t, probeArtifact(t, "test.b", nil))
	tools := listTools(t, cs)
	skills := map[any]bool{}
	for _, tl := range tools {
		skills[tl.Meta[mcpserver.MetaSkillID]] = true
	}
	if len(tools) != 6 || !skills["test.b"] {
		t.Fatalf("after installing test.b: tools %v", names(tools))
	}
}
