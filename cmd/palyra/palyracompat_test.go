package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// palyraRun runs palyra in-process with args exactly as given: no
// --state-dir is added, so --skills-dir chooses where the skills go.
func palyraRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// object decodes a successful --json result as a JSON object.
func (r result) object(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	r.decode(t, &v)
	return v
}

// field walks v along keys (object keys, or array indexes as ints).
func field(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %q: %T is not an object", k, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at [%d]: %v is not an array that long", k, v)
			}
			v = a[k]
		}
	}
	return v
}

// palyraBuild is Palyra's lifecycle test's package build command line
// (crates/palyra-cli/tests/skills_lifecycle.rs), with its paths
// substituted: module is the module to package.
func palyraBuild(module, out string) []string {
	return []string{"skills", "package", "build",
		"--manifest", mustAbs(example + "/skill.toml"),
		"--module", module,
		"--asset", mustAbs(example + "/assets/prompt.txt"),
		"--sbom", mustAbs(example + "/sbom.cdx.json"),
		"--provenance", mustAbs(example + "/provenance.json"),
		"--output", out,
		"--signing-key-stdin"}
}

// TestPalyraLifecycleCommandLines runs Palyra's documented `palyra skills`
// command lines (its CLI lifecycle test and the command lines of its
// parser tests, facts §6.5), unchanged but for the paths, against a real
// state directory, and checks each outcome. The module is one that follows
// Palyra's ABI (derived/http_count.wasm): Palyra's own empty example module
// is refused at audit here (checked at the end).
func TestPalyraLifecycleCommandLines(t *testing.T) {
	work := t.TempDir()
	// Nothing may land in the default state directory: --skills-dir
	// chooses.
	def := filepath.Join(work, "default-state")
	t.Setenv("PALYRA_STATE_DIR", def)
	skillsDir := filepath.Join(work, "skills-managed")
	art := filepath.Join(work, "dist", "acme.echo_http.palyra-skill")
	if err := os.MkdirAll(filepath.Dir(art), 0o755); err != nil {
		t.Fatal(err)
	}
	module := mustAbs(vectors + "/derived/http_count.wasm")

	// package build, the signing key on stdin.
	r := palyraRun(t, seed01+"\n", palyraBuild(module, art)...)
	if r.code != 0 || !strings.Contains(r.stdout, "skill_id=acme.echo_http") || !strings.Contains(r.stdout, "key_id=ed25519:34750f98bd59fcfc") {
		t.Fatalf("package build: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Palyra seeds the secret with its own `secrets set SCOPE KEY
	// --value-stdin`; the counterpart here, in the state directory
	// --skills-dir names (a directory not named skills is the state
	// directory itself).
	if r := palyraRun(t, "test-token\n", "--state-dir", skillsDir, "secrets", "set", "skill:acme.echo_http/api_token"); r.code != 0 {
		t.Fatalf("secrets set: exit %d %s", r.code, r.stderr)
	}

	// install --allow-untrusted --non-interactive: Palyra's
	// --allow-untrusted only turns TOFU on, and so does it here.
	inst := palyraRun(t, "", "skills", "install", "--artifact", art, "--skills-dir", skillsDir,
		"--allow-untrusted", "--non-interactive", "--json").object(t)
	if field(t, inst, "skill_id") != "acme.echo_http" || field(t, inst, "trust_decision") != "tofu_newly_pinned" ||
		field(t, inst, "status") != "active" || len(field(t, inst, "missing_secrets").([]any)) != 0 ||
		field(t, inst, "skills_root") != filepath.Join(skillsDir, "skills") {
		t.Fatalf("install: %v", inst)
	}
	if _, err := os.Stat(def); !os.IsNotExist(err) {
		t.Fatalf("the default state directory was touched: %v", err)
	}

	list := []string{"skills", "list", "--skills-dir", skillsDir, "--json"}
	l := palyraRun(t, "", list...).object(t)
	if field(t, l, "count") != 1.0 || field(t, l, "entries", 0, "skill_id") != "acme.echo_http" {
		t.Fatalf("list: %v", l)
	}
	// Palyra's install writes no status row (runtime_status unknown until
	// the test seeds "active" by SQL); here install records it.
	if field(t, l, "entries", 0, "status") != "active" || field(t, l, "entries", 0, "eligibility", "status") != "eligible" {
		t.Fatalf("list entry status: %v", field(t, l, "entries", 0))
	}
	if l := palyraRun(t, "", "skills", "list", "--skills-dir", skillsDir, "--eligible-only", "--json").object(t); field(t, l, "count") != 1.0 {
		t.Fatalf("list --eligible-only: %v", l)
	}
	info := palyraRun(t, "", "skills", "info", "acme.echo_http", "--skills-dir", skillsDir, "--json").object(t)
	if field(t, info, "inventory", "skill_id") != "acme.echo_http" {
		t.Fatalf("info: %v", info)
	}
	chk := palyraRun(t, "", "skills", "check", "acme.echo_http", "--skills-dir", skillsDir, "--allow-untrusted", "--json").object(t)
	if field(t, chk, "count") != 1.0 || field(t, chk, "results", 0, "check_status") != "ready" {
		t.Fatalf("check: %v", chk)
	}
	ver := palyraRun(t, "", "skills", "verify", "acme.echo_http", "--skills-dir", skillsDir, "--allow-untrusted", "--json").object(t)
	if field(t, ver, "trust_decision") != "tofu_pinned" {
		t.Fatalf("verify: %v", ver)
	}
	// The parser tests' verify line: --version, no --skills-dir (the
	// state directory is then the default one: empty, so not found).
	if r := palyraRun(t, "", "skills", "verify", "acme.echo_http", "--version", "1.2.3", "--allow-untrusted", "--json"); r.code == 0 || r.errorCode(t) != "skill_not_found" {
		t.Fatalf("verify of another state dir: exit %d %s", r.code, r.stdout)
	}

	// The tool runs, through Palyra's exit-code rule (the result is the
	// exit code: one granted host).
	sc := sidecarBinary(t)
	runOut := palyraRun(t, "", "skills", "run", "acme.echo_http", "acme.echo", "--input", `{"text":"hi"}`, "--skills-dir", skillsDir, "--sidecar", sc)
	if runOut.code != 0 || strings.TrimSpace(runOut.stdout) != `{"exit_code":1}` {
		t.Fatalf("run: exit %d\n%s%s", runOut.code, runOut.stdout, runOut.stderr)
	}

	// audit with Palyra's trust flags: a trust store of its own, with
	// the publisher allowlisted in it by --trusted-publisher.
	ts := filepath.Join(work, "state", "skills-trust.json")
	aud := palyraRun(t, "", "skills", "audit", "acme.echo_http", "--version", "1.0.0", "--skills-dir", skillsDir,
		"--trust-store", ts, "--trusted-publisher", "acme="+echoPub, "--allow-untrusted", "--json").object(t)
	if field(t, aud, "summary", "audited") != 1.0 || field(t, aud, "audits", 0, "passed") != true ||
		field(t, aud, "audits", 0, "report", "trust_decision") != "allowlisted" || field(t, aud, "trust_store") != ts {
		t.Fatalf("audit: %v", aud)
	}
	if data, err := os.ReadFile(ts); err != nil || !strings.Contains(string(data), echoPub) {
		t.Fatalf("--trusted-publisher was not persisted in %s: %v %s", ts, err, data)
	}

	// quarantine, the parser test's line: --device-id and --channel have
	// no counterpart and are refused, saying what to use.
	q := palyraRun(t, "", "skill", "quarantine", "acme.echo_http", "--version", "1.0.0", "--reason", "manual security hold",
		"--url", "http://127.0.0.1:7142", "--token", "admin-token", "--principal", "user:ops",
		"--device-id", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--channel", "cli", "--json")
	if q.code != exitUsage || q.errorCode(t) != "usage" || !strings.Contains(q.stdout, "--principal") ||
		!strings.Contains(q.stdout, "--device-id is Palyra's flag") || !strings.Contains(q.stdout, "--channel is Palyra's flag") {
		t.Fatalf("quarantine with --device-id/--channel: exit %d %s", q.code, q.stdout)
	}
	// Without them, locally.
	qo := palyraRun(t, "", "skill", "quarantine", "acme.echo_http", "--version", "1.0.0", "--reason", "manual security hold",
		"--principal", "user:ops", "--skills-dir", skillsDir, "--json").object(t)
	if field(t, qo, "status") != "quarantined" || field(t, qo, "operator_principal") != "user:ops" || field(t, qo, "reason") != "manual security hold" {
		t.Fatalf("quarantine: %v", qo)
	}
	if l := palyraRun(t, "", "skills", "list", "--skills-dir", skillsDir, "--quarantined-only", "--json").object(t); field(t, l, "count") != 1.0 {
		t.Fatalf("list --quarantined-only: %v", l)
	}
	en := palyraRun(t, "", "skills", "enable", "acme.echo_http", "--version", "1.0.0", "--override", "--reason", "operator re-enabled after review",
		"--skills-dir", skillsDir, "--json").object(t)
	if field(t, en, "status") != "active" || field(t, en, "operator_principal") != "user:local" {
		t.Fatalf("enable: %v", en)
	}

	// update from a registry the skill was not installed from: refused,
	// naming the recorded source and the install command to use.
	reg := t.TempDir()
	up := palyraRun(t, "", "skills", "update", "--registry-dir", reg, "--skill-id", "acme.echo_http", "--skills-dir", skillsDir, "--json")
	if up.code != exitUsage || !strings.Contains(up.stdout, "local_artifact") || !strings.Contains(up.stdout, "palyra skills install --registry-dir") {
		t.Fatalf("update from another source: exit %d %s", up.code, up.stdout)
	}

	rm := palyraRun(t, "", "skills", "remove", "acme.echo_http", "--skills-dir", skillsDir, "--json").object(t)
	if vs := field(t, rm, "versions").([]any); len(vs) != 1 || vs[0] != "1.0.0" || field(t, rm, "skill_id") != "acme.echo_http" {
		t.Fatalf("remove: %v", rm)
	}
	if l := palyraRun(t, "", list...).object(t); field(t, l, "count") != 0.0 || len(field(t, l, "entries").([]any)) != 0 {
		t.Fatalf("list after remove: %v", l)
	}

	// A tampered artifact (one byte flipped mid-file) installs nothing.
	data, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xFF
	bad := filepath.Join(work, "dist", "tampered.palyra-skill")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := palyraRun(t, "", "skills", "install", "--artifact", bad, "--skills-dir", skillsDir, "--allow-untrusted", "--non-interactive")
	if tr.code == 0 || !strings.Contains(tr.stderr, "palyra: ") {
		t.Fatalf("tampered install: exit %d %s", tr.code, tr.stderr)
	}
	if l := palyraRun(t, "", list...).object(t); field(t, l, "count") != 0.0 {
		t.Fatalf("list after the tampered install: %v", l)
	}

	// audit of an empty (here: missing) skills dir succeeds with Palyra's
	// message.
	empty := palyraRun(t, "", "skills", "audit", "--skills-dir", filepath.Join(work, "empty-skills"), "--trust-store", filepath.Join(work, "trust-store.json"), "--json").object(t)
	if field(t, empty, "summary", "audited") != 0.0 || field(t, empty, "message") != "no installed skill artifacts were selected for audit" {
		t.Fatalf("empty audit: %v", empty)
	}

	// Palyra's example unchanged, its 8-byte module with no export:
	// installed quarantined, the audit's wasm_entrypoint finding named.
	orig := filepath.Join(work, "dist", "original.palyra-skill")
	if r := palyraRun(t, seed01+"\n", palyraBuild(mustAbs(example+"/module.wasm"), orig)...); r.code != 0 {
		t.Fatalf("build of the original example: %s", r.stderr)
	}
	oi := palyraRun(t, "", "skills", "install", "--artifact", orig, "--skills-dir", filepath.Join(work, "orig"), "--allow-untrusted", "--non-interactive", "--json")
	if oi.code != exitFailure || oi.errorCode(t) != "audit_failed" {
		t.Fatalf("install of the empty example: exit %d %s", oi.code, oi.stdout)
	}
	var rep errorReport
	if err := json.Unmarshal([]byte(oi.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	det := rep.Error.Details
	if field(t, det, "status") != "quarantined" || field(t, det, "installed") != true {
		t.Fatalf("empty example install details: %v", det)
	}
	found := false
	for _, c := range field(t, det, "audit", "checks").([]any) {
		if field(t, c, "check_id") == "wasm_entrypoint" {
			found = field(t, c, "status") == "fail" && strings.Contains(field(t, c, "message").(string), "exports no entrypoint")
		}
	}
	if !found {
		t.Fatalf("the empty example's audit has no failed wasm_entrypoint check: %v", field(t, det, "audit", "checks"))
	}
}

// TestPalyraFlagRefusals: the Palyra flags that cannot be honoured as
// given are refused with a usage error that says what to use instead.
func TestPalyraFlagRefusals(t *testing.T) {
	work := t.TempDir()
	t.Setenv("PALYRA_STATE_DIR", filepath.Join(work, "default"))
	// A Palyra installation's own skills root.
	palyraRoot := filepath.Join(work, "palyra-state", "skills")
	if err := os.MkdirAll(palyraRoot, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(palyraRoot, "installed-index.json"), []byte(`{"schema_version":1,"entries":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string // in the message
	}{
		{"skills-dir with a different state-dir", []string{"--state-dir", filepath.Join(work, "a"), "skills", "list", "--skills-dir", filepath.Join(work, "b", "skills")}, "give one of them"},
		{"skills-dir of a Palyra installation", []string{"skills", "list", "--skills-dir", palyraRoot}, "installed-index.json"},
		{"skills-dir with a daemon", []string{"skills", "list", "--skills-dir", filepath.Join(work, "c"), "--url", "http://127.0.0.1:1"}, "local-only"},
		{"device-id", []string{"skills", "enable", "acme.x", "--override", "--device-id", "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, "--principal"},
		{"update --skill-id and another SKILL_ID", []string{"skills", "update", "acme.y", "--skill-id", "acme.x"}, "not both"},
		{"update with both registries", []string{"skills", "update", "--skill-id", "acme.x", "--registry-dir", work, "--registry-url", "https://example.org/index.json"}, "one of"},
		{"trusted-publisher with a daemon", []string{"skills", "verify", "acme.x", "--trusted-publisher", "acme=" + echoPub, "--url", "http://127.0.0.1:1"}, "local-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := palyraRun(t, "", append(tt.args, "--json")...)
			if r.code != exitUsage || r.errorCode(t) != "usage" || !strings.Contains(r.stdout, tt.want) {
				t.Fatalf("exit %d %s; want a usage error saying %q", r.code, r.stdout, tt.want)
			}
		})
	}
	// Nothing was created where the refused command lines pointed.
	for _, p := range []string{filepath.Join(work, "a"), filepath.Join(work, "b"), filepath.Join(work, "c"), filepath.Join(palyraRoot, "inventory.db"), filepath.Join(work, "palyra-state", "inventory.db")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused command: %v", p, err)
		}
	}
}

// TestPalyraHiddenFlags: Palyra's spellings are accepted but do not clutter
// --help; each is listed in docs/palyra-compat.md.
func TestPalyraHiddenFlags(t *testing.T) {
	doc, err := os.ReadFile("../../docs/palyra-compat.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cmd, flag string }{
		{"install", "allow-untrusted"}, {"install", "skill-id"}, {"install", "skills-dir"}, {"install", "non-interactive"},
		{"update", "allow-untrusted"}, {"update", "skill-id"}, {"update", "registry-dir"}, {"update", "registry-url"}, {"update", "trusted-publisher"},
		{"audit", "allow-untrusted"}, {"audit", "trusted-publisher"},
		{"check", "allow-untrusted"}, {"check", "trusted-publisher"},
		{"verify", "allow-untrusted"}, {"verify", "trusted-publisher"},
		{"quarantine", "device-id"}, {"quarantine", "channel"}, {"enable", "device-id"}, {"enable", "channel"},
		{"list", "skills-dir"}, {"info", "skills-dir"}, {"remove", "skills-dir"},
	} {
		r := palyraRun(t, "", "skills", tc.cmd, "--help")
		if r.code != 0 {
			t.Fatalf("%s --help: %d %s", tc.cmd, r.code, r.stderr)
		}
		if strings.Contains(r.stdout, "--"+tc.flag+" ") {
			t.Errorf("skills %s --help shows Palyra's --%s", tc.cmd, tc.flag)
		}
		if !strings.Contains(string(doc), "--"+tc.flag) {
			t.Errorf("docs/palyra-compat.md does not mention --%s", tc.flag)
		}
	}
}

// TestPalyraRegistryCommandLines: Palyra's install and update from a local
// registry (--registry-dir with --skill-id, its parser tests' lines), with
// --skills-dir: install takes the version named, update takes the newest
// from the registry the skill came from, then reports already_current.
func TestPalyraRegistryCommandLines(t *testing.T) {
	work := t.TempDir()
	t.Setenv("PALYRA_STATE_DIR", filepath.Join(work, "default"))
	reg := filepath.Join(work, "registry")
	if err := os.MkdirAll(reg, 0o755); err != nil {
		t.Fatal(err)
	}
	module := mustAbs(vectors + "/derived/http_count.wasm")
	// 1.0.0 and 1.1.0 of the example (the manifest's version changed).
	mf, err := os.ReadFile(example + "/skill.toml")
	if err != nil {
		t.Fatal(err)
	}
	mf11 := filepath.Join(work, "skill-1.1.0.toml")
	if err := os.WriteFile(mf11, bytes.Replace(mf, []byte(`version = "1.0.0"`), []byte(`version = "1.1.0"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := palyraRun(t, seed01+"\n", palyraBuild(module, filepath.Join(reg, "acme.echo_http-1.0.0.palyra-skill"))...); r.code != 0 {
		t.Fatalf("build 1.0.0: %s", r.stderr)
	}
	args := palyraBuild(module, filepath.Join(reg, "acme.echo_http-1.1.0.palyra-skill"))
	args[4] = mf11 // --manifest
	if r := palyraRun(t, seed01+"\n", args...); r.code != 0 {
		t.Fatalf("build 1.1.0: %s", r.stderr)
	}
	if r := palyraRun(t, indexSeed, "skills", "registry", "build", "--dir", reg, "--signing-key-stdin", "--publisher", "hub"); r.code != 0 {
		t.Fatalf("registry build: %s", r.stderr)
	}
	skillsDir := filepath.Join(work, "state", "skills")

	inst := palyraRun(t, "", "skills", "install", "--registry-dir", reg, "--skill-id", "acme.echo_http", "--version", "1.0.0",
		"--skills-dir", skillsDir, "--allow-untrusted", "--non-interactive", "--json").object(t)
	if field(t, inst, "version") != "1.0.0" || field(t, inst, "source", "kind") != "local_registry" ||
		field(t, inst, "skills_root") != skillsDir {
		t.Fatalf("install from the registry: %v", inst)
	}
	// A directory named skills is <state-dir>/skills: its parent is the
	// state directory, so --state-dir work/state sees the same skills.
	if l := palyraRun(t, "", "--state-dir", filepath.Join(work, "state"), "skills", "list", "--json").object(t); field(t, l, "count") != 1.0 {
		t.Fatalf("list with the state dir: %v", l)
	}

	update := []string{"skills", "update", "--registry-dir", reg, "--skill-id", "acme.echo_http", "--skills-dir", skillsDir, "--json"}
	up := palyraRun(t, "", update...).object(t)
	if field(t, up, "results", 0, "updated") != true || field(t, up, "results", 0, "from_version") != "1.0.0" || field(t, up, "results", 0, "to_version") != "1.1.0" {
		t.Fatalf("update: %v", up)
	}
	again := palyraRun(t, "", update...).object(t)
	if field(t, again, "results", 0, "updated") != false || field(t, again, "results", 0, "reason") != "already_current" {
		t.Fatalf("second update: %v", again)
	}
	info := palyraRun(t, "", "skills", "info", "acme.echo_http", "--skills-dir", skillsDir, "--json").object(t)
	if field(t, info, "inventory", "version") != "1.1.0" {
		t.Fatalf("info after update: %v", field(t, info, "inventory"))
	}
}

// TestPalyraNonInteractive: under Palyra's --non-interactive the one
// command that prompts, trust accept-changes, fails instead of asking (and
// says so), and leaves the store refused; --yes still accepts.
func TestPalyraNonInteractive(t *testing.T) {
	state := t.TempDir()
	store := filepath.Join(t.TempDir(), "trust-store.json")
	// A store sealed by a legitimate change, then edited by hand.
	if r := cli(t, state, "", "skills", "package", "verify", "--artifact", mustAbs(vectors+"/derived/acme.echo_http-1.0.0.palyra-skill"), "--trust-store", store, "--trusted-publisher", "acme="+echoPub); r.code != 0 {
		t.Fatalf("verify: %s", r.stderr)
	}
	data, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"trusted_publishers": {`, `"trusted_publishers": {
    "evil": ["`+echoPub+`"],`, 1)
	if edited == string(data) {
		t.Fatalf("unexpected trust store layout: %s", data)
	}
	if err := os.WriteFile(store, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	r := cli(t, state, "", "trust", "accept-changes", "--trust-store", store, "--non-interactive", "--json")
	if r.code != exitUsage || r.errorCode(t) != "usage" || !strings.Contains(r.stdout, "--non-interactive forbids prompting") {
		t.Fatalf("accept-changes --non-interactive: exit %d %s", r.code, r.stdout)
	}
	if r := cli(t, state, "", "trust", "show", "--trust-store", store, "--json"); r.code != exitFailure || r.errorCode(t) != "trust_store_tampered" {
		t.Fatalf("the store was accepted: exit %d %s", r.code, r.stdout)
	}
	if r := cli(t, state, "", "trust", "accept-changes", "--trust-store", store, "--non-interactive", "--yes", "--json"); r.code != 0 {
		t.Fatalf("accept-changes --non-interactive --yes: exit %d %s", r.code, r.stdout)
	}
}
