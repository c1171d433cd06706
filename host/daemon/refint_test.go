package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/palyra-go/palyra/host"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

// TestBindHookEnabledDefault: POST /v1/hooks and gRPC BindHook make an
// enabled binding when enabled is absent, and a disabled one when it is an
// explicit false.
func TestBindHookEnabledDefault(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	tests := []struct {
		hookID string
		body   string
		want   bool
	}{
		{"http.omitted", `{"hook_id":"http.omitted","event":"skill:installed","plugin_id":"test.any"}`, true},
		{"http.true", `{"hook_id":"http.true","event":"skill:installed","plugin_id":"test.any","enabled":true}`, true},
		{"http.false", `{"hook_id":"http.false","event":"skill:installed","plugin_id":"test.any","enabled":false}`, false},
	}
	for _, tt := range tests {
		var b host.HookBinding
		p.must(http.StatusCreated, http.MethodPost, "/v1/hooks", []byte(tt.body), &b)
		if b.HookID != tt.hookID || b.Enabled != tt.want {
			t.Errorf("%s: %+v, want enabled %v", tt.body, b, tt.want)
		}
	}
	st, data := p.do(http.MethodPost, "/v1/hooks", []byte(`{"hook_id":"http.null","event":"skill:installed","plugin_id":"test.any","enabled":"yes"}`), nil)
	if st != http.StatusBadRequest || errCode(t, data) != "bad_request" {
		t.Errorf("enabled not a bool: HTTP %d %s", st, data)
	}

	c := dialGRPC(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = authed(ctx, p.token)
	for _, tt := range []struct {
		hookID  string
		enabled *bool
		want    bool
	}{{"grpc.omitted", nil, true}, {"grpc.true", proto.Bool(true), true}, {"grpc.false", proto.Bool(false), false}} {
		r, err := c.BindHook(ctx, &hostv1.BindHookRequest{Binding: &hostv1.HookBinding{HookId: tt.hookID, Event: "skill:installed", PluginId: "test.any", Enabled: tt.enabled}})
		if err != nil || r.GetBinding().GetEnabled() != tt.want || r.GetBinding().Enabled == nil {
			t.Errorf("grpc bind %s: %v %v, want enabled %v", tt.hookID, r, err, tt.want)
		}
	}
	var l struct {
		Bindings []host.HookBinding `json:"bindings"`
	}
	p.must(http.StatusOK, http.MethodGet, "/v1/hooks", nil, &l)
	got := map[string]bool{}
	for _, b := range l.Bindings {
		got[b.HookID] = b.Enabled
	}
	want := map[string]bool{"http.omitted": true, "http.true": true, "http.false": false, "grpc.omitted": true, "grpc.true": true, "grpc.false": false}
	for id, en := range want {
		if e, ok := got[id]; !ok || e != en {
			t.Errorf("stored %s: present %v enabled %v, want %v", id, ok, e, en)
		}
	}
}

// TestRemoveReferencedByHookAPI: DELETE /v1/skills/{id} of a skill an
// enabled binding runs is 412 skill_referenced_by_hook naming the binding;
// ?force=true removes it and disables the binding. Over gRPC, the same
// refusal is FailedPrecondition and force does the same.
func TestRemoveReferencedByHookAPI(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	install := func(id string) {
		p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, id), nil)
	}
	bind := func(hookID, skill string) {
		p.must(http.StatusCreated, http.MethodPost, "/v1/hooks", host.HookBinding{HookID: hookID, Event: "skill:enabled", PluginID: skill, Enabled: true}, nil)
	}
	install("test.refhttp")
	bind("ref.http", "test.refhttp")

	st, data := p.do(http.MethodDelete, "/v1/skills/test.refhttp", nil, nil)
	if st != http.StatusPreconditionFailed || errCode(t, data) != "skill_referenced_by_hook" || !strings.Contains(string(data), "ref.http (skill:enabled)") ||
		!strings.Contains(string(data), `\"force\": true`) {
		t.Fatalf("remove: HTTP %d %s", st, data)
	}
	p.must(http.StatusOK, http.MethodGet, "/v1/skills/test.refhttp", nil, nil)
	st, data = p.do(http.MethodDelete, "/v1/skills/test.refhttp?force=maybe", nil, nil)
	if st != http.StatusBadRequest {
		t.Errorf("force=maybe: HTTP %d %s", st, data)
	}
	var rr host.RemoveResult
	p.must(http.StatusOK, http.MethodDelete, "/v1/skills/test.refhttp?force=true", nil, &rr)
	if len(rr.Versions) != 1 || len(rr.DisabledHooks) != 1 || rr.DisabledHooks[0].HookID != "ref.http" || rr.DisabledHooks[0].Enabled ||
		rr.DisabledHooks[0].Operator.UpdatedBy != "user:tester" {
		t.Fatalf("remove ?force=true: %+v", rr)
	}
	var l struct {
		Bindings []host.HookBinding `json:"bindings"`
	}
	p.must(http.StatusOK, http.MethodGet, "/v1/hooks", nil, &l)
	if len(l.Bindings) != 1 || l.Bindings[0].Enabled {
		t.Fatalf("bindings after a forced remove: %+v", l.Bindings)
	}

	c := dialGRPC(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = authed(ctx, p.token)
	install("test.refgrpc")
	bind("ref.grpc", "test.refgrpc")
	_, err := c.RemoveSkill(ctx, &hostv1.RemoveSkillRequest{SkillId: "test.refgrpc"})
	if status.Code(err) != codes.FailedPrecondition || grpcErrCode(err) != "skill_referenced_by_hook" || !strings.Contains(err.Error(), "ref.grpc (skill:enabled)") {
		t.Fatalf("grpc remove: %v", err)
	}
	r, err := c.RemoveSkill(ctx, &hostv1.RemoveSkillRequest{SkillId: "test.refgrpc", Force: true})
	if err != nil || len(r.GetVersions()) != 1 || !strings.Contains(string(r.GetResultJson()), `"disabled_hooks":[{"hook_id":"ref.grpc"`) {
		t.Fatalf("grpc remove force: %v %v", r, err)
	}
}
