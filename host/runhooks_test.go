package host_test

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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/testskill"
)

// hookModule is a WebAssembly module (sdk/ABI.md) whose entrypoint "run"
// writes output and returns exit: a hook tool that always makes the same
// decision, with output as its reason (a non-zero exit's output is its
// tool error document, {"code","message"}).
func hookModule(exit int32, output string) []byte {
	uleb := func(b []byte, v uint64) []byte {
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if v != 0 {
				b = append(b, c|0x80)
				continue
			}
			return append(b, c)
		}
	}
	sleb := func(b []byte, v int64) []byte {
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	name := func(b []byte, s string) []byte { return append(uleb(b, uint64(len(s))), s...) }
	section := func(b []byte, id byte, body []byte) []byte {
		return append(uleb(append(b, id), uint64(len(body))), body...)
	}
	m := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	// Types: 0 (i32 i32) -> i32 (output-write), 1 () -> i32 (run).
	m = section(m, 1, []byte{2, 0x60, 2, 0x7f, 0x7f, 1, 0x7f, 0x60, 0, 1, 0x7f})
	imp := name(name([]byte{1}, "palyra:skills/host@1"), "output-write")
	m = section(m, 2, append(imp, 0, 0))
	m = section(m, 3, []byte{1, 1})
	m = section(m, 5, []byte{1, 0, 1})
	exp := name([]byte{2}, "memory")
	exp = append(exp, 2, 0)
	exp = name(exp, "run")
	exp = append(exp, 0, 1)
	m = section(m, 7, exp)
	code := []byte{0, 0x41, 0, 0x41}
	code = sleb(code, int64(len(output)))
	code = append(code, 0x10, 0, 0x1a, 0x41)
	code = sleb(code, int64(exit))
	code = append(code, 0x0b)
	m = section(m, 10, append(uleb([]byte{1}, uint64(len(code))), code...))
	data := []byte{1, 0, 0x41, 0, 0x0b}
	data = append(uleb(data, uint64(len(output))), output...)
	return section(m, 11, data)
}

// hookSkills are the hook skills a run-hook test installs: id, exit
// code, output. hk.sleep sleeps 10 s (testdata/wasm/sleep.wasm).
var hookSkills = []struct {
	id     string
	exit   int32
	output string
}{
	{"acme.e0", 0, `{}`},
	{"acme.e10", 10, `{"code":"note","message":"r10"}`},
	{"acme.e20", 20, `{"code":"hold","message":"r20"}`},
	{"acme.e30", 30, `{"code":"nope","message":"r30"}`},
	{"acme.e40", 40, `{"code":"preview","message":"r40"}`},
	{"acme.e60", 60, `{"code":"broken","message":"r60"}`},
	{"acme.sleep", 0, ""},
}

// openRunHookHost opens a host with the echo example and the hook skills
// named (all of hookSkills when none is) installed; every hook outcome is
// recorded in the returned log.
func openRunHookHost(t testing.TB, skills ...string) (*host.Host, *outcomeLog) {
	h, log, _ := openRunHookHostIn(t, skills...)
	return h, log
}

// openRunHookHostIn is openRunHookHost; it returns the state dir too.
func openRunHookHostIn(t testing.TB, skills ...string) (*host.Host, *outcomeLog, string) {
	t.Helper()
	ctx := context.Background()
	state := t.TempDir()
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	log := &outcomeLog{}
	h, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: sidecarPath, OnHook: log.add, Supervisor: supervisor.Config{SocketDir: sock}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	data, keyHex, err := buildEcho()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: data, TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: keyHex}}}); err != nil {
		t.Fatal(err)
	}
	key := testskill.Key(24)
	trusted := []host.TrustedKey{{Publisher: "acme", PublicKeyHex: hex.EncodeToString(key.Public().(ed25519.PublicKey))}}
	sleep, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "sleep.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range hookSkills {
		if len(skills) > 0 && !slices.Contains(skills, s.id) {
			continue
		}
		mod := hookModule(s.exit, s.output)
		if s.id == "acme.sleep" {
			mod = sleep
		}
		art := testskill.Build(t, testskill.OneToolManifest(s.id, "1.0.0", ""), mod, key)
		if _, err := h.Install(ctx, host.InstallRequest{Artifact: art, TrustedPublishers: trusted}); err != nil {
			t.Fatalf("install %s: %v", s.id, err)
		}
	}
	return h, log, state
}

