package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
)

// TestAuth checks that every route but health needs the token in
// Authorization: Bearer, and nowhere else.
func TestAuth(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	get := func(path string, hdr map[string]string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, p.url+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if st, _ := get(path, nil); st != http.StatusOK {
			t.Errorf("%s without a token: HTTP %d, want 200", path, st)
		}
	}
	cases := []struct {
		name string
		path string
		hdr  map[string]string
	}{
		{"no token", "/v1/skills", nil},
		{"wrong token", "/v1/skills", map[string]string{"Authorization": "Bearer palyra_wrong_wrong_wrong_wrong_wrong_wrong_wr"}},
		{"token with another scheme", "/v1/skills", map[string]string{"Authorization": "Token " + p.token}},
		{"bare token", "/v1/skills", map[string]string{"Authorization": p.token}},
		{"token in another header", "/v1/skills", map[string]string{"X-Palyra-Token": p.token}},
		{"token in the query string", "/v1/skills?token=" + p.token + "&access_token=" + p.token, nil},
		{"metrics without a token", "/metrics", nil},
		{"events without a token", "/v1/events", nil},
	}
	for _, c := range cases {
		st, body := get(c.path, c.hdr)
		if st != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401: %s", c.name, st, body)
			continue
		}
		if code := errCode(t, body); code != "unauthorized" {
			t.Errorf("%s: code %q, want unauthorized", c.name, code)
		}
	}
	if st, body := get("/v1/skills", map[string]string{"Authorization": "Bearer " + p.token}); st != http.StatusOK {
		t.Fatalf("with the token: HTTP %d: %s", st, body)
	}

	// Rotation: the old token stops working at once, the new one works.
	rot := exec.Command(filepath.Join(bin, "palyra-host"), "token", "rotate", "--state-dir", p.state)
	if out, err := rot.CombinedOutput(); err != nil {
		t.Fatalf("token rotate: %v: %s", err, out)
	}
	if st, _ := get("/v1/skills", map[string]string{"Authorization": "Bearer " + p.token}); st != http.StatusUnauthorized {
		t.Errorf("old token after rotate: HTTP %d, want 401", st)
	}
	tok, err := daemon.ReadToken(daemon.TokenPath(p.state))
	if err != nil {
		t.Fatal(err)
	}
	p.token = tok
	if st, body := get("/v1/skills", map[string]string{"Authorization": "Bearer " + tok}); st != http.StatusOK {
		t.Errorf("new token after rotate: HTTP %d: %s", st, body)
	}
}

