// Package servicetest is the conformance suite of host.Service: one table of
// cases, every verb with its success and its error codes, that runs against
// any implementation. The local host and the daemon's client (talking to a
// real palyra-host process) both run it, and must give the same results and
// the same error codes; a verb added to the Service gets its cases here.
package servicetest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/testskill"
)

// Publisher is the publisher every artifact of the suite is signed as; Key
// is its key. Implementations under test start with an empty state dir:
// the first install pins the key (trust on first use).
const Publisher = "conf"

// Key signs every artifact of the suite.
var Key = testskill.Key(42)

// otherKey signs the artifacts of an untrusted publisher.
var otherKey = testskill.Key(43)

// Case is one conformance case: it runs against a Service and returns the
// code of the error it ends with ("" for success) and what it observed.
// Cases run in order and share the service's state: each one names the
// skills it uses.
type Case struct {
	Name string
	// Code is the error code the case must end with ("" = success).
	Code string
	Run  func(ctx context.Context, t *testing.T, s host.Service) error
}

// Count is the number of cases in the suite.
func Count() int { return len(cases()) }

// Run runs every case against s, in order, each as a subtest, and returns
// the codes observed by case name (for comparing two implementations).
func Run(t *testing.T, s host.Service) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, c := range cases() {
		t.Run(c.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(host.WithPrincipal(context.Background(), "conformance"), time.Minute)
			defer cancel()
			err := c.Run(ctx, t, s)
			code := errcode.Of(err)
			got[c.Name] = code
			if code != c.Code {
				t.Fatalf("code %q, want %q (error: %v)", code, c.Code, err)
			}
			if c.Code != "" {
				// Whatever its origin, the error matches the one sentinel
				// of its code.
				if s := errcode.Lookup(c.Code); s == nil || !errors.Is(err, s) {
					t.Fatalf("errors.Is(%v, sentinel of %s) is false", err, c.Code)
				}
			}
		})
	}
	return got
}

func repoFile(t *testing.T, rel string) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// artifact builds a skill with one tool, conf.echo, that copies its input
// (testdata/wasm/echo.wat), signed by key.
func artifact(t *testing.T, id, version, publisher string, key ed25519.PrivateKey) []byte {
	t.Helper()
	return artifactWith(t, id, version, publisher, key, "echo")
}

// artifactWith is artifact with the module testdata/wasm/<module>.wasm.
func artifactWith(t *testing.T, id, version, publisher string, key ed25519.PrivateKey, module string) []byte {
	t.Helper()
	return artifactWall(t, id, version, publisher, key, module, 5000)
}

// artifactWall is artifactWith asking for a wall-clock timeout of wallMS
// (more than the 5000 of the others is a capability escalation).
func artifactWall(t *testing.T, id, version, publisher string, key ed25519.PrivateKey, module string, wallMS int) []byte {
	t.Helper()
	return testskill.Build(t, echoManifest(id, version, publisher, wallMS, ""), repoFile(t, "testdata/wasm/"+module+".wasm"), key)
}

// artifactReview is artifact as dynamic tool builder output with the
// given review_status.
func artifactReview(t *testing.T, id, version, reviewStatus string) []byte {
	t.Helper()
	builder := fmt.Sprintf(`
[builder]
experimental = true
source_kind = "prompt"
source_ref = "conformance"
rollout_flag = "conformance_builder"
review_status = %q

[builder.checklist]
capability_declaration_path = "skill.toml"
provenance_path = "provenance.json"
test_harness_path = "tests/harness.json"
`, reviewStatus)
	return testskill.Build(t, echoManifest(id, version, Publisher, 5000, builder), repoFile(t, "testdata/wasm/echo.wasm"), Key)
}

// echoManifest is the skill.toml of the conformance echo skill, with a
// wall-clock timeout of wallMS and extra TOML appended (or "").
func echoManifest(id, version, publisher string, wallMS int, extra string) string {
	return fmt.Sprintf(`manifest_version = 2
skill_id = %q
name = "Conformance echo"
version = %q
publisher = %q

[[entrypoints.tools]]
id = "%s.echo"
name = "echo"
description = "Copies its input"
input_schema = { type = "object", properties = { text = { type = "string" } } }
output_schema = { type = "object" }

[capabilities.quotas]
wall_clock_timeout_ms = %d

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`, id, version, publisher, publisher, wallMS) + extra
}

func install(ctx context.Context, t *testing.T, s host.Service, id string) error {
	res, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, id, "1.0.0", Publisher, Key), AllowTOFU: true})
	if err != nil {
		return err
	}
	if !res.Installed || res.Status != "active" || res.SkillID != id || res.Version != "1.0.0" {
		t.Fatalf("install: %+v", res)
	}
	return nil
}

func call(ctx context.Context, s host.Service, id, input string) (*host.CallResult, error) {
	return s.Call(ctx, host.CallRequest{SkillID: id, ToolID: "conf.echo", Input: json.RawMessage(input)})
}

