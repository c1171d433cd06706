package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestParseLoopCall(t *testing.T) {
	tg, err := parseLoopCall(`a.b:a.t:{"x":"1:2"}`)
	if err != nil || tg.skill != "a.b" || tg.tool != "a.t" || string(tg.input) != `{"x":"1:2"}` {
		t.Errorf("parse: %+v %v", tg, err)
	}
	if tg, err := parseLoopCall("a.b:a.t"); err != nil || string(tg.input) != "null" {
		t.Errorf("no input: %+v %v", tg, err)
	}
	for _, bad := range []string{"a.b", ":t:{}", "a.b:t:{"} {
		if _, err := parseLoopCall(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestSkillsLoop(t *testing.T) {
	bin := sidecarBinary(t)
	// Made before TMPDIR changes, so the test's temporary files stay out of it.
	state, dir := t.TempDir(), t.TempDir()
	tmp, err := os.MkdirTemp("", "pl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)
	t.Setenv(sidecarEnv, "")

	for _, id := range []string{"acme.one", "acme.two"} {
		p := runArtifact(t, dir, id, "echo", "", "")
		if r := cli(t, state, "", "skills", "install", "--json", "--artifact", p, "--trusted-publisher", "acme="+echoPub); r.code != 0 {
			t.Fatalf("install %s: %s %s", id, r.stdout, r.stderr)
		}
	}
	r := cli(t, state, "", "skills", "loop", "--sidecar", bin, "--count", "5", "--interval", "0",
		"--call", `acme.one:acme.t:{"msg":"a"}`, "--call", `acme.two:acme.t:{}`, "--call", `acme.none:acme.t`)
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	callRe := regexp.MustCompile(`^call=(\d+) skill=(\S+) tool=acme\.t ok=(true|false) code=(\S+) sidecar_pid=(\d+) ms=\d+$`)
	var calls, sidecars int
	pids := map[string]string{}
	for _, l := range lines {
		if strings.HasPrefix(l, "sidecar ") {
			sidecars++
			continue
		}
		m := callRe.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q", l)
		}
		calls++
		switch m[2] {
		case "acme.none":
			if m[3] != "false" || m[4] != "skill_not_found" {
				t.Errorf("line %q", l)
			}
		default:
			if m[3] != "true" || m[4] != "ok" || m[5] == "0" {
				t.Errorf("line %q", l)
			}
			if p, ok := pids[m[2]]; ok && p != m[5] {
				t.Errorf("%s changed sidecar: %s then %s", m[2], p, m[5])
			}
			pids[m[2]] = m[5]
		}
	}
	if calls != 5 || sidecars != 2 || pids["acme.one"] == pids["acme.two"] {
		t.Errorf("calls %d, sidecar lines %d, pids %v:\n%s", calls, sidecars, pids, r.stdout)
	}

	// --json and -o json: one JSON object per call, one per line, and
	// nothing else on stdout.
	for _, flag := range [][]string{{"--json"}, {"-o", "json"}} {
		args := append([]string{"skills", "loop"}, flag...)
		args = append(args, "--sidecar", bin, "--count", "3", "--interval", "0",
			"--call", `acme.one:acme.t:{"msg":"a"}`, "--call", `acme.none:acme.t`)
		r := cli(t, state, "", args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s %s", flag, r.code, r.stdout, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 3 {
			t.Fatalf("%v: %d lines, want one per call:\n%s", flag, len(lines), r.stdout)
		}
		for i, l := range lines {
			var got loopLine
			dec := json.NewDecoder(strings.NewReader(l))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("%v: line %q is not a call object: %v", flag, l, err)
			}
			want := loopLine{Call: i + 1, Skill: "acme.one", Tool: "acme.t", OK: true, Code: "ok", NewSidecar: i == 0}
			if i == 1 {
				want = loopLine{Call: 2, Skill: "acme.none", Tool: "acme.t", Code: "skill_not_found"}
			}
			if got.Call != want.Call || got.Skill != want.Skill || got.Tool != want.Tool || got.OK != want.OK ||
				got.Code != want.Code || got.NewSidecar != want.NewSidecar || (want.OK && got.SidecarPID == 0) ||
				(!want.OK && got.Error == "") || (want.OK && got.Error != "") {
				t.Errorf("%v: line %d = %+v, want %+v", flag, i, got, want)
			}
		}
	}
	if r := cli(t, state, "", "skills", "loop", "-o", "yaml", "--sidecar", bin, "--count", "2", "--interval", "0",
		"--call", `acme.one:acme.t:{}`); r.code != 0 || strings.Count(r.stdout, "---\n") != 2 || !strings.Contains(r.stdout, "call: 2") {
		t.Errorf("-o yaml: exit %d:\n%s", r.code, r.stdout)
	}
	if r := cli(t, state, "", "skills", "loop", "--json", "--sidecar", bin, "--call", "nope"); r.errorCode(t) != "usage" {
		t.Errorf("bad --call: %s", r.stdout)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
}
