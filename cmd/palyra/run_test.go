package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runArtifact writes a signed artifact of a testdata/wasm module with one
// tool "t" (schemas optional) and returns its path.
func runArtifact(t *testing.T, dir, id, module, inSchema, outSchema string) string {
	t.Helper()
	if inSchema == "" {
		inSchema = `type = "object"`
	}
	if outSchema == "" {
		outSchema = `type = "object"`
	}
	schemas := "\n[entrypoints.tools.input_schema]\n" + inSchema + "\n" +
		"\n[entrypoints.tools.output_schema]\n" + outSchema + "\n"
	manifest := fmt.Sprintf(`manifest_version = 2
skill_id = %q
name = "Run test"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.t"
name = "t"
description = "test tool"
%s
[entrypoints.tools.risk]
default_sensitive = false
requires_approval = false

[capabilities.quotas]
wall_clock_timeout_ms = 2000
fuel_budget = 10000000

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Run test"
`, id, schemas)
	mod, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", module+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, id+".palyra-skill")
	writeTestArtifact(t, p, manifest, mod)
	return p
}

func TestSkillsRun(t *testing.T) {
	bin := sidecarBinary(t)
	// Made before TMPDIR changes, so the test's temporary files stay out of it.
	state, dir := t.TempDir(), t.TempDir()
	// Sockets in a short dir (Unix socket paths are limited to 108 bytes).
	tmp, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)
	t.Setenv(sidecarEnv, "")

	trusted := "acme=" + echoPub
	for _, s := range []struct{ id, module, in, out string }{
		{"acme.echo", "echo", "type = \"object\"\nrequired = [\"msg\"]", ""},
		{"acme.liar", "echo", "", "type = \"object\"\nrequired = [\"echo\"]"},
		{"acme.loop", "loop", "", ""},
		{"acme.sleep", "sleep", "", ""},
		{"acme.toolerr", "tool_error", "", ""},
	} {
		p := runArtifact(t, dir, s.id, s.module, s.in, s.out)
		if r := cli(t, state, "", "skills", "install", "--json", "--artifact", p, "--trusted-publisher", trusted); r.code != 0 {
			t.Fatalf("install %s: %s %s", s.id, r.stdout, r.stderr)
		}
	}

	t.Run("text output", func(t *testing.T) {
		r := cli(t, state, "", "skills", "run", "acme.echo", "acme.t", "--input", `{"msg":"hi"}`, "--sidecar", bin)
		if r.code != 0 {
			t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
		}
		var doc struct {
			ToolID string          `json:"tool_id"`
			Input  json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.ToolID != "acme.t" || string(doc.Input) != `{"msg":"hi"}` {
			t.Errorf("output %q (%v)", r.stdout, err)
		}
	})
	t.Run("json with stats, input from file, sidecar from env", func(t *testing.T) {
		in := filepath.Join(dir, "in.json")
		os.WriteFile(in, []byte(`{"msg":"file"}`), 0o600)
		t.Setenv(sidecarEnv, bin)
		var rep runReport
		cli(t, state, "", "skills", "run", "--json", "acme.echo", "acme.t", "--input", "@"+in).decode(t, &rep)
		if !strings.Contains(string(rep.Output), `"file"`) || rep.Stats.WallTime <= 0 {
			t.Errorf("report %+v", rep)
		}
	})
	tests := []struct {
		name string
		args []string
		code string
	}{
		{"invalid input", []string{"acme.echo", "acme.t", "--input", `{"x":1}`}, "invalid_input"},
		{"not json", []string{"acme.echo", "acme.t", "--input", `{`}, "invalid_input"},
		{"invalid output", []string{"acme.liar", "acme.t", "--input", `{}`}, "invalid_output"},
		{"fuel", []string{"acme.loop", "acme.t", "--input", "{}"}, "fuel_exhausted"},
		{"tool error", []string{"acme.toolerr", "acme.t", "--input", "{}"}, "tool_error"},
		{"not found", []string{"acme.none", "acme.t"}, "skill_not_found"},
		{"timeout", []string{"acme.sleep", "acme.t", "--input", "{}", "--timeout", "50ms"}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"skills", "run", "--json", "--sidecar", bin}, tt.args...)
			r := cli(t, state, "", args...)
			if got := r.errorCode(t); got != tt.code {
				t.Errorf("code %q, want %q: %s", got, tt.code, r.stdout)
			}
		})
	}
	t.Run("quarantined", func(t *testing.T) {
		if r := cli(t, state, "", "skills", "quarantine", "acme.echo", "--reason", "test"); r.code != 0 {
			t.Fatalf("quarantine: %s %s", r.stdout, r.stderr)
		}
		r := cli(t, state, "", "skills", "run", "--json", "--sidecar", bin, "acme.echo", "acme.t", "--input", `{"msg":"x"}`)
		if got := r.errorCode(t); got != "skill_quarantined" {
			t.Errorf("code %q: %s", got, r.stdout)
		}
	})
	t.Run("sidecar not found", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		r := cli(t, state, "", "skills", "run", "--json", "acme.echo", "acme.t")
		if got := r.errorCode(t); got != "sidecar_not_found" {
			t.Errorf("code %q: %s", got, r.stdout)
		}
		r = cli(t, state, "", "skills", "run", "--json", "--sidecar", "/nonexistent", "acme.echo", "acme.t")
		if got := r.errorCode(t); got != "sidecar_not_found" {
			t.Errorf("code %q: %s", got, r.stdout)
		}
	})
	t.Run("install precompiles with a sidecar at hand", func(t *testing.T) {
		cache := filepath.Join(state, "cache", "modules")
		before, _ := os.ReadDir(cache)
		t.Setenv(sidecarEnv, bin)
		p := runArtifact(t, dir, "acme.precompiled", "log_spammer", "", "")
		if r := cli(t, state, "", "skills", "install", "--json", "--artifact", p); r.code != 0 {
			t.Fatalf("install: %s %s", r.stdout, r.stderr)
		}
		after, _ := os.ReadDir(cache)
		if len(after) <= len(before) {
			t.Fatalf("the install compiled nothing into %s (%d entries before, %d after)", cache, len(before), len(after))
		}
	})
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
}
