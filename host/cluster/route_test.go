package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// serveNothing restricts node 0 to a skill nobody installs: its calls go
// to the other nodes.
func serveNothing(i int, c *Config) {
	if i == 0 {
		c.Skills = []string{"acme.other"}
	}
}

func TestCallRoutedKeepsResultsAndCodes(t *testing.T) {
	ctx := context.Background()
	nodes := startRouteCluster(t, 2, serveNothing)
	caller, server := nodes[0], nodes[1]
	waitServing(t, nodes, 1, "acme.echo")
	waitServing(t, nodes, 1, "acme.toolerr")
	if got := caller.node.route.servedSkills(); len(got) != 0 {
		t.Fatalf("node 0 serves %v, want nothing", got)
	}
	// Every request on a call subject, seen by a plain (not queue)
	// subscriber: what crossed NATS.
	var sent atomic.Int64
	spy, err := server.link.Conn().Subscribe(CallSubjectPrefix+">", func(*nats.Msg) { sent.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Unsubscribe()
	server.link.Conn().Flush()

	tests := []struct {
		name, skill, tool, input string
		code                     string // "" for success
		// remote: the request crosses NATS (else the caller refuses it
		// before sending anything).
		remote bool
	}{
		{"ok", "acme.echo", "acme.echo.t", `{"text":"hi"}`, "", true},
		{"invalid input caught on the caller", "acme.echo", "acme.echo.t", `{"text":7}`, "invalid_input", false},
		{"unknown tool caught on the caller", "acme.echo", "acme.echo.nope", `{}`, "unknown_tool", false},
		{"unknown skill caught on the caller", "acme.none", "acme.none.t", `{}`, "skill_not_found", false},
		{"tool error from the far side", "acme.toolerr", "acme.toolerr.t", `{}`, "tool_error", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := host.CallRequest{SkillID: tc.skill, ToolID: tc.tool, Input: json.RawMessage(tc.input)}
			want, wantErr := server.host.Call(ctx, req)
			before := sent.Load()
			got, err := caller.node.Call(ctx, req)
			server.link.Conn().Flush()
			if code := errcode.Of(err); err != nil && code != tc.code || err == nil && tc.code != "" {
				t.Fatalf("routed: %v (code %s), want code %q", err, code, tc.code)
			}
			if errcode.Of(wantErr) != errcode.Of(err) {
				t.Errorf("local code %s, routed %s", errcode.Of(wantErr), errcode.Of(err))
			}
			if s := errcode.Lookup(tc.code); s != nil && !errors.Is(err, s) {
				t.Errorf("errors.Is(%v, %s) is false", err, tc.code)
			}
			if crossed := sent.Load() > before; crossed != tc.remote {
				t.Errorf("request crossed NATS: %v, want %v", crossed, tc.remote)
			}
			if err != nil {
				if w, g := host.CallResultOf(wantErr), host.CallResultOf(err); (w == nil) != (g == nil) || w != nil && !jsonEq(w.ToolError, g.ToolError) {
					t.Errorf("result with the error: local %+v, routed %+v", w, g)
				}
				return
			}
			// The echo module copies its invocation document: the same
			// but for the invocation id and the deadline.
			if stable(t, got.Output) != stable(t, want.Output) || got.SkillID != want.SkillID || got.Version != want.Version {
				t.Errorf("routed %s %s %s, local %s %s %s", got.SkillID, got.Version, got.Output, want.SkillID, want.Version, want.Output)
			}
			if !ranOn(t, server.host, got.SidecarPID) || ranOn(t, caller.host, got.SidecarPID) {
				t.Errorf("sidecar %d did not run on node 1 alone", got.SidecarPID)
			}
		})
	}

	t.Run("the deadline travels", func(t *testing.T) {
		// The sleep tool sleeps 10 s; the call's 300 ms bound ends it.
		start := time.Now()
		_, err := caller.node.Call(ctx, host.CallRequest{SkillID: "acme.sleep", ToolID: "acme.sleep.t", Input: json.RawMessage(`{}`), Timeout: 300 * time.Millisecond})
		took := time.Since(start)
		t.Logf("a 300 ms call to a 10 s tool ended after %s: %v", took, err)
		if !errors.Is(err, errcode.ErrTimeout) {
			t.Fatalf("err %v (code %s), want timeout", err, errcode.Of(err))
		}
		if took >= 5*time.Second {
			t.Fatalf("the call ran to the tool's end (%s), not to its deadline", took)
		}
		// The far side got the deadline too: its call ends long before
		// the tool's 10 s.
		waitFor(t, 5*time.Second, "the far side's call to end", func() bool { return server.node.route.running("acme.sleep") == 0 })
	})
	t.Run("a canceled context ends the wait", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		_, err := caller.node.Call(cctx, host.CallRequest{SkillID: "acme.sleep", ToolID: "acme.sleep.t", Input: json.RawMessage(`{}`)})
		if !errors.Is(err, errcode.ErrTimeout) {
			t.Fatalf("err %v (code %s), want timeout", err, errcode.Of(err))
		}
	})
}

