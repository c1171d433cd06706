package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/hooks"
)

// fireOut decodes a hooks fire --json answer with the durations, which
// differ from run to run, zeroed.
func fireOut(t *testing.T, r result) host.FireResult {
	t.Helper()
	var f host.FireResult
	r.decode(t, &f)
	for i := range f.Outcomes {
		f.Outcomes[i].Duration = 0
	}
	return f
}

// TestHooks edits hook bindings locally and through a daemon on the same
// state directory, and fires them both ways.
func TestHooks(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	url := startDaemon(t, state)
	modes := []struct {
		name string
		run  func(args ...string) result
	}{
		{"local", func(args ...string) result { return cli(t, state, "", append([]string{"hooks"}, args...)...) }},
		{"daemon", func(args ...string) result {
			return cli(t, state, "", append([]string{"hooks", args[0], "--url", url}, args[1:]...)...)
		}},
	}
	local, remote := modes[0].run, modes[1].run
	if r := cli(t, state, "", "skills", "install", "--url", url, "--json", "--allow-tofu", "--artifact", probeArtifact(t, dir, "test.hookprobe", "0.1.0")); r.code != 0 {
		t.Fatalf("install: %s", r.stdout)
	}

	// Bind one hook each way.
	var b hooks.Binding
	local("bind", "gate.local", "--json", "--event", "before_tool", "--skill", "test.hookprobe", "--tool", "test.probe",
		"--principal", "user:bob", "--display-name", "Gate", "--notes", "blocks on exit:30").decode(t, &b)
	if b.HookID != "gate.local" || b.Event != hooks.EventRunBeforeTool || b.PluginID != "test.hookprobe" || b.ToolID != "test.probe" || !b.Enabled ||
		b.Operator.OwnerPrincipal != "user:bob" || b.Operator.UpdatedBy != "user:bob" || b.Operator.DisplayName != "Gate" || b.CreatedAtUnixMs == 0 {
		t.Fatalf("local bind: %+v", b)
	}
	b = hooks.Binding{}
	remote("bind", "Gate.Remote", "--json", "--event", "run:before_tool", "--skill", "TEST.hookprobe", "--timeout", "5s").decode(t, &b)
	if b.HookID != "gate.remote" || b.PluginID != "test.hookprobe" || b.ToolID != "" || b.TimeoutMs != 5000 ||
		b.Operator.OwnerPrincipal != "user:local" || !b.Enabled {
		t.Fatalf("daemon bind: %+v", b)
	}
	r := remote("bind", "notify.disabled", "--event", "skill:disabled", "--skill", "test.hookprobe", "--disabled", "--principal", "user:carol")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "hook.bound hook_id=notify.disabled event=skill:disabled plugin_id=test.hookprobe tool_id=- timeout_ms=0 enabled=false owner_principal=user:carol") {
		t.Fatalf("text bind: exit %d %s%s", r.code, r.stdout, r.stderr)
	}

	t.Run("refusals", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			code string
		}{
			{"exists", []string{"bind", "gate.local", "--json", "--event", "run:after_run", "--skill", "test.hookprobe"}, "hook_exists"},
			{"unknown event", []string{"bind", "x.y", "--json", "--event", "run:sometime", "--skill", "test.hookprobe"}, "unknown_hook_event"},
			{"bad hook id", []string{"bind", "bad id", "--json", "--event", "run:after_run", "--skill", "test.hookprobe"}, "invalid_hook_binding"},
			{"timeout over the limit", []string{"bind", "x.y", "--json", "--event", "run:after_run", "--skill", "test.hookprobe", "--timeout", "2m"}, "invalid_hook_binding"},
			{"missing skill flag", []string{"bind", "x.y", "--json", "--event", "run:after_run"}, "usage"},
			{"sub-millisecond timeout", []string{"bind", "x.y", "--json", "--event", "run:after_run", "--skill", "s", "--timeout", "1500us"}, "usage"},
			{"enable unknown", []string{"enable", "nope", "--json"}, "hook_not_found"},
			{"remove unknown", []string{"remove", "nope", "--json"}, "hook_not_found"},
			{"fire unknown event", []string{"fire", "run:sometime", "--json"}, "unknown_hook_event"},
			{"fire bad payload", []string{"fire", "run:before_tool", "--json", "--payload", "{"}, "invalid_hook_payload"},
		}
		for _, m := range modes {
			for _, tt := range tests {
				t.Run(m.name+" "+tt.name, func(t *testing.T) {
					r := m.run(tt.args...)
					if r.code == 0 || r.errorCode(t) != tt.code {
						t.Fatalf("exit %d: %s", r.code, r.stdout)
					}
				})
			}
		}
		r := remote("fire", "run:before_tool", "--json", "--sidecar", sidecarBinary(t))
		if r.code != exitUsage || !strings.Contains(r.stdout, "--sidecar is local-only") {
			t.Fatalf("fire --sidecar through the daemon: exit %d %s", r.code, r.stdout)
		}
	})

	t.Run("list is the same both ways", func(t *testing.T) {
		for _, args := range [][]string{{"list", "--json"}, {"list"}} {
			l, d := local(args...), remote(args...)
			if l.code != 0 || l.stdout != d.stdout {
				t.Fatalf("%v: local exit %d\n%s\ndaemon exit %d\n%s%s", args, l.code, l.stdout, d.code, d.stdout, d.stderr)
			}
		}
		want := "HOOK_ID          EVENT            PLUGIN_ID       TOOL_ID     ENABLED\n" +
			"gate.local       run:before_tool  test.hookprobe  test.probe  true\n" +
			"gate.remote      run:before_tool  test.hookprobe  -           true\n" +
			"notify.disabled  skill:disabled   test.hookprobe  -           false\n"
		if got := local("list").stdout; got != want {
			t.Errorf("table:\n%s\nwant:\n%s", got, want)
		}
	})

	payloadFile := filepath.Join(dir, "payload.json")
	if err := os.WriteFile(payloadFile, []byte(`{"tool":"shell","note":"exit:30"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fires := []struct {
		name, event, payload string
		normalized           string
		decision             hooks.Decision
		source               string
		outcomes             int
		failed               []string
	}{
		{"block", "run:before_tool", `{"note":"please exit:30"}`, "run:before_tool", hooks.DecisionBlock, "hook", 2, nil},
		{"block from a file", "before_tool", "@" + payloadFile, "run:before_tool", hooks.DecisionBlock, "hook", 2, nil},
		{"annotate", "run:before_tool", `{"note":"exit:10"}`, "run:before_tool", hooks.DecisionAnnotate, "hook", 2, nil},
		{"default payload", "Run:Before_Tool", "", "run:before_tool", hooks.DecisionContinue, "hook", 2, nil},
		{"nothing bound", "run:after_run", `{"note":"exit:30"}`, "run:after_run", hooks.DecisionContinue, hooks.RuntimeSource, 0, nil},
		{"disabled hook", "skill.disabled", `{"note":"exit:30"}`, "skill:disabled", hooks.DecisionContinue, hooks.RuntimeSource, 0, nil},
	}
	t.Run("fire", func(t *testing.T) {
		for _, f := range fires {
			t.Run(f.name, func(t *testing.T) {
				var got []host.FireResult
				for _, m := range modes {
					args := []string{"fire", f.event, "--json"}
					if f.payload != "" {
						args = append(args, "--payload", f.payload)
					}
					out := fireOut(t, m.run(args...))
					res := out.Resolution
					if out.Event != f.normalized || len(out.Outcomes) != f.outcomes || res.Decision != f.decision || res.Source != f.source || !reflect.DeepEqual(res.Failed, f.failed) {
						t.Fatalf("%s: %+v", m.name, out)
					}
					for _, o := range out.Outcomes {
						if o.Failed() || o.Decision != f.decision {
							t.Errorf("%s: outcome %+v", m.name, o)
						}
					}
					got = append(got, out)
				}
				if !reflect.DeepEqual(got[0], got[1]) {
					a, _ := json.Marshal(got[0])
					b, _ := json.Marshal(got[1])
					t.Errorf("local and daemon differ:\n%s\n%s", a, b)
				}
			})
		}
	})

	t.Run("a decision not allowed fails the hook", func(t *testing.T) {
		var b hooks.Binding
		remote("enable", "notify.disabled", "--json", "--principal", "user:dave").decode(t, &b)
		if !b.Enabled || b.Operator.UpdatedBy != "user:dave" || b.Operator.OwnerPrincipal != "user:carol" {
			t.Fatalf("enable: %+v", b)
		}
		for _, m := range modes {
			out := fireOut(t, m.run("fire", "skill:disabled", "--json", "--payload", `{"note":"exit:30"}`))
			if len(out.Outcomes) != 1 || out.Outcomes[0].Code != "hook_decision_not_allowed" || out.Outcomes[0].ExitCode != 30 ||
				out.Resolution.Decision != hooks.DecisionContinue || !reflect.DeepEqual(out.Resolution.Failed, []string{"notify.disabled"}) {
				t.Errorf("%s: %+v", m.name, out)
			}
		}
		r := local("fire", "skill:disabled", "--payload", `{"note":"exit:30"}`)
		if r.code != 0 || !strings.Contains(r.stdout, "hooks.fire event=skill:disabled hooks=1 decision=continue source=runtime hook_id=\"\" terminal=false failed=1\n") ||
			!strings.Contains(r.stdout, "  hook_id=notify.disabled plugin_id=test.hookprobe exit_code=30 decision=block code=hook_decision_not_allowed error=") {
			t.Errorf("text fire: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("disable and remove", func(t *testing.T) {
		var b hooks.Binding
		remote("disable", "gate.remote", "--json").decode(t, &b)
		if b.Enabled {
			t.Fatalf("disable: %+v", b)
		}
		for _, m := range modes {
			r := m.run("fire", "run:before_tool", "--payload", `{"note":"exit:30"}`)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "hooks.fire event=run:before_tool hooks=1 decision=block source=hook hook_id=gate.local terminal=true failed=0\n") {
				t.Errorf("%s text fire: exit %d\n%s%s", m.name, r.code, r.stdout, r.stderr)
			}
		}
		var rm hookRemoved
		remote("remove", "gate.remote", "--json").decode(t, &rm)
		if rm.Removed != "gate.remote" {
			t.Fatalf("remove: %+v", rm)
		}
		if r := local("remove", "Gate.Local"); r.code != 0 || r.stdout != "hook.removed hook_id=gate.local\n" {
			t.Fatalf("local remove: exit %d %s%s", r.code, r.stdout, r.stderr)
		}
		var l hookList
		local("list", "--json").decode(t, &l)
		if len(l.Bindings) != 1 || l.Bindings[0].HookID != "notify.disabled" {
			t.Fatalf("list after remove: %+v", l)
		}
	})
}

// TestHooksLocal edits and fires hook bindings with no daemon: every verb
// goes through the host the CLI opens on the state directory, and who acts
// (--principal) reaches the bindings through the context.
func TestHooksLocal(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	hooksCLI := func(args ...string) result { return cli(t, state, "", append([]string{"hooks"}, args...)...) }
	if r := cli(t, state, "", "skills", "install", "--json", "--allow-tofu", "--artifact", probeArtifact(t, dir, "test.hookprobe", "0.1.0")); r.code != 0 {
		t.Fatalf("install: %s %s", r.stdout, r.stderr)
	}

	var b hooks.Binding
	hooksCLI("bind", "gate.one", "--json", "--event", "run:before_tool", "--skill", "test.hookprobe", "--tool", "test.probe", "--principal", "user:bob").decode(t, &b)
	if b.HookID != "gate.one" || !b.Enabled || b.Operator.OwnerPrincipal != "user:bob" || b.Operator.UpdatedBy != "user:bob" {
		t.Fatalf("bind: %+v", b)
	}
	hooksCLI("disable", "gate.one", "--json", "--principal", "user:carol").decode(t, &b)
	if b.Enabled || b.Operator.UpdatedBy != "user:carol" || b.Operator.OwnerPrincipal != "user:bob" {
		t.Fatalf("disable: %+v", b)
	}
	if r := hooksCLI("fire", "run:before_tool", "--payload", `{"note":"exit:30"}`); r.code != 0 ||
		r.stdout != "hooks.fire event=run:before_tool hooks=0 decision=continue source=runtime hook_id=\"\" terminal=false failed=0\n" {
		t.Fatalf("fire with the hook disabled: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	hooksCLI("enable", "gate.one", "--json").decode(t, &b)
	if !b.Enabled || b.Operator.UpdatedBy != "user:local" {
		t.Fatalf("enable: %+v", b)
	}
	tests := []struct {
		payload  string
		decision hooks.Decision
	}{
		{`{"note":"exit:30"}`, hooks.DecisionBlock},
		{`{"note":"exit:10"}`, hooks.DecisionAnnotate},
		{"", hooks.DecisionContinue},
	}
	for _, tt := range tests {
		args := []string{"fire", "before_tool", "--json"}
		if tt.payload != "" {
			args = append(args, "--payload", tt.payload)
		}
		out := fireOut(t, hooksCLI(args...))
		if out.Event != "run:before_tool" || len(out.Outcomes) != 1 || out.Outcomes[0].Decision != tt.decision || out.Resolution.Decision != tt.decision {
			t.Errorf("fire %q: %+v", tt.payload, out)
		}
	}
	// An unknown event is refused before a sidecar is looked for.
	t.Setenv(sidecarEnv, "")
	t.Setenv("PATH", t.TempDir())
	if r := hooksCLI("fire", "run:sometime", "--json"); r.errorCode(t) != "unknown_hook_event" {
		t.Fatalf("fire of an unknown event: %s", r.stdout)
	}
	if r := hooksCLI("fire", "run:before_tool", "--json"); r.errorCode(t) != "sidecar_not_found" {
		t.Fatalf("fire without a sidecar: %s", r.stdout)
	}
	if r := hooksCLI("remove", "gate.one"); r.code != 0 || r.stdout != "hook.removed hook_id=gate.one\n" {
		t.Fatalf("remove: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := hooksCLI("list"); r.code != 0 || r.stdout != "HOOK_ID  EVENT  PLUGIN_ID  TOOL_ID  ENABLED\n" {
		t.Fatalf("list after remove: exit %d %q%s", r.code, r.stdout, r.stderr)
	}
}

// TestHooksRunPhase: a run-phase hook bound with the CLI fires in
// palyra skills run. The hook probe decides by the markers exit:10 and
// exit:30 in what it is given; here the principal, which reaches the
// hook's payload but not the tool's input. An annotation is printed on
// stderr (stdout stays the tool's output) and carried in -o json; a block
// fails the run with blocked_by_hook and a hint; --on-failure is kept.
func TestHooksRunPhase(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	for _, id := range []string{"test.hookprobe", "test.target"} {
		if r := cli(t, state, "", "skills", "install", "--json", "--allow-tofu", "--artifact", probeArtifact(t, dir, id, "0.1.0")); r.code != 0 {
			t.Fatalf("install %s: %s %s", id, r.stdout, r.stderr)
		}
	}
	r := cli(t, state, "", "hooks", "bind", "gate", "--event", "run:before_tool", "--skill", "test.hookprobe", "--on-failure", "open")
	if r.code != 0 || !strings.Contains(r.stdout, " on_failure=open ") {
		t.Fatalf("bind: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, state, "", "hooks", "bind", "bad", "--event", "skill:enabled", "--skill", "test.hookprobe", "--on-failure", "closed", "--json"); r.errorCode(t) != "invalid_hook_binding" {
		t.Fatalf("on_failure on a notification: %s", r.stdout)
	}

	r = cli(t, state, "", "skills", "run", "test.target", "test.probe", "--input", `{"a":"b"}`, "--principal", "user:exit:10")
	if r.code != 0 || r.stdout != `{"a":"b"}`+"\n" || !strings.Contains(r.stderr, "annotation from hook gate (run:before_tool): ") {
		t.Fatalf("run with an annotating hook: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	var rep runReport
	cli(t, state, "", "skills", "run", "test.target", "test.probe", "--input", `{"a":"b"}`, "--principal", "user:exit:10", "-o", "json").decode(t, &rep)
	if len(rep.Annotations) != 1 || rep.Annotations[0].HookID != "gate" || rep.Annotations[0].Event != "run:before_tool" {
		t.Fatalf("run -o json: %+v", rep)
	}

	r = cli(t, state, "", "skills", "run", "test.target", "test.probe", "--input", `{"a":"b"}`, "--principal", "user:exit:30", "--json")
	if r.code == 0 || r.errorCode(t) != "blocked_by_hook" || !strings.Contains(r.stdout, "hook gate at run:before_tool") || !strings.Contains(r.stdout, "hooks list") {
		t.Fatalf("run with a blocking hook: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
}