func expectEcho(t *testing.T, res *host.CallResult, err error, want string) error {
	t.Helper()
	if err != nil {
		return err
	}
	// The echo tool copies its whole input envelope (sdk/ABI.md §3).
	var got struct {
		Input   any    `json:"input"`
		SkillID string `json:"skill_id"`
	}
	var exp any
	if json.Unmarshal(res.Output, &got) != nil || json.Unmarshal([]byte(want), &exp) != nil || !jsonEqual(got.Input, exp) || got.SkillID != res.SkillID {
		t.Fatalf("output %s, want %s", res.Output, want)
	}
	if res.InvocationID == "" || res.Version != "1.0.0" || res.ToolID != "conf.echo" {
		t.Fatalf("call result %+v", res)
	}
	return nil
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

const (
	skillA   = "conf.alpha"  // installed first; quarantined, enabled, disabled
	skillB   = "conf.beta"   // removed at the end
	skillU   = "conf.gamma"  // upgraded last: a failing 1.1.0 is held back
	skillR   = "conf.delta"  // signed by the publisher's rotated key
	skillRev = "conf.review" // builder output awaiting review
	skillH   = "conf.hooked" // run by hook bindings: removed only with force
)

// lowWallClock is a profile whose wall-clock cap is below what the
// suite's manifests ask for.
const lowWallClock = "[quotas]\nmax_wall_clock_ms = 1000\n"

// rotatedKey is the suite publisher's key after rotate_trust, and
// rotatedAt when that statement was issued.
var (
	rotatedKey = testskill.Key(44)
	rotatedAt  = time.Now().Add(-time.Minute).Truncate(time.Millisecond)
)

// rotation makes a signed rotation statement moving publisher from oldKey
// to newKey.
func rotation(t *testing.T, publisher string, oldKey, newKey ed25519.PrivateKey, at time.Time) *trust.Rotation {
	t.Helper()
	r, err := trust.NewRotation(publisher, oldKey, newKey, at, "conformance")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func marshalRotation(t *testing.T, r *trust.Rotation) []byte {
	t.Helper()
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// callVersion calls skillU and checks the version that served.
func callVersion(ctx context.Context, t *testing.T, s host.Service, want string) {
	t.Helper()
	res, err := call(ctx, s, skillU, `{"text":"up"}`)
	if err != nil || res.Version != want {
		t.Fatalf("call %s: %+v, %v; want version %s serving", skillU, res, err, want)
	}
}

func cases() []Case {
	cs := baseCases()
	// The referential integrity cases run once skillB is gone, before the
	// upgrade cases.
	i := slices.IndexFunc(cs, func(c Case) bool { return c.Name == "remove_unknown_skill" })
	return slices.Insert(cs, i+1, append(refintCases(), approvalCases()...)...)
}

func baseCases() []Case {
	return append([]Case{
		{Name: "install", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			if err := install(ctx, t, s, skillA); err != nil {
				return err
			}
			return install(ctx, t, s, skillB)
		}},
		{Name: "install_again_without_force", Code: "already_installed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			return install(ctx, t, s, skillA)
		}},
		{Name: "install_untrusted_publisher", Code: "untrusted_publisher", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, "other.untrusted", "1.0.0", "other", otherKey)})
			return err
		}},
		{Name: "install_changed_publisher_key", Code: "tofu_key_mismatch", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, "conf.impostor", "1.0.0", Publisher, otherKey), AllowTOFU: true})
			return err
		}},
		{Name: "install_not_a_zip", Code: "invalid_zip", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Install(ctx, host.InstallRequest{Artifact: []byte("this is not a zip archive")})
			return err
		}},
		{Name: "list", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			l, err := s.List(ctx, host.ListRequest{})
			if err != nil {
				return err
			}
			var ids []string
			for _, e := range l.Entries {
				ids = append(ids, e.SkillID+"@"+e.Version+":"+e.Status)
			}
			slices.Sort(ids)
			if want := []string{skillA + "@1.0.0:active", skillB + "@1.0.0:active"}; !slices.Equal(ids, want) || l.Count != 2 {
				t.Fatalf("list: %v (count %d), want %v", ids, l.Count, want)
			}
			return nil
		}},
		{Name: "list_filtered", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			l, err := s.List(ctx, host.ListRequest{SkillID: skillB})
			if err != nil {
				return err
			}
			if l.Count != 1 || l.Entries[0].SkillID != skillB {
				t.Fatalf("list %s: %+v", skillB, l.Entries)
			}
			return nil
		}},
		{Name: "info", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			i, err := s.Info(ctx, host.SkillRef{SkillID: skillA})
			if err != nil {
				return err
			}
			if i.Inventory.SkillID != skillA || i.Inventory.Version != "1.0.0" || len(i.Manifest) == 0 {
				t.Fatalf("info: %+v", i.Inventory)
			}
			return nil
		}},
		{Name: "info_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Info(ctx, host.SkillRef{SkillID: "conf.nope"})
			return err
		}},
		{Name: "info_unknown_version", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Info(ctx, host.SkillRef{SkillID: skillA, Version: "9.9.9"})
			return err
		}},
		{Name: "verify", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Verify(ctx, host.SkillRef{SkillID: skillA})
			return err
		}},
		{Name: "verify_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Verify(ctx, host.SkillRef{SkillID: "conf.nope"})
			return err
		}},
		{Name: "audit", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r, err := s.Audit(ctx, host.SkillRef{SkillID: skillA})
			if err == nil && !r.Passed {
				t.Fatalf("audit did not pass: %+v", r)
			}
			return err
		}},
		{Name: "audit_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Audit(ctx, host.SkillRef{SkillID: "conf.nope"})
			return err
		}},
		{Name: "call", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := call(ctx, s, skillA, `{"text":"hi"}`)
			return expectEcho(t, res, err, `{"text":"hi"}`)
		}},
		{Name: "call_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, "conf.nope", `{}`)
			return err
		}},
		{Name: "call_unknown_tool", Code: "unknown_tool", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Call(ctx, host.CallRequest{SkillID: skillA, ToolID: "conf.nope", Input: json.RawMessage(`{}`)})
			return err
		}},
		{Name: "call_invalid_input", Code: "invalid_input", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, skillA, `{"text":7}`)
			return err
		}},
		{Name: "call_input_too_large", Code: "input_too_large", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			// One byte over the ABI's limit, refused on the trusted side.
			in := `{"text":"` + strings.Repeat("x", host.MaxInputBytes-10) + `"}`
			if len(in) != host.MaxInputBytes+1 {
				t.Fatalf("input of %d bytes", len(in))
			}
			_, err := call(ctx, s, skillA, in)
			if err != nil && !strings.Contains(err.Error(), fmt.Sprint(host.MaxInputBytes)) {
				t.Errorf("the error does not name the limit: %v", err)
			}
			return err
		}},
		{Name: "call_timeout_out_of_range", Code: "bad_request", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Call(ctx, host.CallRequest{SkillID: skillA, ToolID: "conf.echo", Input: json.RawMessage(`{}`), Timeout: host.MaxCallTimeout + time.Second})
			return err
		}},
		{Name: "tools", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			c, err := s.Tools(ctx)
			if err != nil {
				return err
			}
			var got []string
			for _, tl := range c.Tools {
				got = append(got, tl.SkillID+"/"+tl.Tool.ID)
			}
			if want := []string{skillA + "/conf.echo", skillB + "/conf.echo"}; !slices.Equal(got, want) || c.Generation == "" {
				t.Fatalf("tools %v (generation %q), want %v", got, c.Generation, want)
			}
			return nil
		}},
		{Name: "quarantine", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r, err := s.Quarantine(ctx, host.StatusRequest{SkillID: skillA, Reason: "conformance"})
			if err == nil && (r.Status != "quarantined" || !r.Changed || r.Principal != "conformance") {
				t.Fatalf("quarantine: %+v", r)
			}
			return err
		}},
		{Name: "call_quarantined", Code: "skill_quarantined", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, skillA, `{}`)
			return err
		}},
		{Name: "tools_leave_out_quarantined", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			c, err := s.Tools(ctx)
			if err != nil {
				return err
			}
			for _, tl := range c.Tools {
				if tl.SkillID == skillA {
					t.Fatalf("quarantined %s is in the catalog", skillA)
				}
			}
			return nil
		}},
		{Name: "enable", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r, err := s.Enable(ctx, host.EnableRequest{SkillID: skillA, Reason: "reviewed", Override: true})
			if err == nil && r.Status != "active" {
				t.Fatalf("enable: %+v", r)
			}
			if err != nil {
				return err
			}
			res, err := call(ctx, s, skillA, `{"text":"back"}`)
			return expectEcho(t, res, err, `{"text":"back"}`)
		}},
		{Name: "enable_quarantined_without_override", Code: "override_required", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			if _, err := s.Quarantine(ctx, host.StatusRequest{SkillID: skillB, Reason: "check override"}); err != nil {
				t.Fatal(err)
			}
			_, err := s.Enable(ctx, host.EnableRequest{SkillID: skillB})
			if _, err := s.Enable(ctx, host.EnableRequest{SkillID: skillB, Override: true}); err != nil {
				t.Fatal(err)
			}
			return err
		}},
		{Name: "enable_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Enable(ctx, host.EnableRequest{SkillID: "conf.nope"})
			return err
		}},
		{Name: "disable", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r, err := s.Disable(ctx, host.StatusRequest{SkillID: skillA, Reason: "maintenance"})
			if err == nil && r.Status != "disabled" {
				t.Fatalf("disable: %+v", r)
			}
			return err
		}},
		{Name: "call_disabled", Code: "skill_disabled", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, skillA, `{}`)
			return err
		}},
		{Name: "quarantine_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Quarantine(ctx, host.StatusRequest{SkillID: "conf.nope", Reason: "x"})
			return err
		}},
		{Name: "enable_again", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Enable(ctx, host.EnableRequest{SkillID: skillA, Reason: "done", Override: true})
			return err
		}},
		{Name: "sidecars", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			st, err := s.Sidecars(ctx)
			if err != nil {
				return err
			}
			for _, x := range st {
				if x.SkillID == skillA && x.Version == "1.0.0" {
					// Its sidecar ran: its hardening report crosses
					// every adapter (on by default).
					if x.Hardening == nil || !x.Hardening.Enabled || x.Hardening.Level() == "off" {
						t.Fatalf("sidecar of %s without its hardening report: %+v", skillA, x.Hardening)
					}
					return nil
				}
			}
			t.Fatalf("no sidecar state for %s: %+v", skillA, st)
			return nil
		}},
		{Name: "cluster_of_one", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			st, err := s.Cluster(ctx)
			if err != nil {
				return err
			}
			// Not clustered: the service is a cluster of one, itself,
			// live, with the skills its sidecars run (skillA's ran).
			if st.Clustered || st.Cluster != "" || st.StreamLast != 0 || len(st.Nodes) != 1 {
				t.Fatalf("cluster: %+v", st)
			}
			n := st.Nodes[0]
			if st.Node == "" || n.Name != st.Node || !n.Live || n.LastSeen.IsZero() || !slices.Contains(n.Skills, skillA) || n.SidecarsAlive < 0 {
				t.Fatalf("the node: %+v", n)
			}
			return nil
		}},
		{Name: "skill_metrics", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			m, err := s.SkillMetrics(ctx, skillA)
			if err != nil {
				return err
			}
			// call, call_unknown_tool, call_invalid_input,
			// call_timeout_out_of_range is refused before it is a call;
			// call_quarantined, enable's call, call_disabled.
			if m.SkillID != skillA || m.CallsTotal < 5 || m.ByCode["ok"] < 2 || m.ByCode["unknown_tool"] != 1 || m.ByCode["skill_quarantined"] != 1 {
				t.Fatalf("metrics: %+v", m)
			}
			return nil
		}},
		{Name: "skill_metrics_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SkillMetrics(ctx, "conf.nope")
			return err
		}},
		{Name: "submit_unknown_document", Code: "a2ui_document_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SubmitForm(ctx, host.SubmitRequest{DocumentID: "01J0000000000000000000000X", ComponentID: "f", Values: map[string]any{}})
			return err
		}},
		{Name: "bind_hook", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			b, err := s.BindHook(ctx, host.HookBinding{HookID: "conf.on-enable", Event: "skill:enabled", PluginID: skillB, ToolID: "conf.echo", Enabled: true})
			if err == nil && (b.HookID != "conf.on-enable" || b.Operator.UpdatedBy != "conformance") {
				t.Fatalf("bind: %+v", b)
			}
			return err
		}},
		{Name: "bind_hook_bad_event", Code: "invalid_hook_binding", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.BindHook(ctx, host.HookBinding{HookID: "conf.bad", Event: "no such event!", PluginID: skillB, Enabled: true})
			return err
		}},
		{Name: "hooks", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			bs, err := s.Hooks(ctx)
			if err != nil {
				return err
			}
			if len(bs) != 1 || bs[0].HookID != "conf.on-enable" || !bs[0].Enabled {
				t.Fatalf("hooks: %+v", bs)
			}
			return nil
		}},
		{Name: "fire_hooks", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r, err := s.FireHooks(ctx, host.FireRequest{Event: "skill:enabled", Payload: json.RawMessage(`{"skill_id":"x"}`)})
			if err != nil {
				return err
			}
			if r.Event != "skill:enabled" || len(r.Outcomes) != 1 || r.Outcomes[0].HookID != "conf.on-enable" || r.Outcomes[0].Err != "" {
				t.Fatalf("fire: %+v", r)
			}
			return nil
		}},
		{Name: "fire_hooks_bad_event", Code: "unknown_hook_event", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.FireHooks(ctx, host.FireRequest{Event: "no such event!"})
			return err
		}},
		{Name: "disable_hook", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			b, err := s.SetHookEnabled(ctx, "conf.on-enable", false)
			if err == nil && b.Enabled {
				t.Fatalf("hook still enabled: %+v", b)
			}
			return err
		}},
		{Name: "enable_unknown_hook", Code: "hook_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SetHookEnabled(ctx, "conf.nope", true)
			return err
		}},
		{Name: "remove_hook", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			return s.RemoveHook(ctx, "conf.on-enable")
		}},
		{Name: "remove_unknown_hook", Code: "hook_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			return s.RemoveHook(ctx, "conf.on-enable")
		}},
		{Name: "bind_run_hook_on_failure", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			// Disabled: the suite's calls must not run it.
			b, err := s.BindHook(ctx, host.HookBinding{HookID: "conf.run-gate", Event: "run:before_tool", PluginID: skillB, ToolID: "conf.echo", OnFailure: "open", Enabled: false})
			if err != nil {
				return err
			}
			if b.OnFailure != "open" || b.Enabled {
				t.Fatalf("bind: %+v", b)
			}
			bs, err := s.Hooks(ctx)
			if err != nil {
				return err
			}
			if len(bs) != 1 || bs[0].OnFailure != "open" || bs[0].EffectiveOnFailure() != "open" {
				t.Fatalf("hooks: %+v", bs)
			}
			return s.RemoveHook(ctx, "conf.run-gate")
		}},
		{Name: "bind_hook_on_failure_on_notification", Code: "invalid_hook_binding", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.BindHook(ctx, host.HookBinding{HookID: "conf.bad", Event: "skill:enabled", PluginID: skillB, OnFailure: "closed", Enabled: true})
			return err
		}},
		{Name: "events_replay", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			var kinds []string
			err := s.Events(ctx, host.EventsRequest{After: 0}, func(e host.Event) error {
				if e.SkillID == skillA {
					kinds = append(kinds, e.Kind)
				}
				return nil
			})
			if err != nil {
				return err
			}
			// The calls the earlier cases made of the quarantined and the
			// disabled version were refused, and journaled (call_refused).
			want := "skill:installed skill:verified skill:quarantined skill:call_refused skill:enabled skill:disabled skill:call_refused skill:enabled"
			if got := strings.Join(kinds, " "); got != want {
				t.Fatalf("events of %s: %q, want %q", skillA, got, want)
			}
			return nil
		}},
		{Name: "reaudit", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r, err := s.Reaudit(ctx)
			if err == nil && (r.Checked != 2 || r.Quarantined != 0) {
				t.Fatalf("reaudit: %+v", r)
			}
			return err
		}},
		{Name: "remove", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r, err := s.Remove(ctx, host.RemoveRequest{SkillID: skillB, PurgeStorage: true})
			if err == nil && (!r.StoragePurged || r.Current != "") {
				t.Fatalf("remove: %+v", r)
			}
			return err
		}},
		{Name: "call_removed", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, skillB, `{}`)
			return err
		}},
		{Name: "remove_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Remove(ctx, host.RemoveRequest{SkillID: skillB})
			return err
		}},
		{Name: "upgrade_failing_audit_held_back", Code: "audit_failed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			if _, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, skillU, "1.0.0", Publisher, Key)}); err != nil {
				t.Fatal(err)
			}
			callVersion(ctx, t, s, "1.0.0")
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifactWith(t, skillU, "1.1.0", Publisher, Key, "wasi_path_open")})
			if res != nil && (res.Current || res.HeldBack == nil || res.HeldBack.Code != "audit_failed") {
				t.Fatalf("install 1.1.0: %+v", res)
			}
			callVersion(ctx, t, s, "1.0.0") // the active version keeps serving
			return err
		}},
		{Name: "info_shows_held_back", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			i, err := s.Info(ctx, host.SkillRef{SkillID: skillU})
			if err != nil {
				return err
			}
			if i.Inventory.Version != "1.0.0" || len(i.HeldBack) != 1 || i.HeldBack[0].Version != "1.1.0" ||
				i.HeldBack[0].Code != "audit_failed" || i.HeldBack[0].Message == "" || i.HeldBack[0].Status != "quarantined" {
				t.Fatalf("info: version %s, held back %+v", i.Inventory.Version, i.HeldBack)
			}
			return nil
		}},
		{Name: "enable_held_back_version_fails_its_checks", Code: "audit_failed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Enable(ctx, host.EnableRequest{SkillID: skillU, Version: "1.1.0", Reason: "try", Override: true})
			callVersion(ctx, t, s, "1.0.0")
			return err
		}},
		{Name: "upgrade_after_held_back", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, skillU, "1.2.0", Publisher, Key)})
			if err != nil {
				return err
			}
			if !res.Current || res.HeldBack != nil {
				t.Fatalf("install 1.2.0: %+v", res)
			}
			callVersion(ctx, t, s, "1.2.0")
			_, err = s.Remove(ctx, host.RemoveRequest{SkillID: skillU})
			return err
		}},
		// Review status: builder output awaiting review is held quarantined
		// until approved; enable alone does not lift the hold.
		{Name: "install_review_pending", Code: "review_pending", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifactReview(t, skillRev, "1.0.0", "pending")})
			if res == nil || !res.Installed || res.Status != "quarantined" ||
				!slices.ContainsFunc(res.Reasons, func(r string) bool { return strings.HasPrefix(r, "review_pending") }) {
				t.Fatalf("install: %+v", res)
			}
			ls, lerr := s.List(ctx, host.ListRequest{SkillID: skillRev})
			if lerr != nil || len(ls.Entries) != 1 || !ls.Entries[0].ReviewPending {
				t.Fatalf("list: %+v, %v", ls, lerr)
			}
			return err
		}},
		{Name: "enable_review_pending", Code: "review_pending", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Enable(ctx, host.EnableRequest{SkillID: skillRev, Reason: "try", Override: true})
			if _, cerr := call(ctx, s, skillRev, `{}`); !errors.Is(cerr, host.ErrQuarantined) {
				t.Fatalf("call of a version awaiting review: %v", cerr)
			}
			return err
		}},
		{Name: "approve_review_without_reason", Code: "inventory_invalid_argument", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.ApproveReview(ctx, host.ReviewRequest{SkillID: skillRev, Version: "1.0.0"})
			return err
		}},
		{Name: "approve_review_unknown", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.ApproveReview(ctx, host.ReviewRequest{SkillID: "conf.nope", Reason: "x"})
			return err
		}},
		{Name: "approve_review", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.ApproveReview(ctx, host.ReviewRequest{SkillID: skillRev, Version: "1.0.0", Reason: "checklist read"})
			if err != nil {
				return err
			}
			if res.Status != "active" || !res.Changed || res.Principal != "conformance" {
				t.Fatalf("approve: %+v", res)
			}
			approved := false
			err = s.Events(ctx, host.EventsRequest{After: 0}, func(ev host.Event) error {
				approved = approved || (ev.Kind == "skill:review_approved" && ev.SkillID == skillRev &&
					ev.Principal == "conformance" && ev.Reason == "checklist read")
				return nil
			})
			if err != nil {
				return err
			}
			if !approved {
				t.Fatal("the journal has no skill:review_approved by conformance with the reason")
			}
			_, err = call(ctx, s, skillRev, `{"text":"ok"}`)
			return err
		}},
		{Name: "approve_review_not_pending", Code: "review_not_pending", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.ApproveReview(ctx, host.ReviewRequest{SkillID: skillRev, Reason: "again"})
			if _, rerr := s.Remove(ctx, host.RemoveRequest{SkillID: skillRev}); rerr != nil {
				t.Fatal(rerr)
			}
			return err
		}},
		// Key rotation: the last cases, since the suite's publisher then
		// signs with rotatedKey.
		{Name: "rotate_trust_not_a_statement", Code: "invalid_rotation", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.RotateTrust(ctx, host.RotateTrustRequest{Statement: []byte(`{"schema_version":1}`)})
			return err
		}},
		{Name: "rotate_trust_bad_signature", Code: "rotation_signature_invalid", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			r := rotation(t, Publisher, Key, rotatedKey, rotatedAt)
			r.NewKeySignature = append([]byte(nil), r.OldKeySignature...)
			_, err := s.RotateTrust(ctx, host.RotateTrustRequest{Statement: marshalRotation(t, r)})
			return err
		}},
		{Name: "rotate_trust_unknown_publisher", Code: "rotation_not_applicable", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.RotateTrust(ctx, host.RotateTrustRequest{Statement: marshalRotation(t, rotation(t, "nobody", otherKey, rotatedKey, rotatedAt))})
			return err
		}},
		{Name: "rotate_trust", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			stmt := marshalRotation(t, rotation(t, Publisher, Key, rotatedKey, rotatedAt))
			res, err := s.RotateTrust(ctx, host.RotateTrustRequest{Statement: stmt})
			if err != nil {
				return err
			}
			if res.Publisher != Publisher || res.Outcome != "tofu_pin_moved" || len(res.StatementSHA256) != 64 {
				t.Fatalf("rotate: %+v", res)
			}
			// Applying it again changes nothing.
			if res, err = s.RotateTrust(ctx, host.RotateTrustRequest{Statement: stmt}); err != nil || res.Outcome != "already_applied" {
				t.Fatalf("rotate again: %+v, %v", res, err)
			}
			return nil
		}},
		{Name: "install_signed_by_the_rotated_key", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, skillR, "1.0.0", Publisher, rotatedKey)})
			if err != nil {
				return err
			}
			if !res.Installed || res.Status != "active" {
				t.Fatalf("install: %+v", res)
			}
			if res, err := call(ctx, s, skillR, `{"text":"rotated"}`); err != nil || res.Version != "1.0.0" {
				t.Fatalf("call %s: %+v, %v", skillR, res, err)
			}
			return nil
		}},
		{Name: "install_signed_by_the_old_key_after_rotation", Code: "tofu_key_mismatch", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, skillR, "1.1.0", Publisher, Key), AllowTOFU: true})
			return err
		}},
		{Name: "rotate_trust_replayed", Code: "rotation_replayed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			// Back to the old key, but dated before the applied statement.
			stmt := marshalRotation(t, rotation(t, Publisher, rotatedKey, Key, rotatedAt.Add(-time.Hour)))
			_, err := s.RotateTrust(ctx, host.RotateTrustRequest{Statement: stmt})
			return err
		}},
		// The operator policy: the suite's manifests ask for a wall-clock
		// timeout of 5000 ms.
		{Name: "set_policy_invalid", Code: "invalid_policy_profile", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte("[quotas]\nmax_wall_clock = 1000\n")})
			return err
		}},
		{Name: "set_policy_lowers_a_cap", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte(lowWallClock)})
			if err != nil {
				return err
			}
			if len(res.SHA256) != 64 || res.Summary.MaxWallClockMS != 1000 {
				t.Fatalf("set policy: %+v", res)
			}
			st, err := s.Cluster(ctx)
			if err != nil {
				return err
			}
			if got := st.Nodes[0].PolicySHA256; got != res.SHA256 {
				t.Fatalf("cluster reports policy %s, SetPolicy gave %s", got, res.SHA256)
			}
			return nil
		}},
		{Name: "call_outside_the_new_policy", Code: "policy_violation", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, skillR, `{"text":"capped"}`)
			return err
		}},
		{Name: "set_policy_back", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			if _, err := s.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte("[quotas]\nmax_wall_clock_ms = 60000\n")}); err != nil {
				return err
			}
			_, err := call(ctx, s, skillR, `{"text":"uncapped"}`)
			return err
		}},
	}, append(append(inlineCases(), registryCases()...), configCases()...)...)
}

