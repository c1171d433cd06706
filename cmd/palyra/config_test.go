package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const cliConfigTable = `
[config]
sensitive = ["api_token"]

[config.schema]
type = "object"
required = ["endpoint", "api_token"]

[config.schema.properties]
endpoint = { type = "string", pattern = "^https://" }
api_token = { type = "string", minLength = 8 }
retries = { type = "integer", default = 3 }
label = { type = "string" }
tags = { type = "array", items = { type = "string" } }
`

// TestSkillsConfig drives skills config through the CLI: a skill whose
// required config is missing lists as not eligible with the keys; values
// are typed by the schema (a string property keeps "123" a string, an
// array property parses JSON); a sensitive key is refused on the command
// line and read from stdin with --stdin, and no output ever shows it; a
// value that does not fit fails with config_invalid naming the key; unset
// brings a key back to missing.
func TestSkillsConfig(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	const secret = "tok-very-secret"
	a := skillArtifact{id: "acme.cfg", version: "1.0.0", module: "palyra_baseline", extra: cliConfigTable}
	if r := cli(t, state, "", "skills", "install", "--artifact", a.write(t, dir), "--trusted-publisher", "acme="+echoPub); r.code != 0 ||
		!strings.Contains(r.stdout, "config_missing=api_token") || !strings.Contains(r.stdout, "config_missing=endpoint") {
		t.Fatalf("install: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if e := listEntries(t, state); len(e) != 1 || e[0]["missing_config"] == nil || !strings.Contains(toJSON(e[0]["eligibility"]), "config_missing") {
		t.Fatalf("list: %v", e)
	}
	r := cli(t, state, "", "skills", "info", "acme.cfg")
	if r.code != 0 || !strings.Contains(r.stdout, "Missing config") {
		t.Fatalf("info: %s %s", r.stdout, r.stderr)
	}

	r = cli(t, state, "", "skills", "config", "set", "acme.cfg", "api_token="+secret, "--json")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "--stdin api_token") || strings.Contains(r.stdout+r.stderr, secret) {
		t.Fatalf("a sensitive value on the command line: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, state, "", "skills", "config", "set", "acme.cfg", "retries=many", "-o", "json")
	if code := r.errorCode(t); code != "config_invalid" || !strings.Contains(r.stdout, "retries") {
		t.Fatalf("an unfit value: %s\n%s", code, r.stdout)
	}
	r = cli(t, state, secret+"\n", "skills", "config", "set", "acme.cfg", "endpoint=https://api.example.com", "label=123", `tags=["a","b"]`, "--stdin", "api_token")
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, secret) || !strings.Contains(r.stdout, "***") {
		t.Fatalf("set: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var got struct {
		Entries []struct {
			Key   string          `json:"key"`
			Set   bool            `json:"set"`
			Value json.RawMessage `json:"value"`
		} `json:"entries"`
		Missing []string `json:"missing"`
	}
	r = cli(t, state, "", "skills", "config", "get", "acme.cfg", "-o", "json")
	if strings.Contains(r.stdout, secret) {
		t.Fatalf("get shows the secret: %s", r.stdout)
	}
	r.decode(t, &got)
	want := map[string]string{"api_token": `"***"`, "endpoint": `"https://api.example.com"`, "label": `"123"`, "tags": `["a","b"]`, "retries": ""}
	for _, e := range got.Entries {
		var v bytes.Buffer
		if len(e.Value) > 0 {
			json.Compact(&v, e.Value)
		}
		if w, ok := want[e.Key]; !ok || v.String() != w || e.Set != (w != "") {
			t.Fatalf("entry %s = %s (set %v), want %s", e.Key, e.Value, e.Set, w)
		}
	}
	if len(got.Missing) != 0 {
		t.Fatalf("missing after set: %v", got.Missing)
	}
	if e := listEntries(t, state); len(e) != 1 || e[0]["missing_config"] != nil {
		t.Fatalf("list after set: %v", e)
	}
	r = cli(t, state, "", "skills", "config", "get", "acme.cfg")
	if r.code != 0 || !strings.Contains(r.stdout, "(default 3)") || strings.Contains(r.stdout, secret) {
		t.Fatalf("get as text: %s %s", r.stdout, r.stderr)
	}
	r = cli(t, state, "", "skills", "config", "unset", "acme.cfg", "api_token")
	if r.code != 0 || !strings.Contains(r.stdout, "missing (the skill is not eligible until set): api_token") {
		t.Fatalf("unset: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, state, "", "skills", "config", "unset", "acme.cfg", "nope", "-o", "json")
	if code := r.errorCode(t); code != "config_invalid" {
		t.Fatalf("unset of an unknown key: %s", code)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