// TestHTTPAPI runs every skill operation over the HTTP API.
func TestHTTPAPI(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "max_request_bytes = 4096\n")
	defer p.stop()
	art := probeArtifact(t, "test.probe_a")

	// Install (upload). Without TOFU the unknown publisher is refused.
	st, body := p.do(http.MethodPost, "/v1/skills", art, nil)
	if st != http.StatusUnprocessableEntity || errCode(t, body) != "untrusted_publisher" {
		t.Fatalf("install without allow_tofu: HTTP %d %s", st, body)
	}
	var ir install.InstallResult
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", art, &ir)
	if ir.SkillID != "test.probe_a" || ir.Status != "active" || ir.TrustDecision != "tofu_newly_pinned" {
		t.Fatalf("install: %+v", ir)
	}
	st, body = p.do(http.MethodPost, "/v1/skills?allow_tofu=true", art, nil)
	if st != http.StatusConflict {
		t.Errorf("second install of the same version: HTTP %d, want 409: %s", st, body)
	}

	// List and info.
	var list struct {
		Count   int               `json:"count"`
		Entries []install.Listing `json:"entries"`
	}
	p.must(http.StatusOK, http.MethodGet, "/v1/skills", nil, &list)
	if list.Count != 1 || list.Entries[0].SkillID != "test.probe_a" || list.Entries[0].Status != "active" {
		t.Fatalf("list: %+v", list)
	}
	var info install.Info
	p.must(http.StatusOK, http.MethodGet, "/v1/skills/test.probe_a", nil, &info)
	if info.Inventory.Version != "0.1.0" || len(info.Manifest) == 0 {
		t.Fatalf("info: %+v", info.Inventory)
	}
	st, body = p.do(http.MethodGet, "/v1/skills/test.nothing", nil, nil)
	if st != http.StatusNotFound || errCode(t, body) != "skill_not_found" {
		t.Errorf("info of an unknown skill: HTTP %d %s", st, body)
	}

	// Verify and audit.
	var vr install.VerifyResult
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.probe_a/verify", map[string]string{}, &vr)
	if vr.TrustDecision != "tofu_pinned" {
		t.Errorf("verify: %+v", vr)
	}
	var ar install.AuditResult
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.probe_a/audit", nil, &ar)
	if !ar.Passed {
		t.Errorf("audit: %+v", ar)
	}

	// Call a tool.
	var cr host.CallResult
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.probe_a/tools/test.probe/call", map[string]any{"input": map[string]any{"hello": "world"}}, &cr)
	if cr.ExitCode != 0 || string(cr.Output) != `{"hello":"world"}` || cr.Version != "0.1.0" || cr.Stats.FuelConsumed == 0 {
		t.Fatalf("call: %+v (output %s)", cr, cr.Output)
	}
	// A non-zero exit is a tool error, reported with what the sidecar said.
	st, body = p.do(http.MethodPost, "/v1/skills/test.probe_a/tools/test.probe/call", map[string]any{"input": map[string]any{"hello": "exit:10"}}, nil)
	var eb struct {
		Error   map[string]string `json:"error"`
		Details host.CallResult   `json:"details"`
	}
	if err := json.Unmarshal(body, &eb); err != nil || st != http.StatusUnprocessableEntity || eb.Error["code"] != "tool_error" || eb.Details.ExitCode != 10 || eb.Details.ToolError == nil {
		t.Errorf("exit 10: HTTP %d %s", st, body)
	}
	st, body = p.do(http.MethodPost, "/v1/skills/test.probe_a/tools/test.nope/call", map[string]any{"input": map[string]any{}}, nil)
	if st != http.StatusNotFound || errCode(t, body) != "unknown_tool" {
		t.Errorf("unknown tool: HTTP %d %s", st, body)
	}
	st, body = p.do(http.MethodPost, "/v1/skills/test.probe_a/tools/test.probe/call", map[string]any{"input": 42}, nil)
	if st != http.StatusBadRequest || errCode(t, body) != "invalid_input" {
		t.Errorf("input against the schema: HTTP %d %s", st, body)
	}
	st, body = p.do(http.MethodPost, "/v1/skills/test.probe_a/tools/test.probe/call", map[string]any{"input": map[string]any{}, "surprise": 1}, nil)
	if st != http.StatusBadRequest || errCode(t, body) != "bad_request" {
		t.Errorf("unknown request field: HTTP %d %s", st, body)
	}

	// The callable tools: the probe's, until the quarantine below.
	var cat host.ToolCatalog
	p.must(http.StatusOK, http.MethodGet, "/v1/tools", nil, &cat)
	if cat.Generation == "" || len(cat.Tools) != 1 || cat.Tools[0].SkillID != "test.probe_a" || cat.Tools[0].Tool.ID != "test.probe" {
		t.Errorf("tools: %+v", cat)
	}

	// Oversized bodies are refused with the limit named.
	big := map[string]any{"input": map[string]any{"x": strings.Repeat("a", 5000)}}
	st, body = p.do(http.MethodPost, "/v1/skills/test.probe_a/tools/test.probe/call", big, nil)
	if st != http.StatusRequestEntityTooLarge || errCode(t, body) != "request_too_large" || !strings.Contains(string(body), "4096-byte limit") {
		t.Errorf("oversized call: HTTP %d %s", st, body)
	}

	// Quarantine (the principal is recorded), calls refused, enable needs
	// override, disable, enable.
	var sr install.StatusResult
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.probe_a/quarantine", map[string]string{"reason": "looks odd"}, &sr)
	if sr.Status != "quarantined" || sr.Principal != "user:tester" || sr.Reason != "looks odd" {
		t.Errorf("quarantine: %+v", sr)
	}
	st, body = p.do(http.MethodPost, "/v1/skills/test.probe_a/tools/test.probe/call", map[string]any{"input": map[string]any{}}, nil)
	if st != http.StatusForbidden || errCode(t, body) != "skill_quarantined" {
		t.Errorf("call of a quarantined skill: HTTP %d %s", st, body)
	}
	var quarantined host.ToolCatalog
	p.must(http.StatusOK, http.MethodGet, "/v1/tools", nil, &quarantined)
	if len(quarantined.Tools) != 0 || quarantined.Generation == cat.Generation {
		t.Errorf("tools after the quarantine: %+v (before: generation %s)", quarantined, cat.Generation)
	}
	st, body = p.do(http.MethodPost, "/admin/v1/skills/test.probe_a/enable", map[string]any{"reason": "ok"}, nil)
	if st != http.StatusBadRequest || errCode(t, body) != "override_required" {
		t.Errorf("Palyra admin enable without override: HTTP %d %s", st, body)
	}
	p.must(http.StatusOK, http.MethodPost, "/admin/v1/skills/test.probe_a/enable", map[string]any{"reason": "reviewed", "override": true}, &sr)
	if sr.Status != "active" {
		t.Errorf("enable: %+v", sr)
	}
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.probe_a/disable", map[string]any{"reason": "pause"}, &sr)
	if sr.Status != "disabled" {
		t.Errorf("disable: %+v", sr)
	}
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.probe_a/enable", map[string]any{"reason": "resume"}, &sr)
	// The disable stopped the sidecar; a call starts it again.
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.probe_a/tools/test.probe/call", map[string]any{"input": map[string]any{}}, nil)

	// Re-audit on demand, sidecars, metrics.
	var rep install.ReauditReport
	p.must(http.StatusOK, http.MethodPost, "/v1/reaudit", nil, &rep)
	if rep.Checked != 1 || rep.Quarantined != 0 {
		t.Errorf("reaudit: %+v", rep)
	}
	var sc struct {
		Sidecars []host.SidecarState `json:"sidecars"`
	}
	p.must(http.StatusOK, http.MethodGet, "/v1/sidecars", nil, &sc)
	if len(sc.Sidecars) != 1 || sc.Sidecars[0].SkillID != "test.probe_a" {
		t.Errorf("sidecars: %+v", sc)
	}
	// The cluster of one: this daemon, its version, the skill its
	// sidecar runs.
	var cl host.ClusterStatus
	p.must(http.StatusOK, http.MethodGet, "/v1/cluster", nil, &cl)
	if cl.Clustered || len(cl.Nodes) != 1 || cl.Node != host.LocalNodeName() || cl.Nodes[0].Name != cl.Node || !cl.Nodes[0].Live ||
		cl.Nodes[0].Version != manifest.RuntimeVersion || len(cl.Nodes[0].Skills) != 1 || cl.Nodes[0].Skills[0] != "test.probe_a" || cl.Nodes[0].SidecarsAlive != 1 {
		t.Errorf("cluster: %+v", cl)
	}
	// Every metric carries the node label: the host name, not clustered.
	node := host.LocalNodeName()
	metrics := string(p.must(http.StatusOK, http.MethodGet, "/metrics", nil, nil))
	for _, want := range []string{`palyra_skill_calls_total{code="ok",node="` + node + `",skill_id="test.probe_a",tool_id="test.probe",version="0.1.0"}`, "palyra_api_requests_total", `palyra_sidecars_alive{node="` + node + `"}`, `go_goroutines{node="` + node + `"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// Remove with the storage purge.
	var rr host.RemoveResult
	p.must(http.StatusOK, http.MethodDelete, "/v1/skills/test.probe_a?purge_storage=true", nil, &rr)
	if len(rr.Versions) != 1 || !rr.StoragePurged {
		t.Errorf("remove: %+v", rr)
	}
	p.must(http.StatusOK, http.MethodGet, "/v1/skills", nil, &list)
	if list.Count != 0 {
		t.Errorf("after remove: %d skills", list.Count)
	}
	// The journal, replayed without following: the stream ends after the
	// remove's event.
	replay := string(p.must(http.StatusOK, http.MethodGet, "/v1/events?after=0&follow=false", nil, nil))
	var kinds []string
	for _, line := range strings.Split(replay, "\n") {
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) < 6 || kinds[0] != "skill:installed" || kinds[len(kinds)-1] != "skill:removed" || !strings.Contains(replay, "id: 1\n") {
		t.Errorf("replay without follow: %v", kinds)
	}
	st, body = p.do(http.MethodGet, "/v1/events?follow=maybe", nil, nil)
	if st != http.StatusBadRequest || errCode(t, body) != "bad_request" {
		t.Errorf("follow=maybe: HTTP %d %s", st, body)
	}
	st, body = p.do(http.MethodGet, "/v1/nothing", nil, nil)
	if st != http.StatusNotFound || errCode(t, body) != "route_not_found" {
		t.Errorf("unknown route: HTTP %d %s", st, body)
	}
}

// TestRefusals: a second daemon on the same state directory and a listen
// address off loopback without TLS are refused.
func TestRefusals(t *testing.T) {
	state := t.TempDir()
	p := startDaemon(t, state, "")
	defer p.stop()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(bin, "palyra-host"), args...)
		cmd.Env = append(os.Environ(), "PALYRA_SIDECAR="+filepath.Join(bin, "palyra-sidecar"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("serve", "--state-dir", state, "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(out, "daemon_already_running") || !strings.Contains(out, fmt.Sprint(p.cmd.Process.Pid)) {
		t.Errorf("second daemon: %v: %s", err, out)
	}
	out, err = run("serve", "--state-dir", t.TempDir(), "--listen", "0.0.0.0:0")
	if err == nil || !strings.Contains(out, "insecure_listen") {
		t.Errorf("non-loopback listen: %v: %s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(cfg, []byte("listen = \"127.0.0.1:0\"\nsurprise = 1\n"), 0o600)
	out, err = run("serve", "--state-dir", t.TempDir(), "--config", cfg)
	if err == nil || !strings.Contains(out, "daemon_config_invalid") || !strings.Contains(out, "surprise") {
		t.Errorf("bad config: %v: %s", err, out)
	}
}

// TestA2UI: a tool result that is an A2UI document is validated and kept;
// a form submit is validated against the form and delivered to that tool.
func TestA2UI(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.ui"), nil)
	doc := map[string]any{
		"v": 1, "surface": "settings",
		"components": []any{
			map[string]any{"id": "intro", "type": "text", "props": map[string]any{"value": "Pick a plan"}},
			map[string]any{"id": "plan-form", "type": "form", "props": map[string]any{
				"title": "Plan", "submit_label": "Save",
				"fields": []any{
					map[string]any{"id": "seats", "label": "Seats", "type": "number", "min": 1, "max": 50, "step": 1, "required": true},
					map[string]any{"id": "tier", "label": "Tier", "type": "select", "options": []any{map[string]any{"label": "Basic", "value": "basic"}, map[string]any{"label": "Pro", "value": "pro"}}},
				},
			}},
		},
	}
	// The probe echoes its input, so it returns this document.
	var cr host.CallResult
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.ui/tools/test.probe/call", map[string]any{"input": doc}, &cr)
	if cr.A2UI == nil || cr.A2UI.Surface != "settings" || len(cr.A2UI.DocumentID) != 26 {
		t.Fatalf("a2ui ref: %+v", cr.A2UI)
	}
	submit := "/v1/a2ui/" + cr.A2UI.DocumentID + "/submit"
	bad := []map[string]any{
		{"componentId": "plan-form", "values": map[string]any{"seats": 500}},
		{"componentId": "plan-form", "values": map[string]any{"tier": "gold", "seats": 2}},
		{"componentId": "plan-form", "values": map[string]any{"tier": "pro"}},
		{"componentId": "intro", "values": map[string]any{}},
		{"componentId": "plan-form", "values": map[string]any{"seats": 2, "extra": true}},
	}
	for _, b := range bad {
		st, body := p.do(http.MethodPost, submit, b, nil)
		if st != http.StatusBadRequest || errCode(t, body) != "a2ui_invalid_submit" {
			t.Errorf("submit %v: HTTP %d %s", b, st, body)
		}
	}
	p.must(http.StatusOK, http.MethodPost, submit, map[string]any{"componentId": "plan-form", "values": map[string]any{"seats": 3, "tier": "pro"}}, &cr)
	var got struct {
		Submit host.SubmitEvent `json:"a2ui_submit"`
	}
	if err := json.Unmarshal(cr.Output, &got); err != nil {
		t.Fatalf("submit output %s: %v", cr.Output, err)
	}
	if got.Submit.ComponentID != "plan-form" || got.Submit.Surface != "settings" || got.Submit.Values["tier"] != "pro" || got.Submit.Values["seats"] != float64(3) {
		t.Errorf("the tool got %+v", got.Submit)
	}
	st, body := p.do(http.MethodPost, "/v1/a2ui/01ARZ3NDEKTSV4RRFFQ69G5FAV/submit", map[string]any{"componentId": "x", "values": map[string]any{}}, nil)
	if st != http.StatusNotFound || errCode(t, body) != "a2ui_document_not_found" {
		t.Errorf("unknown document: HTTP %d %s", st, body)
	}

	// An invalid document is refused with the path of the culprit.
	doc["components"] = append(doc["components"].([]any), map[string]any{"id": "clock", "type": "clock", "props": map[string]any{}})
	st, body = p.do(http.MethodPost, "/v1/skills/test.ui/tools/test.probe/call", map[string]any{"input": doc}, nil)
	if st != http.StatusBadGateway || errCode(t, body) != "a2ui_invalid" || !strings.Contains(string(body), "/components/2") {
		t.Errorf("invalid document: HTTP %d %s", st, body)
	}
}

// TestHooks: a hook skill bound to skill:quarantined receives the event as
// its input; decisions come from exit codes.
func TestHooks(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "hook_timeout = \"5s\"\n")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.hookprobe"), nil)
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.target"), nil)
	p.must(http.StatusCreated, http.MethodPost, "/v1/hooks", map[string]any{"hook_id": "audit-quarantine", "event": "skill:quarantined", "plugin_id": "test.hookprobe", "enabled": true}, nil)
	p.must(http.StatusCreated, http.MethodPost, "/v1/hooks", map[string]any{"hook_id": "gate-tool", "event": "before_tool", "plugin_id": "test.hookprobe", "tool_id": "test.probe", "enabled": true}, nil)
	var hl struct {
		Bindings []map[string]any `json:"bindings"`
	}
	p.must(http.StatusOK, http.MethodGet, "/v1/hooks", nil, &hl)
	if len(hl.Bindings) != 2 || hl.Bindings[1]["event"] != "run:before_tool" {
		t.Fatalf("bindings: %v", hl.Bindings)
	}
	// bindings.json is in Palyra's format.
	raw, err := os.ReadFile(filepath.Join(p.state, "hooks", "bindings.json"))
	if err != nil || !bytes.Contains(raw, []byte(`"schema_version": 1`)) {
		t.Fatalf("bindings.json: %v %s", err, raw)
	}

	ev := p.events("")
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/test.target/quarantine", map[string]string{"reason": "suspicious egress"}, nil)
	got := ev.waitFor(t, 20*time.Second, func(m map[string]any) bool {
		return m["kind"] == host.EventHookDispatched || m["kind"] == host.EventHookFailed
	})
	if got["kind"] != host.EventHookDispatched {
		t.Fatalf("hook outcome: %v", got)
	}
	details := got["details"].(map[string]any)
	out, _ := details["output"].(map[string]any)
	if ev, ok := out["payload"].(map[string]any); !ok || ev["id"] == nil {
		t.Errorf("payload without the journal id: %v", out)
	}
	payload, _ := out["payload"].(map[string]any)
	if out["event"] != "skill:quarantined" || out["hook_id"] != "audit-quarantine" || payload["skill_id"] != "test.target" || payload["reason"] != "suspicious egress" || payload["operator_principal"] != "user:tester" {
		t.Errorf("the hook skill received %v", out)
	}
	if details["decision"] != "continue" {
		t.Errorf("decision %v, want continue", details["decision"])
	}

	// Fired by hand: the payload reaches the hook and its exit code (30,
	// block) is the decision.
	var fr struct {
		Outcomes   []map[string]any `json:"outcomes"`
		Resolution map[string]any   `json:"resolution"`
	}
	p.must(http.StatusOK, http.MethodPost, "/v1/hooks/fire", map[string]any{"event": "run:before_tool", "payload": map[string]any{"tool": "x", "note": "exit:30"}}, &fr)
	if len(fr.Outcomes) != 1 || fr.Outcomes[0]["exit_code"] != float64(30) || fr.Resolution["decision"] != "block" {
		t.Errorf("fire: %+v", fr)
	}
	// A disabled hook does not run.
	p.must(http.StatusOK, http.MethodPost, "/v1/hooks/gate-tool/disable", nil, nil)
	p.must(http.StatusOK, http.MethodPost, "/v1/hooks/fire", map[string]any{"event": "run:before_tool", "payload": map[string]any{"note": "exit:30"}}, &fr)
	if len(fr.Outcomes) != 0 || fr.Resolution["decision"] != "continue" {
		t.Errorf("fire with the hook disabled: %+v", fr)
	}
	p.must(http.StatusOK, http.MethodDelete, "/v1/hooks/gate-tool", nil, nil)
	st, body := p.do(http.MethodDelete, "/v1/hooks/gate-tool", nil, nil)
	if st != http.StatusNotFound {
		t.Errorf("second remove: HTTP %d %s", st, body)
	}
}

// TestReauditQuarantines: after the trust store drops the publisher's key,
// the scheduled re-audit quarantines the skill and emits skill:quarantined.
func TestReauditQuarantines(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "reaudit_interval = \"300ms\"\n")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.reaudit"), nil)
	ev := p.events("")
	ts := filepath.Join(p.state, "skills", "trust-store.json")
	if _, err := os.Stat(ts); err != nil {
		t.Fatal(err)
	}
	// The operator drops the pinned key: an empty store, edited by hand
	// and accepted (palyra trust accept-changes).
	if err := os.WriteFile(ts+".new", []byte(`{"trusted_publishers":{},"tofu_publishers":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(vault.Config{StateDir: p.state})
	if err != nil {
		t.Fatal(err)
	}
	tf := trust.OpenFile(ts, trust.WithVault(v))
	if _, err := tf.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(ts+".new", ts); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := tf.AcceptChanges(context.Background(), func(*trust.Review) (bool, error) { return true, nil }); err != nil || !ok {
		t.Fatalf("accept-changes: %v %v", ok, err)
	}
	got := ev.waitFor(t, 30*time.Second, func(m map[string]any) bool { return m["kind"] == "skill:quarantined" })
	if got["skill_id"] != "test.reaudit" || !strings.Contains(fmt.Sprint(got["reason"]), "reaudit") || got["operator_principal"] == "" {
		t.Errorf("event: %v", got)
	}
	st, body := p.do(http.MethodPost, "/v1/skills/test.reaudit/tools/test.probe/call", map[string]any{"input": map[string]any{}}, nil)
	if st != http.StatusForbidden || errCode(t, body) != "skill_quarantined" {
		t.Errorf("call after re-audit: HTTP %d %s", st, body)
	}
}

// TestAnomalyQuarantine: fuel exhaustion past the threshold quarantines the
// skill with the evidence as reason.
func TestAnomalyQuarantine(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "[anomaly]\nwindow = \"1m\"\nthresholds = { fuel_exhausted = 2 }\n")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", wasmArtifact(t, "test.spinner", "loop.wasm", "fuel_budget = 100000\nwall_clock_timeout_ms = 5000"), nil)
	for i := 0; i < 2; i++ {
		st, body := p.do(http.MethodPost, "/v1/skills/test.spinner/tools/test.run/call", map[string]any{"input": map[string]any{}}, nil)
		if errCode(t, body) != "fuel_exhausted" {
			t.Fatalf("call %d: HTTP %d %s", i, st, body)
		}
	}
	var info install.Info
	p.must(http.StatusOK, http.MethodGet, "/v1/skills/test.spinner", nil, &info)
	rs := info.Inventory.RuntimeStatus
	if rs.Status != "quarantined" || rs.Principal != "system:anomaly" || !strings.Contains(rs.Reason, "fuel_exhausted") {
		t.Errorf("status after 2 fuel exhaustions: %+v", rs)
	}
	metrics := string(p.must(http.StatusOK, http.MethodGet, "/metrics", nil, nil))
	if !strings.Contains(metrics, `palyra_anomaly_quarantines_total{kind="fuel_exhausted",node="`+host.LocalNodeName()+`",skill_id="test.spinner"} 1`) {
		t.Errorf("metrics lack the anomaly quarantine")
	}
}
