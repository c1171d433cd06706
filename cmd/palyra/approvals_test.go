package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
)

// TestApprovalsCLI: skills run of a tool that needs approval waits for the
// decision (or, with --no-wait, prints the id and exits 3), and the
// approvals verbs list, show, approve and deny.
func TestApprovalsCLI(t *testing.T) {
	bin := sidecarBinary(t)
	state, dir := t.TempDir(), t.TempDir()
	tmp, err := os.MkdirTemp("", "pr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)
	t.Setenv(sidecarEnv, "")
	p := approvalArtifactFile(t, dir)
	if r := cli(t, state, "", "skills", "install", "--json", "--artifact", p, "--trusted-publisher", "acme="+echoPub); r.code != 0 {
		t.Fatalf("install: %s %s", r.stdout, r.stderr)
	}
	run := func(args ...string) result {
		return cli(t, state, "", append([]string{"skills", "run", "acme.appr", "acme.t", "--sidecar", bin}, args...)...)
	}

	// --no-wait: the id, exit 3, nothing ran.
	r := run("--input", `{"n":1}`, "--no-wait", "-o", "json", "--principal", "bob")
	var rep pendingReport
	if r.code != exitPending || json.Unmarshal([]byte(r.stdout), &rep) != nil || rep.Pending == nil || !strings.HasPrefix(rep.Pending.ID, "apr_") {
		t.Fatalf("run --no-wait: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := rep.Pending.ID
	var list host.ApprovalList
	cli(t, state, "", "approvals", "list", "--state", "pending", "-o", "json").decode(t, &list)
	if list.Count != 1 || list.Approvals[0].ID != id || list.Approvals[0].RequestedBy != "bob" {
		t.Fatalf("approvals list: %+v", list)
	}
	r = cli(t, state, "", "approvals", "show", id)
	if r.code != 0 || !strings.Contains(r.stdout, "needs it for: manifest: requires_approval") || !strings.Contains(r.stdout, `"n": 1`) || !strings.Contains(r.stdout, "acme.appr 1.0.0 tool acme.t") {
		t.Fatalf("approvals show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run("--input", `{"n":1}`, "--approval", id, "--no-wait"); r.code != exitPending || !strings.HasPrefix(r.stdout, id+"\n") {
		t.Fatalf("run --no-wait with an undecided approval: exit %d %s", r.code, r.stdout)
	}
	if r := cli(t, state, "", "approvals", "deny", id); r.code != exitUsage {
		t.Fatalf("deny without --reason: exit %d %s", r.code, r.stderr)
	}
	if r := cli(t, state, "", "approvals", "approve", id, "--reason", "expected", "--principal", "alice"); r.code != 0 || !strings.Contains(r.stdout, "approved by alice") {
		t.Fatalf("approve: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run("--input", `{"n":2}`, "--approval", id, "-o", "json"); r.code != 1 || r.errorCode(t) != "approval_input_mismatch" {
		t.Fatalf("run with another input: exit %d %s", r.code, r.stdout)
	}
	r = run("--input", `{"n":1}`, "--approval", id)
	if r.code != 0 || !strings.Contains(r.stdout, `"input":{"n":1}`) {
		t.Fatalf("approved run: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run("--input", `{"n":1}`, "--approval", id, "-o", "json"); r.code != 1 || r.errorCode(t) != "approval_used" {
		t.Fatalf("second run with the approval: exit %d %s", r.code, r.stdout)
	}

	// Waiting: the run waits until another command approves, then runs.
	done := make(chan result, 1)
	go func() { done <- run("--input", `{"n":3}`) }()
	var waiting string
	for waiting == "" {
		select {
		case r := <-done:
			t.Fatalf("run ended before its approval: exit %d %s %s", r.code, r.stdout, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		var l host.ApprovalList
		cli(t, state, "", "approvals", "list", "--state", "pending", "-o", "json").decode(t, &l)
		if l.Count > 0 {
			waiting = l.Approvals[0].ID
		}
	}
	if r := cli(t, state, "", "approvals", "approve", waiting); r.code != 0 {
		t.Fatalf("approve: exit %d %s", r.code, r.stderr)
	}
	r = <-done
	if r.code != 0 || !strings.Contains(r.stdout, `"input":{"n":3}`) || !strings.Contains(r.stderr, "waiting for approval "+waiting) {
		t.Fatalf("waiting run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// Denied while waiting: the run fails with the reason.
	go func() { done <- run("--input", `{"n":4}`, "-o", "json") }()
	waiting = ""
	for waiting == "" {
		time.Sleep(50 * time.Millisecond)
		var l host.ApprovalList
		cli(t, state, "", "approvals", "list", "--state", "pending", "-o", "json").decode(t, &l)
		if l.Count > 0 {
			waiting = l.Approvals[0].ID
		}
	}
	if r := cli(t, state, "", "approvals", "deny", waiting, "--reason", "not now"); r.code != 0 {
		t.Fatalf("deny: exit %d %s", r.code, r.stderr)
	}
	r = <-done
	if r.code != 1 || r.errorCode(t) != "approval_denied" || !strings.Contains(r.stdout, "not now") {
		t.Fatalf("denied run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// --wait bounds the wait: still pending, approval_pending.
	if r := run("--input", `{"n":5}`, "--wait", "300ms", "-o", "json"); r.code != 1 || r.errorCode(t) != "approval_pending" {
		t.Fatalf("run --wait: exit %d %s", r.code, r.stdout)
	}
}

// approvalArtifactFile writes acme.appr, whose tool acme.t requires
// approval, running the WAT echo.
func approvalArtifactFile(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "acme.appr.palyra-skill")
	mod, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	writeTestArtifact(t, p, `manifest_version = 2
skill_id = "acme.appr"
name = "Approval test"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.t"
name = "t"
description = "a tool that needs approval"
input_schema = { type = "object" }
output_schema = { type = "object" }

[entrypoints.tools.risk]
requires_approval = true

[capabilities.quotas]
wall_clock_timeout_ms = 2000

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`, mod)
	return p
}