// ranOn reports whether pid is one of h's sidecars.
func ranOn(t *testing.T, h *host.Host, pid int) bool {
	t.Helper()
	sc, err := h.Sidecars(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(sc, func(s host.SidecarState) bool { return s.PID == pid })
}

func jsonEq(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// stable is an echo output without what differs between two calls.
func stable(t *testing.T, out json.RawMessage) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	delete(doc, "invocation_id")
	delete(doc, "deadline_unix_ms")
	b, _ := json.Marshal(doc)
	return string(b)
}

func TestCallerChecksTheOutput(t *testing.T) {
	ctx := context.Background()
	nodes := startRouteCluster(t, 2, func(i int, c *Config) {
		if i == 0 {
			c.Skills = []string{"acme.other"}
		}
	})
	// The same skill version, but the caller's copy promises an output
	// the tool does not give: the caller refuses what the far side's
	// sidecar returned, though the far side found it valid.
	installSkill(t, nodes[0].host, routeArtifact(t, "acme.strict", "echo", `{ type = "object" }`, `{ type = "object", required = ["nope"] }`))
	installSkill(t, nodes[1].host, routeArtifact(t, "acme.strict", "echo", `{ type = "object" }`, ""))
	waitServing(t, nodes, 1, "acme.strict")
	req := host.CallRequest{SkillID: "acme.strict", ToolID: "acme.strict.t", Input: json.RawMessage(`{}`)}
	if _, err := nodes[1].host.Call(ctx, req); err != nil {
		t.Fatalf("on the far side: %v", err)
	}
	res, err := nodes[0].node.Call(ctx, req)
	if !errors.Is(err, host.ErrInvalidOutput) {
		t.Fatalf("routed: %v, want invalid_output", err)
	}
	if r := host.CallResultOf(err); r == nil || r.Output != nil || res == nil || res.Output != nil {
		t.Fatalf("the refused output came back: %+v, %+v", res, r)
	}
}

func TestCloseDrainsServedCalls(t *testing.T) {
	ctx := context.Background()
	nodes := startRouteCluster(t, 2, serveNothing)
	waitServing(t, nodes, 1, "acme.sleep")
	done := make(chan error, 1)
	go func() {
		_, err := nodes[0].node.Call(ctx, host.CallRequest{SkillID: "acme.sleep", ToolID: "acme.sleep.t", Input: json.RawMessage(`{}`), Timeout: time.Second})
		done <- err
	}()
	waitFor(t, 5*time.Second, "the call to start on node 1", func() bool { return nodes[1].node.route.running("acme.sleep") > 0 })
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := nodes[1].node.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if n := nodes[1].node.route.running("acme.sleep"); n != 0 {
		t.Fatalf("Close returned with %d calls running", n)
	}
	if err := <-done; !errors.Is(err, errcode.ErrTimeout) {
		t.Fatalf("the drained call: %v, want its own timeout", err)
	}
	// Node 1's endpoints are gone: nothing serves the skill now.
	_, err := nodes[0].node.Call(ctx, host.CallRequest{SkillID: "acme.sleep", ToolID: "acme.sleep.t", Input: json.RawMessage(`{}`)})
	if !errors.Is(err, ErrNoRoute) {
		t.Fatalf("after Close: %v, want no_route", err)
	}
}

func TestRoutedA2UIDocumentIsKeptOnTheCaller(t *testing.T) {
	ctx := context.Background()
	dir := examplebuild.MustDir(t, "report")
	m, err := os.ReadFile(filepath.Join(dir, "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(examplebuild.MustBuild(t, "report"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := startRouteCluster(t, 2, serveNothing)
	for _, tn := range nodes {
		if _, err := tn.host.Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, string(m), mod, skillKey), AllowTOFU: true}); err != nil {
			t.Fatal(err)
		}
	}
	waitServing(t, nodes, 1, "palyra.report")
	res, err := nodes[0].node.Call(ctx, host.CallRequest{SkillID: "palyra.report", ToolID: "palyra.report",
		Input: json.RawMessage(`{"title":"Sales","rows":[{"label":"EU","value":3}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.A2UI == nil || res.A2UI.DocumentID == "" || ranOn(t, nodes[0].host, res.SidecarPID) {
		t.Fatalf("routed call: a2ui %+v, sidecar %d", res.A2UI, res.SidecarPID)
	}
	// The form submit goes to the node the call came through, which kept
	// the document.
	sub, err := nodes[0].node.SubmitForm(ctx, host.SubmitRequest{DocumentID: res.A2UI.DocumentID, ComponentID: "add",
		Values: map[string]any{"label": "US", "value": 4.5, "kind": "line"}})
	if err != nil {
		t.Fatal(err)
	}
	if sub.A2UI == nil || sub.A2UI.DocumentID != res.A2UI.DocumentID || sub.A2UI.Patch == nil {
		t.Fatalf("submit: a2ui %+v", sub.A2UI)
	}
}