// outcomeLog records hook outcomes in the order they are reported.
type outcomeLog struct {
	mu   sync.Mutex
	outs []hooks.Outcome
}

func (l *outcomeLog) add(o hooks.Outcome) {
	l.mu.Lock()
	l.outs = append(l.outs, o)
	l.mu.Unlock()
}

// take returns the outcomes reported since the last take.
func (l *outcomeLog) take() []hooks.Outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	outs := l.outs
	l.outs = nil
	return outs
}

// bindRun binds one hook per binding, removing them at the end of the
// subtest.
func bindRun(t testing.TB, h *host.Host, bs ...host.HookBinding) {
	t.Helper()
	ctx := context.Background()
	for _, b := range bs {
		b.Enabled = true
		if b.ToolID == "" {
			b.ToolID = b.PluginID + ".t"
		}
		if _, err := h.BindHook(ctx, b); err != nil {
			t.Fatalf("bind %s: %v", b.HookID, err)
		}
		t.Cleanup(func() {
			if err := h.RemoveHook(ctx, b.HookID); err != nil {
				t.Errorf("remove hook %s: %v", b.HookID, err)
			}
		})
	}
}

const echoIn = `{"text":"hi"}`

func callEcho(h *host.Host) (*host.CallResult, error) {
	return h.Call(context.Background(), host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(echoIn)})
}