// inlineManifest is the skill.toml of the inline cases: tool
// conf.inline.echo takes {"text": string} only.
const inlineManifest = `manifest_version = 2
skill_id = "conf.inline"
name = "Conformance inline"
version = "0.1.0"
publisher = "conf"

[[entrypoints.tools]]
id = "conf.inline.echo"
name = "echo"
description = "Copies its input"
input_schema = { type = "object", required = ["text"], additionalProperties = false, properties = { text = { type = "string" } } }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// inlineCases run inline modules (RunInline): refused under a profile
// that does not allow them, then, with [dev] allow_inline = true, under
// the checks of an installed skill; the profile is set back after.
func inlineCases() []Case {
	echo := func(t *testing.T) []byte { return repoFile(t, "testdata/wasm/echo.wasm") }
	return []Case{
		{Name: "run_inline_not_allowed", Code: "inline_not_allowed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.RunInline(ctx, host.InlineRunRequest{Module: echo(t), ToolID: "conf.t", Input: json.RawMessage(`{}`)})
			if err != nil && !strings.Contains(err.Error(), "allow_inline") {
				t.Fatalf("the refusal does not name the setting: %v", err)
			}
			if res != nil {
				t.Fatalf("a refused inline run has a result: %+v", res)
			}
			return err
		}},
		{Name: "set_policy_allow_inline", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte("[dev]\nallow_inline = true\n")})
			if err == nil && !res.Summary.AllowInline {
				t.Fatalf("the policy summary does not show allow_inline: %+v", res.Summary)
			}
			return err
		}},
		{Name: "run_inline", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.RunInline(ctx, host.InlineRunRequest{Module: echo(t), ModuleName: "echo.wasm", Manifest: inlineManifest, ToolID: "conf.inline.echo", Input: json.RawMessage(`{"text":"inline"}`), Timeout: 30 * time.Second})
			if err != nil {
				return err
			}
			var doc struct {
				Input struct{ Text string } `json:"input"`
			}
			if json.Unmarshal(res.Output, &doc) != nil || doc.Input.Text != "inline" || res.SkillID != "dev:conf.inline" || !strings.HasPrefix(res.Version, host.InlineVersionPrefix) {
				t.Fatalf("inline run: %+v (output %s)", res, res.Output)
			}
			// Nothing was installed.
			if _, err := s.Info(ctx, host.SkillRef{SkillID: "conf.inline"}); errcode.Of(err) != "skill_not_found" {
				t.Fatalf("info of the inline skill: %v, want skill_not_found", err)
			}
			return nil
		}},
		{Name: "run_inline_invalid_input", Code: "invalid_input", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.RunInline(ctx, host.InlineRunRequest{Module: echo(t), Manifest: inlineManifest, ToolID: "conf.inline.echo", Input: json.RawMessage(`{"text":1}`)})
			return err
		}},
		{Name: "run_inline_ungranted", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			// The default manifest grants nothing: the module's storage
			// call is refused as not granted, as for an installed skill.
			res, err := s.RunInline(ctx, host.InlineRunRequest{Module: repoFile(t, "testdata/wasm/capability.wasm"), ToolID: "conf.cap"})
			if err != nil {
				return err
			}
			if !strings.Contains(string(res.Output), `"not_granted"`) {
				t.Fatalf("ungranted storage call: output %s, want not_granted", res.Output)
			}
			return nil
		}},
		{Name: "run_inline_module_too_large", Code: "artifact_entry_too_large", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			big := append(echo(t), make([]byte, host.MaxInlineModuleBytes)...)
			_, err := s.RunInline(ctx, host.InlineRunRequest{Module: big, ToolID: "conf.t"})
			return err
		}},
		{Name: "set_policy_forbid_inline", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			if _, err := s.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte("[dev]\nallow_inline = false\n")}); err != nil {
				return err
			}
			_, err := s.RunInline(ctx, host.InlineRunRequest{Module: echo(t), ToolID: "conf.t"})
			if errcode.Of(err) != "inline_not_allowed" {
				t.Fatalf("inline run after the profile forbade it: %v, want inline_not_allowed", err)
			}
			return nil
		}},
		// The deny feed: last, since its re-audit judges every version.
		{Name: "deny_feed_none", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			info, err := s.DenyFeed(ctx)
			if err != nil {
				return err
			}
			if info.Installed || len(info.Entries) != 0 {
				t.Fatalf("no feed installed yet: %+v", info)
			}
			return nil
		}},
		{Name: "update_deny_feed_invalid", Code: "invalid_deny_feed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.UpdateDenyFeed(ctx, host.UpdateDenyFeedRequest{Feed: []byte(`{"payloadType":"text/plain"}`)})
			return err
		}},
		{Name: "update_deny_feed_untrusted", Code: "untrusted_deny_feed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.UpdateDenyFeed(ctx, host.UpdateDenyFeedRequest{Feed: denyFeed(t, 2, feedKey, deniedArtifact(t))})
			return err
		}},
		{Name: "update_deny_feed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: deniedArtifact(t)})
			if err != nil {
				return err
			}
			if res.Status != "active" {
				t.Fatalf("install %s: %+v", skillDenied, res)
			}
			up, err := s.UpdateDenyFeed(ctx, host.UpdateDenyFeedRequest{
				Feed:              denyFeed(t, 2, feedKey, deniedArtifact(t)),
				TrustedPublishers: []host.TrustedKey{{Publisher: feedIssuer, PublicKeyHex: hexKey(feedKey)}},
			})
			if err != nil {
				return err
			}
			if !up.Changed || up.Feed.Serial != 2 || up.Feed.Issuer != feedIssuer || up.PreviousSerial != 0 || up.Reaudit == nil {
				t.Fatalf("update: %+v", up)
			}
			denied := false
			for _, o := range up.Reaudit.Outcomes {
				denied = denied || (o.SkillID == skillDenied && o.Quarantined && strings.Contains(strings.Join(o.Reasons, " "), "conformance denial (https://example.test/conf)"))
			}
			if !denied {
				t.Fatalf("the re-audit did not quarantine %s with the feed's reason: %+v", skillDenied, up.Reaudit.Outcomes)
			}
			info, err := s.Info(ctx, host.SkillRef{SkillID: skillDenied})
			if err != nil {
				return err
			}
			if info.Inventory.Status != "quarantined" {
				t.Fatalf("%s after the feed: %+v", skillDenied, info.Inventory)
			}
			return nil
		}},
		{Name: "update_deny_feed_older", Code: "deny_feed_not_newer", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.UpdateDenyFeed(ctx, host.UpdateDenyFeedRequest{Feed: denyFeed(t, 1, feedKey, deniedArtifact(t))})
			return err
		}},
		{Name: "deny_feed_show", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			info, err := s.DenyFeed(ctx)
			if err != nil {
				return err
			}
			if !info.Installed || info.Serial != 2 || info.Issuer != feedIssuer || len(info.Entries) != 1 || info.UpdatedBy != "conformance" ||
				info.KeyID != hexKey(feedKey) || info.Error != "" {
				t.Fatalf("show: %+v", info)
			}
			return nil
		}},
		{Name: "install_denied_artifact", Code: "audit_failed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: deniedArtifact(t), Force: true})
			if res == nil || res.Status != "quarantined" || !strings.Contains(strings.Join(res.Reasons, " "), "conformance denial") {
				t.Fatalf("install of a denied module: %+v", res)
			}
			return err
		}},
	}
}

// skillDenied is installed with a module the deny feed then denies.
const skillDenied = "conf.denied"

// feedIssuer is the deny feed's issuer; feedKey signs its feeds.
const feedIssuer = "conf-security"

var feedKey = testskill.Key(45)

func hexKey(k ed25519.PrivateKey) string { return hex.EncodeToString(k.Public().(ed25519.PublicKey)) }

// deniedArtifact is the artifact of skillDenied that the deny feed denies
// (by its artifact_sha256: its module is the echo module every skill of
// the suite runs). The same inputs give the same bytes.
func deniedArtifact(t *testing.T) []byte {
	t.Helper()
	return artifact(t, skillDenied, "1.0.0", Publisher, rotatedKey)
}

// denyFeed is a deny feed of serial, signed by key, that denies the
// artifact art.
func denyFeed(t *testing.T, serial uint64, key ed25519.PrivateKey, art []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(art)
	data, err := feed.Sign(feed.Feed{SchemaVersion: 1, Issuer: feedIssuer, Serial: serial, IssuedAt: time.Now().UTC(), Entries: []feed.Entry{{
		Kind: feed.KindArtifactSHA256, Value: hex.EncodeToString(sum[:]), Reason: "conformance denial", Reference: "https://example.test/conf",
	}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
