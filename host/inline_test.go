package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/internal/testskill"
)

// testWasm reads testdata/wasm/<name>.wasm of the repository.
func testWasm(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// echoed returns the input the echo module got: it copies its whole
// input document ({"input": ..., "skill_id": ..., ...}) to its output.
func echoed(t *testing.T, out json.RawMessage) string {
	t.Helper()
	var doc struct {
		Input   json.RawMessage `json:"input"`
		SkillID string          `json:"skill_id"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("echo output %s: %v", out, err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, doc.Input); err != nil {
		t.Fatalf("echo input %s: %v", doc.Input, err)
	}
	return buf.String()
}

// openInlineHost opens a host on a fresh state dir under prof; Close is
// checked at cleanup, and so is that the inline modules' directory went
// with it.
func openInlineHost(t *testing.T, prof *policy.Profile) *host.Host {
	t.Helper()
	ctx := context.Background()
	sock, err := os.MkdirTemp("", "hi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	cfg := host.Config{StateDir: t.TempDir(), SidecarPath: sidecarPath, Policy: prof}
	cfg.Supervisor.SocketDir = sock
	h, err := host.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if entries, _ := os.ReadDir(sock); len(entries) > 0 {
			t.Errorf("left in the socket dir after Close: %v", entries)
		}
	})
	return h
}

func inlineProfile(f func(p *policy.Profile)) *policy.Profile {
	p := policy.Default()
	p.Dev.AllowInline = true
	if f != nil {
		f(p)
	}
	return p
}

// schemaManifest is a skill.toml whose tool acme.dev.t takes {"text":
// string} only, with caps added before its quotas.
func schemaManifest(caps string) string {
	return `manifest_version = 2
skill_id = "acme.dev"
name = "Dev"
version = "0.1.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.dev.t"
name = "t"
description = "copies its input"
input_schema = { type = "object", required = ["text"], additionalProperties = false, properties = { text = { type = "string" } } }
output_schema = { type = "object" }

` + caps + `
[capabilities.quotas]
wall_clock_timeout_ms = 5000

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`
}

// TestRunInlineRefusedByDefault checks that the default profile, and one
// that says allow_inline = false, refuse an inline run with
// inline_not_allowed naming the setting, before anything runs.
func TestRunInlineRefusedByDefault(t *testing.T) {
	for _, tt := range []struct {
		name string
		prof *policy.Profile
	}{
		{"default profile", nil},
		{"allow_inline false", policy.Default()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := openInlineHost(t, tt.prof)
			res, err := h.RunInline(context.Background(), host.InlineRunRequest{Module: testWasm(t, "echo"), ToolID: "dev.t", Input: json.RawMessage(`{}`)})
			if !errors.Is(err, host.ErrInlineNotAllowed) || errcode.Of(err) != "inline_not_allowed" || res != nil {
				t.Fatalf("RunInline: %v (code %s), %+v; want inline_not_allowed", err, errcode.Of(err), res)
			}
			if !strings.Contains(err.Error(), "[dev] allow_inline = true") {
				t.Fatalf("the refusal does not name the setting: %v", err)
			}
			if sts, _ := h.Sidecars(context.Background()); len(sts) != 0 {
				t.Fatalf("a sidecar was started: %+v", sts)
			}
		})
	}
}

// TestRunInline runs modules inline under a profile that allows it: the
// default manifest, a skill.toml with schemas (bad input is invalid_input
// before the sidecar), the limits on the module, and the profile's
// judgment of the manifest.
func TestRunInline(t *testing.T) {
	ctx := context.Background()
	h := openInlineHost(t, inlineProfile(func(p *policy.Profile) { p.HTTP.AllowedHosts = []string{"api.example.com"} }))
	echo := testWasm(t, "echo")

	res, err := h.RunInline(ctx, host.InlineRunRequest{Module: echo, ModuleName: "echo.wasm", ToolID: "dev.t", Input: json.RawMessage(`{"any": [1, 2]}`)})
	if err != nil {
		t.Fatalf("RunInline with the default manifest: %v", err)
	}
	if echoed(t, res.Output) != `{"any":[1,2]}` || res.SkillID != "dev:dev.inline" || !strings.HasPrefix(res.Version, host.InlineVersionPrefix) || res.ToolID != "dev.t" || res.SidecarPID == 0 {
		t.Fatalf("result %+v", res)
	}
	// The same module again reuses its sidecar.
	again, err := h.RunInline(ctx, host.InlineRunRequest{Module: echo, ToolID: "dev.t", Input: json.RawMessage(`"x"`)})
	if err != nil || echoed(t, again.Output) != `"x"` || again.SidecarPID != res.SidecarPID || again.Version != res.Version {
		t.Fatalf("second run: %+v, %v; want output \"x\" in pid %d", again, err, res.SidecarPID)
	}
	// Nothing was installed.
	if l, err := h.List(ctx, host.ListRequest{}); err != nil || l.Count != 0 {
		t.Fatalf("list after inline runs: %+v, %v", l, err)
	}

	// The manifest's quotas bound the run: a loop runs out of fuel.
	loop := strings.Replace(schemaManifest(""), "wall_clock_timeout_ms = 5000", "wall_clock_timeout_ms = 5000\nfuel_budget = 100000", 1)
	if _, err := h.RunInline(ctx, host.InlineRunRequest{Module: testWasm(t, "loop"), Manifest: loop, ToolID: "acme.dev.t", Input: json.RawMessage(`{"text":""}`)}); errcode.Of(err) != "fuel_exhausted" || host.CallResultOf(err) == nil {
		t.Fatalf("a loop under a 100000 fuel budget: %v (code %s), want fuel_exhausted with the result", err, errcode.Of(err))
	}

	tooBig := append(append([]byte{}, echo...), make([]byte, host.MaxInlineModuleBytes)...)
	for _, tt := range []struct {
		name string
		req  host.InlineRunRequest
		code string
	}{
		{"schema accepts", host.InlineRunRequest{Module: echo, Manifest: schemaManifest(""), ToolID: "acme.dev.t", Input: json.RawMessage(`{"text":"hi"}`)}, ""},
		{"schema refuses", host.InlineRunRequest{Module: echo, Manifest: schemaManifest(""), ToolID: "acme.dev.t", Input: json.RawMessage(`{"text":7}`)}, "invalid_input"},
		{"unknown tool", host.InlineRunRequest{Module: echo, Manifest: schemaManifest(""), ToolID: "acme.dev.nope", Input: json.RawMessage(`{}`)}, "unknown_tool"},
		{"no tool", host.InlineRunRequest{Module: echo}, "bad_request"},
		{"no publisher in the tool id", host.InlineRunRequest{Module: echo, ToolID: "t"}, "bad_request"},
		{"empty module", host.InlineRunRequest{ToolID: "dev.t"}, "bad_request"},
		{"a .wat is not a module", host.InlineRunRequest{Module: []byte("(module)"), ModuleName: "m.wat", ToolID: "dev.t"}, "bad_request"},
		{"module over the artifact's module cap", host.InlineRunRequest{Module: tooBig, ModuleName: "big.wasm", ToolID: "dev.t"}, "artifact_entry_too_large"},
		{"input over the cap", host.InlineRunRequest{Module: echo, ToolID: "dev.t", Input: json.RawMessage(`"` + strings.Repeat("a", host.MaxInputBytes) + `"`)}, "input_too_large"},
		{"host outside the profile", host.InlineRunRequest{Module: echo, Manifest: schemaManifest("[capabilities]\nhttp_egress_allowlist = [\"evil.example.org\"]\n"), ToolID: "acme.dev.t", Input: json.RawMessage(`{"text":"hi"}`)}, "policy_violation"},
		{"invalid manifest", host.InlineRunRequest{Module: echo, Manifest: "skill_id = 3", ToolID: "dev.t"}, "manifest_parse"},
		// An approval is bound to an installed version: an inline tool
		// that needs one is refused, never run (Palyra: "approval
		// required" without an approval channel).
		{"tool needs approval", host.InlineRunRequest{Module: echo, Manifest: schemaManifest("[entrypoints.tools.risk]\nrequires_approval = true\n"), ToolID: "acme.dev.t", Input: json.RawMessage(`{"text":"hi"}`)}, "inline_needs_approval"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := h.RunInline(ctx, tt.req)
			if code := errcode.Of(err); code != tt.code {
				t.Fatalf("RunInline: code %q (%v), want %q", code, err, tt.code)
			}
			if tt.code == "" && echoed(t, res.Output) != string(tt.req.Input) {
				t.Fatalf("output %s, want %s", res.Output, tt.req.Input)
			}
			if tt.code == "artifact_entry_too_large" {
				var ae *artifact.Error
				if !errors.As(err, &ae) || ae.Limit != host.MaxInlineModuleBytes || ae.Actual != int64(len(tooBig)) || !strings.Contains(err.Error(), "big.wasm") {
					t.Fatalf("the limit error does not name the limit and the module: %v", err)
				}
			}
		})
	}
}

// TestRunInlineGrants runs the module that reads storage key "k" through
// storage handle 30000 inline and installed, under the same manifests: it
// gets the same answer both ways, not_granted when the manifest asks for
// no storage (the default manifest too), a storage answer when it does.
func TestRunInlineGrants(t *testing.T) {
	ctx := context.Background()
	h := openInlineHost(t, inlineProfile(nil))
	mod := testWasm(t, "capability")
	key := testskill.Key(7)
	for i, tt := range []struct {
		name, caps string
		granted    bool
	}{
		{"no storage asked", "", false},
		{"storage asked", "[capabilities.filesystem]\nwrite_roots = [\"counters\"]\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := "acme.grant" + string(rune('a'+i))
			m := strings.ReplaceAll(schemaManifest(tt.caps), "acme.dev", id)
			m = strings.Replace(m, `required = ["text"], additionalProperties = false, `, "", 1)
			if _, err := h.Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, strings.Replace(m, `publisher = "acme"`, `publisher = "acme"`, 1), mod, key), AllowTOFU: true}); err != nil {
				t.Fatal(err)
			}
			installed, err := h.Call(ctx, host.CallRequest{SkillID: id, ToolID: id + ".t", Input: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatalf("installed call: %v", err)
			}
			inline, err := h.RunInline(ctx, host.InlineRunRequest{Module: mod, Manifest: m, ToolID: id + ".t", Input: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatalf("inline run: %v", err)
			}
			if !bytes.Equal(installed.Output, inline.Output) {
				t.Fatalf("installed output %s, inline %s", installed.Output, inline.Output)
			}
			if got := bytes.Contains(inline.Output, []byte(`"not_granted"`)); got == tt.granted {
				t.Fatalf("output %s: granted %v, want %v", inline.Output, !got, tt.granted)
			}
			if inline.SkillID != "dev:"+id {
				t.Fatalf("inline skill id %q, want its own key space dev:%s", inline.SkillID, id)
			}
		})
	}
	res, err := h.RunInline(ctx, host.InlineRunRequest{Module: mod, ToolID: "dev.t"})
	if err != nil || !bytes.Contains(res.Output, []byte(`"not_granted"`)) {
		t.Fatalf("default manifest: %s, %v; want not_granted", res.Output, err)
	}
}

// TestRunInlineRebuild checks that a new module under the same skill id
// stops the previous module's sidecar at once.
func TestRunInlineRebuild(t *testing.T) {
	ctx := context.Background()
	h := openInlineHost(t, inlineProfile(nil))
	first, err := h.RunInline(ctx, host.InlineRunRequest{Module: testWasm(t, "echo"), ToolID: "dev.t", Input: json.RawMessage(`1`)})
	if err != nil {
		t.Fatal(err)
	}
	// The same module with a custom section appended: another build.
	rebuilt := append(testWasm(t, "echo"), 0, 2, 1, 'x')
	second, err := h.RunInline(ctx, host.InlineRunRequest{Module: rebuilt, ToolID: "dev.t", Input: json.RawMessage(`2`)})
	if err != nil {
		t.Fatal(err)
	}
	if echoed(t, second.Output) != "2" || second.Version == first.Version || second.SidecarPID == first.SidecarPID {
		t.Fatalf("the rebuild ran as %s in pid %d, as the first module (%s, pid %d)", second.Version, second.SidecarPID, first.Version, first.SidecarPID)
	}
	sts, err := h.Sidecars(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if st.SkillID == first.SkillID && st.Version == first.Version && st.PID != 0 {
			t.Fatalf("the replaced module's sidecar still runs: %+v", st)
		}
	}
}