// TestRunHookDecisions is Palyra's decision table (facts §8) in the call
// path: each decision in each phase where it matters, decisions a phase
// does not allow (a failure of the hook), and fail-open against
// fail-closed, with real hook skills in real sidecars.
func TestRunHookDecisions(t *testing.T) {
	h, log := openRunHookHost(t)
	type want struct {
		code     string // "" for success
		hookID   string // the hook the error names
		reason   string // the reason the error carries
		output   bool   // the tool's output is delivered (in the result, also on an error)
		annots   []host.HookAnnotation
		preview  *host.HookPreview
		afterRun bool // run:after_run must have fired (checked with an extra after_run hook)
	}
	ann := func(id, ev, msg string) host.HookAnnotation {
		return host.HookAnnotation{HookID: id, Event: ev, Message: msg}
	}
	failed := func(id, ev, code string) host.HookAnnotation {
		return host.HookAnnotation{HookID: id, Event: ev, Code: code}
	}
	cases := []struct {
		name  string
		phase string
		skill string
		on    string
		ms    int64
		want  want
	}{
		{"before_run continue", hooks.EventRunBeforeRun, "acme.e0", "", 0, want{output: true}},
		{"before_run block", hooks.EventRunBeforeRun, "acme.e30", "", 0, want{code: "blocked_by_hook", hookID: "t.hook", reason: "r30"}},
		{"before_tool block", hooks.EventRunBeforeTool, "acme.e30", "", 0, want{code: "blocked_by_hook", hookID: "t.hook", reason: "r30", afterRun: true}},
		{"before_delivery block withholds the output", hooks.EventRunBeforeDelivery, "acme.e30", "", 0, want{code: "blocked_by_hook", hookID: "t.hook", reason: "r30"}},
		// A before phase's request holds the call as a pending approval
		// (TestRunHookApproval follows one to its approved run).
		{"before_run approval", hooks.EventRunBeforeRun, "acme.e20", "", 0, want{code: "approval_pending", hookID: "t.hook", reason: "r20"}},
		{"before_tool approval", hooks.EventRunBeforeTool, "acme.e20", "", 0, want{code: "approval_pending", hookID: "t.hook", reason: "r20"}},
		// After the tool ran there is nothing left to hold: the result is
		// withheld and the hook's request is the error.
		{"before_delivery approval", hooks.EventRunBeforeDelivery, "acme.e20", "", 0, want{code: "approval_requested_by_hook", hookID: "t.hook", reason: "r20"}},
		{"before_run annotate", hooks.EventRunBeforeRun, "acme.e10", "", 0, want{output: true, annots: []host.HookAnnotation{ann("t.hook", hooks.EventRunBeforeRun, "r10")}}},
		{"before_tool annotate", hooks.EventRunBeforeTool, "acme.e10", "", 0, want{output: true, annots: []host.HookAnnotation{ann("t.hook", hooks.EventRunBeforeTool, "r10")}}},
		{"after_tool annotate", hooks.EventRunAfterTool, "acme.e10", "", 0, want{output: true, annots: []host.HookAnnotation{ann("t.hook", hooks.EventRunAfterTool, "r10")}}},
		{"before_delivery annotate", hooks.EventRunBeforeDelivery, "acme.e10", "", 0, want{output: true, annots: []host.HookAnnotation{ann("t.hook", hooks.EventRunBeforeDelivery, "r10")}}},
		{"after_run annotate", hooks.EventRunAfterRun, "acme.e10", "", 0, want{output: true, annots: []host.HookAnnotation{ann("t.hook", hooks.EventRunAfterRun, "r10")}}},
		{"before_delivery transform_preview", hooks.EventRunBeforeDelivery, "acme.e40", "", 0, want{output: true, preview: &host.HookPreview{HookID: "t.hook", Text: "r40"}}},
		{"before_run fail_run", hooks.EventRunBeforeRun, "acme.e60", "", 0, want{code: "run_failed_by_hook", hookID: "t.hook", reason: "r60"}},
		{"after_tool fail_run withholds the output", hooks.EventRunAfterTool, "acme.e60", "", 0, want{code: "run_failed_by_hook", hookID: "t.hook", reason: "r60", afterRun: true}},
		// Decisions their phase does not allow: the hook failed.
		{"transform_preview in before_tool, closed by default", hooks.EventRunBeforeTool, "acme.e40", "", 0, want{code: "run_hook_failed", hookID: "t.hook", afterRun: true}},
		{"transform_preview in before_tool, open", hooks.EventRunBeforeTool, "acme.e40", "open", 0, want{output: true, annots: []host.HookAnnotation{failed("t.hook", hooks.EventRunBeforeTool, "hook_decision_not_allowed")}}},
		{"block in after_tool, open by default", hooks.EventRunAfterTool, "acme.e30", "", 0, want{output: true, annots: []host.HookAnnotation{failed("t.hook", hooks.EventRunAfterTool, "hook_decision_not_allowed")}}},
		{"block in after_tool, closed", hooks.EventRunAfterTool, "acme.e30", "closed", 0, want{code: "run_hook_failed", hookID: "t.hook", afterRun: true}},
		{"fail_run in after_run, open by default", hooks.EventRunAfterRun, "acme.e60", "", 0, want{output: true, annots: []host.HookAnnotation{failed("t.hook", hooks.EventRunAfterRun, "hook_decision_not_allowed")}}},
		{"approval in after_run, closed", hooks.EventRunAfterRun, "acme.e20", "closed", 0, want{code: "run_hook_failed", hookID: "t.hook"}},
		// Time limits.
		{"timeout in before_tool, closed by default", hooks.EventRunBeforeTool, "acme.sleep", "", 300, want{code: "run_hook_failed", hookID: "t.hook", afterRun: true}},
		{"timeout in before_tool, open", hooks.EventRunBeforeTool, "acme.sleep", "open", 300, want{output: true, annots: []host.HookAnnotation{failed("t.hook", hooks.EventRunBeforeTool, "hook_timeout")}}},
		{"timeout in after_tool, open by default", hooks.EventRunAfterTool, "acme.sleep", "", 300, want{output: true, annots: []host.HookAnnotation{failed("t.hook", hooks.EventRunAfterTool, "hook_timeout")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bs := []host.HookBinding{{HookID: "t.hook", Event: tc.phase, PluginID: tc.skill, OnFailure: tc.on, TimeoutMs: tc.ms}}
			if tc.want.afterRun {
				bs = append(bs, host.HookBinding{HookID: "z.after", Event: hooks.EventRunAfterRun, PluginID: "acme.e0"})
			}
			bindRun(t, h, bs...)
			log.take()
			res, err := callEcho(h)
			outs := log.take()
			if got := errcode.Of(err); got != tc.want.code && !(tc.want.code == "" && err == nil) {
				t.Fatalf("call: code %q (%v), want %q", got, err, tc.want.code)
			}
			switch tc.want.code {
			case "blocked_by_hook", "run_failed_by_hook":
				var de *host.HookDecisionError
				if !errors.As(err, &de) || de.HookID != tc.want.hookID || de.Reason != tc.want.reason || de.Event != tc.phase {
					t.Fatalf("error %v: want a *HookDecisionError of hook %s at %s with reason %q", err, tc.want.hookID, tc.phase, tc.want.reason)
				}
			case "approval_requested_by_hook":
				var ar *host.HookApprovalRequest
				sum := sha256.Sum256([]byte(echoIn))
				if !errors.As(err, &ar) || !errors.Is(err, host.ErrApprovalRequested) || ar.HookID != tc.want.hookID || ar.Reason != tc.want.reason ||
					ar.SkillID != "palyra.echo" || ar.ToolID != "palyra.echo" || ar.Version == "" || ar.InputSHA256 != hex.EncodeToString(sum[:]) {
					t.Fatalf("error %v (%+v): want a *HookApprovalRequest of hook %s, reason %q, for the echo call", err, ar, tc.want.hookID, tc.want.reason)
				}
			case "approval_pending":
				pa := host.PendingApprovalOf(err)
				want := host.HookApprovalReason(tc.want.hookID, tc.want.reason)
				if pa == nil || res == nil || res.Pending == nil || res.Pending.ID != pa.ID || !slices.Contains(pa.Reasons, want) {
					t.Fatalf("call: %+v, %v: want a pending approval with the reason %+v", res, err, want)
				}
			case "run_hook_failed":
				var fe *host.HookFailureError
				if !errors.As(err, &fe) || fe.HookID != tc.want.hookID {
					t.Fatalf("error %v: want a *HookFailureError of hook %s", err, tc.want.hookID)
				}
			}
			if r := host.CallResultOf(err); err != nil && r != nil {
				res = r
			}
			delivered := res != nil && len(res.Output) > 0
			if delivered != tc.want.output {
				t.Fatalf("output delivered %v (%+v), want %v", delivered, res, tc.want.output)
			}
			if delivered {
				var o struct{ Echo string }
				if json.Unmarshal(res.Output, &o) != nil || o.Echo != "hi" {
					t.Fatalf("output %s: the tool's output was changed", res.Output)
				}
			}
			var annots []host.HookAnnotation
			var preview *host.HookPreview
			if res != nil {
				preview = res.Preview
				for _, a := range res.Annotations {
					a.Data, a.Error = nil, "" // compared below by code
					annots = append(annots, a)
				}
			}
			if fmt.Sprint(annots) != fmt.Sprint(tc.want.annots) {
				t.Fatalf("annotations %+v, want %+v", annots, tc.want.annots)
			}
			if fmt.Sprint(preview) != fmt.Sprint(tc.want.preview) {
				t.Fatalf("preview %+v, want %+v", preview, tc.want.preview)
			}
			if tc.want.afterRun && !slices.ContainsFunc(outs, func(o hooks.Outcome) bool { return o.HookID == "z.after" }) {
				t.Fatalf("run:after_run did not fire: outcomes %+v", outs)
			}
		})
	}
}

// TestRunHookPhases checks the order of the phases of one call, the
// payload each hook gets (one run id, the input's summary, the result's
// after the tool), that the hooks' own tool calls fire no run hooks (five
// phases bound give exactly five outcomes), and that a call with no run
// hook bound fires nothing, also after a binding made by another process
// (another Store on the same state dir, as the CLI) is removed again.
func TestRunHookPhases(t *testing.T) {
	h, log, state := openRunHookHostIn(t, "acme.e0", "acme.e30", "acme.sleep")
	ctx := context.Background()
	phases := []string{hooks.EventRunBeforeRun, hooks.EventRunBeforeTool, hooks.EventRunAfterTool, hooks.EventRunBeforeDelivery, hooks.EventRunAfterRun}

	t.Run("no run hooks", func(t *testing.T) {
		bindRun(t, h, host.HookBinding{HookID: "n.enabled", Event: hooks.EventSkillEnabled, PluginID: "acme.e0"})
		log.take()
		res, err := callEcho(h)
		if err != nil || res.Annotations != nil || res.Preview != nil {
			t.Fatalf("call: %+v, %v", res, err)
		}
		if outs := log.take(); len(outs) != 0 {
			t.Fatalf("hooks ran for a call with no run hooks: %+v", outs)
		}
	})

	t.Run("every phase in order", func(t *testing.T) {
		var bs []host.HookBinding
		for i, p := range phases {
			bs = append(bs, host.HookBinding{HookID: fmt.Sprintf("p%d", i), Event: p, PluginID: "acme.e0"})
		}
		bindRun(t, h, bs...)
		log.take()
		res, err := h.Call(host.WithPrincipal(ctx, "alice"), host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(echoIn)})
		if err != nil {
			t.Fatal(err)
		}
		outs := log.take()
		var got []string
		for _, o := range outs {
			got = append(got, o.Event)
		}
		if !slices.Equal(got, phases) {
			t.Fatalf("phases %v, want %v (a hook's own call must fire no run hooks)", got, phases)
		}
		inSum, outSum := sha256.Sum256([]byte(echoIn)), sha256.Sum256(res.Output)
		var runID string
		for _, o := range outs {
			var in struct {
				HookID  string              `json:"hook_id"`
				Event   string              `json:"event"`
				Payload host.RunHookPayload `json:"payload"`
			}
			if err := json.Unmarshal(o.Payload, &in); err != nil {
				t.Fatal(err)
			}
			p := in.Payload
			if runID == "" {
				runID = p.RunID
			}
			if p.RunID == "" || p.RunID != runID || p.Principal != "alice" || p.SkillID != "palyra.echo" || p.ToolID != "palyra.echo" || p.Version != res.Version ||
				p.Input.SHA256 != hex.EncodeToString(inSum[:]) || p.Input.Bytes != len(echoIn) || string(p.Input.JSON) != echoIn {
				t.Fatalf("%s payload %+v", o.Event, p)
			}
			before := o.Event == hooks.EventRunBeforeRun || o.Event == hooks.EventRunBeforeTool
			if before != (p.Result == nil) {
				t.Fatalf("%s payload result %+v", o.Event, p.Result)
			}
			if p.Result != nil && (p.Result.Code != "ok" || p.Result.InvocationID != res.InvocationID || p.Result.Output.SHA256 != hex.EncodeToString(outSum[:]) ||
				p.Result.Output.Bytes != len(res.Output) || string(p.Result.Output.JSON) != string(res.Output)) {
				t.Fatalf("%s result summary %+v, call result %+v", o.Event, p.Result, res)
			}
		}
		// A run hook fired by hand runs its hook alone.
		fr, err := h.FireHooks(ctx, host.FireRequest{Event: hooks.EventRunBeforeTool})
		if err != nil || len(fr.Outcomes) != 1 {
			t.Fatalf("fire: %+v, %v", fr, err)
		}
		if outs := log.take(); len(outs) != 1 {
			t.Fatalf("fire ran %d hooks: %+v", len(outs), outs)
		}
	})

	t.Run("a binding made by another process", func(t *testing.T) {
		other := hooks.OpenStore(state)
		if _, err := other.Bind(ctx, hooks.Binding{HookID: "cli.block", Event: hooks.EventRunBeforeTool, PluginID: "acme.e30", ToolID: "acme.e30.t", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := callEcho(h); errcode.Of(err) != "blocked_by_hook" {
			t.Fatalf("call after a bind by another store: %v, want blocked_by_hook", err)
		}
		if err := other.Remove(ctx, "cli.block"); err != nil {
			t.Fatal(err)
		}
		if _, err := callEcho(h); err != nil {
			t.Fatalf("call after the remove by another store: %v", err)
		}
	})

	// The gate's checks run before the hooks; a version disabled while a
	// hook decides must not be called when the hook lets the call go on.
	t.Run("a version disabled while a hook decides", func(t *testing.T) {
		bindRun(t, h, host.HookBinding{HookID: "slow", Event: hooks.EventRunBeforeTool, PluginID: "acme.sleep", TimeoutMs: 3000, OnFailure: "open"})
		done := make(chan error, 1)
		go func() {
			_, err := callEcho(h)
			done <- err
		}()
		time.Sleep(500 * time.Millisecond) // within the hook's 3 s
		if _, err := h.Disable(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "mid-call"}); err != nil {
			t.Fatal(err)
		}
		if err := <-done; errcode.Of(err) != "skill_disabled" {
			t.Fatalf("call: %v, want skill_disabled", err)
		}
	})
}

// BenchmarkCallNoRunHooks and BenchmarkCallOneBeforeToolHook measure a
// call of the echo example through the gate with no run hook bound (the
// cost is one stat of the bindings file) and with one run:before_tool
// hook (a call of the hook skill's tool in its own sidecar first).
func BenchmarkCallNoRunHooks(b *testing.B) {
	h, _ := openRunHookHost(b, "acme.e0")
	benchCall(b, h)
}

func BenchmarkCallOneBeforeToolHook(b *testing.B) {
	h, _ := openRunHookHost(b, "acme.e0")
	bindRun(b, h, host.HookBinding{HookID: "b.tool", Event: hooks.EventRunBeforeTool, PluginID: "acme.e0"})
	benchCall(b, h)
}

func benchCall(b *testing.B, h *host.Host) {
	if _, err := callEcho(h); err != nil { // start the sidecars
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := callEcho(h); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunHookFormSubmit: a form submit is a call through the gate too;
// its run hooks fire and decide as a plain call's. The UI skill is the
// daemon's hook probe, which echoes its input: called with an A2UI
// document, it returns it, and the submit reaches it as its next call.
func TestRunHookFormSubmit(t *testing.T) {
	h, log := openRunHookHost(t, "acme.e10", "acme.e30")
	ctx := context.Background()
	man, err := os.ReadFile(filepath.Join("daemon", "testdata", "hookprobe", "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join("daemon", "testdata", "hookprobe", "hookprobe.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	key := testskill.Key(25)
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, string(man), mod, key),
		TrustedPublishers: []host.TrustedKey{{Publisher: "test", PublicKeyHex: hex.EncodeToString(key.Public().(ed25519.PublicKey))}}}); err != nil {
		t.Fatal(err)
	}
	doc := `{"v":1,"surface":"s","components":[{"id":"f","type":"form","props":{"fields":[{"id":"name","type":"text"}]}}]}`
	cr, err := h.Call(ctx, host.CallRequest{SkillID: "test.hookprobe", ToolID: "test.probe", Input: json.RawMessage(doc)})
	if err != nil || cr.A2UI == nil {
		t.Fatalf("call: %+v, %v", cr, err)
	}
	submit := host.SubmitRequest{DocumentID: cr.A2UI.DocumentID, ComponentID: "f", Values: map[string]any{"name": "Ada"}}

	bindRun(t, h, host.HookBinding{HookID: "note", Event: hooks.EventRunBeforeTool, PluginID: "acme.e10"})
	log.take()
	res, err := h.SubmitForm(ctx, submit)
	if err != nil || len(res.Annotations) != 1 || res.Annotations[0].Message != "r10" {
		t.Fatalf("submit with an annotating hook: %+v, %v", res, err)
	}
	var in struct {
		Payload host.RunHookPayload `json:"payload"`
	}
	if outs := log.take(); len(outs) != 1 || json.Unmarshal(outs[0].Payload, &in) != nil || in.Payload.SkillID != "test.hookprobe" ||
		!strings.Contains(string(in.Payload.Input.JSON), `"a2ui_submit"`) {
		t.Fatalf("hook outcomes of the submit: %+v", outs)
	}

	bindRun(t, h, host.HookBinding{HookID: "stop", Event: hooks.EventRunBeforeRun, PluginID: "acme.e30"})
	if _, err := h.SubmitForm(ctx, submit); !errors.Is(err, host.ErrBlockedByHook) {
		t.Fatalf("submit with a blocking hook: %v", err)
	}
}

// TestRunHookApproval follows a call a run hook holds for approval: the
// call is pending with the hook's reason and did not run; approved, it
// runs once with its approval (the hook asks again, and the approval
// answers it), and the after phases see the tool run. A block in a later
// before phase outweighs an earlier phase's request: nothing is held
// for a call that would be blocked anyway.
func TestRunHookApproval(t *testing.T) {
	ctx := context.Background()
	h, log := openRunHookHost(t, "acme.e0", "acme.e20", "acme.e30")
	t.Run("held, approved, run", func(t *testing.T) {
		bindRun(t, h,
			host.HookBinding{HookID: "a.ask", Event: hooks.EventRunBeforeTool, PluginID: "acme.e20"},
			host.HookBinding{HookID: "b.after", Event: hooks.EventRunAfterTool, PluginID: "acme.e0"})
		log.take()
		res, err := callEcho(h)
		pa := host.PendingApprovalOf(err)
		if pa == nil || res == nil || res.Pending == nil || len(res.Output) > 0 {
			t.Fatalf("call: %+v, %v: want a pending approval and no output", res, err)
		}
		if outs := log.take(); len(outs) != 1 || outs[0].HookID != "a.ask" {
			t.Fatalf("outcomes of the held call %+v: want a.ask only (no after phase for a call that did not run)", outs)
		}
		if _, err := h.DecideApproval(ctx, host.DecideRequest{ID: pa.ID, Approve: true, Reason: "looked fine"}); err != nil {
			t.Fatal(err)
		}
		res, err = h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(echoIn), ApprovalID: pa.ID})
		if err != nil || !strings.Contains(string(res.Output), `"hi"`) {
			t.Fatalf("the approved call: %+v, %v", res, err)
		}
		outs := log.take()
		if !slices.ContainsFunc(outs, func(o hooks.Outcome) bool { return o.HookID == "a.ask" }) ||
			!slices.ContainsFunc(outs, func(o hooks.Outcome) bool { return o.HookID == "b.after" }) {
			t.Fatalf("outcomes of the approved call %+v: want a.ask asked again and b.after fired", outs)
		}
		if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(echoIn), ApprovalID: pa.ID}); errcode.Of(err) != "approval_used" {
			t.Fatalf("the approval used twice: %v, want approval_used", err)
		}
	})
	t.Run("a call a peer routed here", func(t *testing.T) {
		// The approval would live here, where the caller polling the node
		// it called cannot see it: the hook's request fails the call.
		bindRun(t, h, host.HookBinding{HookID: "a.ask", Event: hooks.EventRunBeforeTool, PluginID: "acme.e20"})
		res, err := h.CallRouted(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(echoIn)})
		var ask *host.HookApprovalRequest
		if errcode.Of(err) != "approval_requested_by_hook" || !errors.As(err, &ask) || ask.HookID != "a.ask" || host.PendingApprovalOf(err) != nil {
			t.Fatalf("routed call: %+v, %v: want approval_requested_by_hook from a.ask and no approval", res, err)
		}
		if list, err := h.Approvals(ctx, host.ApprovalsRequest{State: "pending"}); err != nil || len(list.Approvals) != 0 {
			t.Fatalf("pending approvals after a routed call: %+v, %v", list, err)
		}
	})
	t.Run("a later block outweighs a request", func(t *testing.T) {
		bindRun(t, h,
			host.HookBinding{HookID: "a.ask", Event: hooks.EventRunBeforeRun, PluginID: "acme.e20"},
			host.HookBinding{HookID: "b.block", Event: hooks.EventRunBeforeTool, PluginID: "acme.e30"})
		res, err := callEcho(h)
		if errcode.Of(err) != "blocked_by_hook" || host.PendingApprovalOf(err) != nil {
			t.Fatalf("call: %+v, %v: want blocked_by_hook and no approval", res, err)
		}
		list, err := h.Approvals(ctx, host.ApprovalsRequest{State: "pending"})
		if err != nil {
			t.Fatal(err)
		}
		// The first subtest's approval was used: nothing may be pending.
		if len(list.Approvals) != 0 {
			t.Fatalf("a blocked call left pending approvals: %+v", list.Approvals)
		}
	})
}
