package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/internal/testskill"
)

const installFixtures = "../../testdata/audit"

// skillArtifact describes a test artifact, signed with the 0x01 key as
// publisher acme.
type skillArtifact struct {
	id, version, module string
	hosts, writeRoots   []string
	// review, when set, makes the skill dynamic tool builder output with
	// this review_status.
	review string
	// extra is TOML appended to the manifest (a [config] table, say).
	extra string
}

// write builds the artifact and writes it to dir; it returns the path.
func (s skillArtifact) write(t *testing.T, dir string) string {
	t.Helper()
	quote := func(l []string) string {
		q := make([]string, len(l))
		for i, v := range l {
			q[i] = fmt.Sprintf("%q", v)
		}
		return strings.Join(q, ", ")
	}
	manifest := fmt.Sprintf(`manifest_version = 2
skill_id = %q
name = "Test"
version = %q
publisher = "acme"

[[entrypoints.tools]]
id = "acme.run"
name = "run"
description = "Runs."
input_schema = { type = "object" }
output_schema = { type = "object" }

[capabilities]
http_egress_allowlist = [%s]

[capabilities.filesystem]
write_roots = [%s]

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Test"
`, s.id, s.version, quote(s.hosts), quote(s.writeRoots))
	if s.review != "" {
		manifest += fmt.Sprintf(`
[builder]
experimental = true
source_kind = "prompt"
source_ref = "test"
rollout_flag = "test_flag"
review_status = %q

[builder.checklist]
capability_declaration_path = "skill.toml"
provenance_path = "provenance.json"
test_harness_path = "tests/harness.json"
`, s.review)
	}
	manifest += s.extra
	mod, err := os.ReadFile(filepath.Join(installFixtures, s.module+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, s.id+"-"+s.version+".palyra-skill")
	writeTestArtifact(t, p, manifest, mod)
	return p
}

// writeTestArtifact writes manifest and module, signed with the 0x01×32
// key (publisher acme's key in these tests), as an artifact at p.
func writeTestArtifact(t *testing.T, p, manifest string, module []byte) {
	t.Helper()
	seed, _ := hex.DecodeString(seed01)
	key, err := artifact.ParseSigningKey(seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, testskill.Build(t, manifest, module, key), 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	goodSkill  = skillArtifact{id: "acme.good", version: "1.0.0", module: "palyra_baseline"}
	fsSkill    = skillArtifact{id: "acme.files", version: "1.0.0", module: "wasi_path_open"}
	webSkill   = skillArtifact{id: "acme.web", version: "1.0.0", module: "cap_http_storage", hosts: []string{"api.example.com"}, writeRoots: []string{"cache"}}
	webSkill11 = skillArtifact{id: "acme.web", version: "1.1.0", module: "cap_http_storage", hosts: []string{"api.example.com", "api2.example.com"}, writeRoots: []string{"cache"}}
)

// installOut is the part of skills install --json the tests read.
type installOut struct {
	SkillID        string   `json:"skill_id"`
	Version        string   `json:"version"`
	Status         string   `json:"status"`
	Installed      bool     `json:"installed"`
	Current        bool     `json:"current"`
	Reasons        []string `json:"reasons"`
	CapabilityDiff []string `json:"capability_diff"`
	TrustDecision  string   `json:"trust_decision"`
	SkillsRoot     string   `json:"skills_root"`
}

// failure decodes a --json failure with its details.
func (r result) failure(t *testing.T, details any) string {
	t.Helper()
	var rep struct {
		Error struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code == 0 {
		t.Fatalf("not a failure report (exit %d): %v\n%s", r.code, err, r.stdout)
	}
	if details != nil {
		if err := json.Unmarshal(rep.Error.Details, details); err != nil {
			t.Fatalf("failure details: %v\n%s", err, r.stdout)
		}
	}
	return rep.Error.Code
}

func listEntries(t *testing.T, state string, args ...string) []map[string]any {
	t.Helper()
	var rep struct {
		Count   int              `json:"count"`
		Entries []map[string]any `json:"entries"`
	}
	cli(t, state, "", append([]string{"skills", "list", "--json"}, args...)...).decode(t, &rep)
	if rep.Count != len(rep.Entries) {
		t.Fatalf("count %d, %d entries", rep.Count, len(rep.Entries))
	}
	return rep.Entries
}

// TestDoneMeans walks the acceptance steps through the CLI.
func TestDoneMeans(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	trusted := "acme=" + echoPub

	// 1. A good skill installs active.
	var out installOut
	cli(t, state, "", "skills", "install", "--json", "--artifact", goodSkill.write(t, dir), "--trusted-publisher", trusted).decode(t, &out)
	if out.SkillID != "acme.good" || out.Status != "active" || !out.Installed || !out.Current || out.TrustDecision != "allowlisted" {
		t.Fatalf("good install: %+v", out)
	}

	// 2. A module importing wasi_snapshot_preview1.path_open without a
	// filesystem capability: kept, quarantined, the reason names it.
	fs := fsSkill.write(t, dir)
	r := cli(t, state, "", "skills", "install", "--json", "--artifact", fs)
	var q installOut
	if code := r.failure(t, &q); code != "audit_failed" || q.Status != "quarantined" || !q.Installed {
		t.Fatalf("path_open install: %s %+v", code, q)
	}
	if !slices.ContainsFunc(q.Reasons, func(s string) bool { return strings.Contains(s, "wasi_snapshot_preview1.path_open") }) {
		t.Fatalf("reasons do not name the import: %q", q.Reasons)
	}
	quarantined := listEntries(t, state, "--quarantined-only")
	if len(quarantined) != 1 || quarantined[0]["skill_id"] != "acme.files" || quarantined[0]["status"] != "quarantined" {
		t.Fatalf("quarantined list: %v", quarantined)
	}
	// The text form prints the reasons too, and the error on stderr.
	r = cli(t, state, "", "skills", "install", "--artifact", fs, "--force")
	if r.code != exitFailure || !strings.Contains(r.stdout, "status=quarantined") || !strings.Contains(r.stdout, "reason=") ||
		!strings.Contains(r.stderr, "[audit_failed]") {
		t.Fatalf("text install of the path_open skill: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// 3. Enable with --override is refused: the audit still fails.
	r = cli(t, state, "", "skills", "enable", "acme.files", "--override", "--reason", "reviewed", "--json")
	if code := r.failure(t, nil); code != "audit_failed" || !strings.Contains(r.stdout, "path_open") {
		t.Fatalf("enable --override: %s", r.stdout)
	}
	if e := listEntries(t, state, "--quarantined-only"); len(e) != 1 {
		t.Fatalf("enable changed the status: %v", e)
	}

	// 4. An upgrade with a new HTTP host is refused without
	// --accept-capabilities, with the diff; accepted with it.
	cli(t, state, "", "skills", "install", "--json", "--artifact", webSkill.write(t, dir)).decode(t, &out)
	up := webSkill11.write(t, dir)
	r = cli(t, state, "", "skills", "install", "--json", "--artifact", up)
	var esc installOut
	if code := r.failure(t, &esc); code != "capability_escalation" || esc.Installed ||
		!slices.Contains(esc.CapabilityDiff, "+ http host api2.example.com") {
		t.Fatalf("escalating upgrade: %s", r.stdout)
	}
	r = cli(t, state, "", "skills", "install", "--artifact", up)
	if r.code != exitFailure || !strings.Contains(r.stdout, `capability_diff="+ http host api2.example.com"`) ||
		!strings.Contains(r.stderr, "[capability_escalation]") {
		t.Fatalf("text escalation: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	cli(t, state, "", "skills", "install", "--json", "--artifact", up, "--accept-capabilities").decode(t, &out)
	if out.Version != "1.1.0" || !out.Current || len(out.CapabilityDiff) != 1 {
		t.Fatalf("accepted upgrade: %+v", out)
	}
	r = cli(t, state, "", "skills", "install", "--json", "--artifact", up)
	if code := r.errorCode(t); code != "already_installed" {
		t.Fatalf("reinstall: %s", r.stdout)
	}
}

func TestListJSONShape(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	cli(t, state, "", "skills", "install", "--json", "--artifact", goodSkill.write(t, dir), "--allow-tofu").decode(t, &installOut{})
	entries := listEntries(t, state)
	if len(entries) != 1 {
		t.Fatalf("entries: %v", entries)
	}
	e := entries[0]
	for _, k := range []string{"skill_id", "version", "publisher", "install_state", "status", "trust_decision", "payload_sha256",
		"tool_count", "eligibility", "artifact_sha256", "signature_key_id", "source", "runtime_status", "requirements", "skill_name"} {
		if _, ok := e[k]; !ok {
			t.Errorf("list entry lacks %q: %v", k, e)
		}
	}
	el, _ := e["eligibility"].(map[string]any)
	if e["install_state"] != "installed_current" || e["status"] != "active" || e["trust_decision"] != "tofu_newly_pinned" ||
		e["tool_count"] != float64(1) || el["status"] != "eligible" || el["eligible"] != true {
		t.Fatalf("list entry %v", e)
	}
	r := cli(t, state, "", "skills", "list")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "SKILL ") || !regexp.MustCompile(`\nacme\.good +1\.0\.0 +acme +\* +active +eligible +1 `).MatchString(r.stdout) {
		t.Fatalf("text list:\n%s", r.stdout)
	}
	if e := listEntries(t, state, "--eligible-only"); len(e) != 1 {
		t.Fatalf("eligible-only: %v", e)
	}
}

func TestLifecycleVerbs(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	good := goodSkill.write(t, dir)
	cli(t, state, "", "skills", "install", "--json", "--artifact", good, "--trusted-publisher", "acme="+echoPub).decode(t, &installOut{})
	_ = cli(t, state, "", "skills", "install", "--json", "--artifact", fsSkill.write(t, dir))

	var info struct {
		Inventory       map[string]any    `json:"inventory"`
		Signature       map[string]any    `json:"signature"`
		ArtifactEntries []json.RawMessage `json:"artifact_entries"`
		StatusHistory   []json.RawMessage `json:"status_history"`
	}
	cli(t, state, "", "skills", "info", "ACME.good", "--json").decode(t, &info)
	if info.Inventory["skill_id"] != "acme.good" || info.Signature["key_id"] != "ed25519:34750f98bd59fcfc" || len(info.ArtifactEntries) != 5 || len(info.StatusHistory) != 1 {
		t.Fatalf("info: %+v", info)
	}

	type status struct {
		Status    string `json:"status"`
		Reason    string `json:"reason"`
		Principal string `json:"operator_principal"`
		Changed   bool   `json:"changed"`
	}
	var st status
	cli(t, state, "", "skills", "quarantine", "acme.good", "--reason", "suspicious", "--principal", "user:alice", "--json").decode(t, &st)
	if st.Status != "quarantined" || st.Reason != "suspicious" || st.Principal != "user:alice" {
		t.Fatalf("quarantine: %+v", st)
	}
	r := cli(t, state, "", "skills", "quarantine", "acme.good", "--json")
	if r.code != exitUsage || r.errorCode(t) != "usage" {
		t.Fatalf("quarantine without --reason: %d %s", r.code, r.stdout)
	}
	r = cli(t, state, "", "skills", "enable", "acme.good", "--reason", "ok", "--json")
	if r.errorCode(t) != "override_required" {
		t.Fatalf("enable without override: %s", r.stdout)
	}
	r = cli(t, state, "", "skills", "disable", "acme.good", "--json")
	if r.errorCode(t) != "skill_quarantined" {
		t.Fatalf("disable while quarantined: %s", r.stdout)
	}
	cli(t, state, "", "skills", "enable", "acme.good", "--override", "--reason", "reviewed", "--json").decode(t, &st)
	if st.Status != "active" || !st.Changed {
		t.Fatalf("enable: %+v", st)
	}
	cli(t, state, "", "skills", "disable", "acme.good", "--reason", "maintenance", "--json").decode(t, &st)
	if st.Status != "disabled" {
		t.Fatalf("disable: %+v", st)
	}
	r = cli(t, state, "", "skills", "enable", "acme.good", "--reason", "back")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "skill.enabled skill_id=acme.good version=1.0.0 status=active") {
		t.Fatalf("text enable: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	var checks struct {
		Count   int `json:"count"`
		Results []struct {
			Inventory   map[string]any `json:"inventory"`
			CheckStatus string         `json:"check_status"`
		} `json:"results"`
	}
	cli(t, state, "", "skills", "check", "--json").decode(t, &checks)
	got := map[any]string{}
	for _, c := range checks.Results {
		got[c.Inventory["skill_id"]] = c.CheckStatus
	}
	if checks.Count != 2 || got["acme.good"] != "ready" || got["acme.files"] != "blocked" {
		t.Fatalf("check: %+v", checks)
	}
	if r := cli(t, state, "", "skills", "check", "acme.nope", "--json"); r.errorCode(t) != "skill_not_found" {
		t.Fatalf("check unknown: %s", r.stdout)
	}

	var v struct {
		TrustDecision string `json:"trust_decision"`
	}
	cli(t, state, "", "skills", "verify", "acme.good", "--json").decode(t, &v)
	if v.TrustDecision != "allowlisted" {
		t.Fatalf("verify: %+v", v)
	}

	type auditOut struct {
		Audits []struct {
			Source string `json:"source"`
			Passed bool   `json:"passed"`
		} `json:"audits"`
		Summary struct {
			Audited            int `json:"audited"`
			QuarantineRequired int `json:"quarantine_required"`
		} `json:"summary"`
		Message string `json:"message"`
	}
	var au auditOut
	cli(t, state, "", "skills", "audit", "--json", "--artifact", good).decode(t, &au)
	if len(au.Audits) != 1 || au.Audits[0].Source != "artifact" || !au.Audits[0].Passed {
		t.Fatalf("audit --artifact: %+v", au)
	}
	r = cli(t, state, "", "skills", "audit", "--json")
	if code := r.failure(t, &au); code != "audit_failed" || au.Summary.Audited != 2 || au.Summary.QuarantineRequired != 1 {
		t.Fatalf("audit installed: %s %+v", code, au)
	}
	if r := cli(t, state, "", "skills", "audit", "acme.good", "--artifact", good, "--json"); r.code != exitUsage {
		t.Fatalf("audit with both: %d %s", r.code, r.stdout)
	}
	cli(t, t.TempDir(), "", "skills", "audit", "--json").decode(t, &au)
	if au.Summary.Audited != 0 || au.Message != "no installed skill artifacts were selected for audit" {
		t.Fatalf("audit of nothing: %+v", au)
	}

	var re struct {
		Checked     int `json:"checked"`
		Quarantined int `json:"quarantined"`
	}
	cli(t, state, "", "skills", "reaudit", "--json").decode(t, &re)
	if re.Checked != 2 || re.Quarantined != 0 {
		t.Fatalf("reaudit: %+v", re)
	}

	var rm struct {
		Versions []string `json:"versions"`
	}
	cli(t, state, "", "skills", "remove", "acme.good", "--json").decode(t, &rm)
	if !slices.Equal(rm.Versions, []string{"1.0.0"}) {
		t.Fatalf("remove: %+v", rm)
	}
	if _, err := os.Stat(filepath.Join(state, "skills", "acme.good")); !os.IsNotExist(err) {
		t.Fatalf("skill directory left: %v", err)
	}
	if r := cli(t, state, "", "skills", "remove", "acme.good", "--json"); r.errorCode(t) != "skill_not_found" {
		t.Fatalf("remove again: %s", r.stdout)
	}
	if r := cli(t, state, "", "skills", "info", "--json"); r.code != exitUsage {
		t.Fatalf("info without id: %d %s", r.code, r.stdout)
	}
}

func TestPolicyShowCheck(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	var show struct {
		Source  string `json:"source"`
		Profile struct {
			HTTP struct {
				AllowedHosts []string `json:"allowed_hosts"`
			} `json:"http"`
		} `json:"profile"`
	}
	cli(t, state, "", "policy", "show", "--json").decode(t, &show)
	if show.Source != "default" || !slices.Equal(show.Profile.HTTP.AllowedHosts, []string{"*"}) {
		t.Fatalf("policy show: %+v", show)
	}

	cli(t, state, "", "skills", "install", "--json", "--artifact", webSkill.write(t, dir), "--trusted-publisher", "acme="+echoPub).decode(t, &installOut{})
	strict := filepath.Join(dir, "strict.toml")
	if err := os.WriteFile(strict, []byte("[http]\nallowed_hosts = [\"other.example.org\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var chk struct {
		Valid     bool `json:"valid"`
		Violating int  `json:"violating"`
		Skills    []struct {
			SkillID string   `json:"skill_id"`
			Reasons []string `json:"reasons"`
		} `json:"skills"`
	}
	cli(t, state, "", "policy", "check", "--profile", strict, "--json").decode(t, &chk)
	if !chk.Valid || chk.Violating != 1 || len(chk.Skills) != 1 || !strings.Contains(strings.Join(chk.Skills[0].Reasons, ""), "api.example.com") {
		t.Fatalf("policy check: %+v", chk)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[http]\nallowed_hostz = []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, state, "", "policy", "check", "--profile", bad, "--json"); r.errorCode(t) != "invalid_policy_profile" {
		t.Fatalf("bad profile: %s", r.stdout)
	}

	// <state>/policy.toml is the profile when present: show names it, and
	// a re-audit under it quarantines the skill it refuses.
	if err := os.WriteFile(filepath.Join(state, "policy.toml"), []byte("[http]\nallowed_hosts = [\"other.example.org\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, state, "", "policy", "show")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "# operator profile from "+filepath.Join(state, "policy.toml")+"\n") || !strings.Contains(r.stdout, "other.example.org") {
		t.Fatalf("policy show (text): %s", r.stdout)
	}
	var re struct {
		Quarantined int `json:"quarantined"`
	}
	cli(t, state, "", "skills", "reaudit", "--json").decode(t, &re)
	if re.Quarantined != 1 {
		t.Fatalf("reaudit under the state's profile: %+v", re)
	}
}

func TestErrorCodesListLifecycleCodes(t *testing.T) {
	var rep struct {
		Codes []struct {
			Code string `json:"code"`
		} `json:"codes"`
	}
	cli(t, t.TempDir(), "", "error-codes", "--json").decode(t, &rep)
	have := map[string]bool{}
	for _, c := range rep.Codes {
		have[c.Code] = true
	}
	for _, want := range []string{
		"audit_failed", "policy_violation", "already_installed", "capability_escalation", "skill_not_found",
		"override_required", "skill_quarantined", "install_locked", "installed_artifact_invalid",
		"reserved_artifact_entry", "invalid_policy_profile",
	} {
		if !have[want] {
			t.Errorf("error-codes lacks %q", want)
		}
	}
}
