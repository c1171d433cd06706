package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
)

// TestListIsATable: skills list prints an aligned table with the columns
// a person scans (not key=value lines), quotes a value with a space (the
// status reason under -o wide), and -o json, --json and -o yaml carry the
// same result.
func TestListIsATable(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	state, dir := t.TempDir(), t.TempDir()
	cli(t, state, "", "skills", "install", "--json", "--artifact", goodSkill.write(t, dir), "--allow-tofu").decode(t, &installOut{})
	cli(t, state, "", "skills", "install", "--json", "--artifact", webSkill.write(t, dir), "--allow-tofu").decode(t, &installOut{})
	if r := cli(t, state, "", "skills", "disable", "acme.web", "--reason", "cli test"); r.code != 0 {
		t.Fatalf("disable: %s%s", r.stdout, r.stderr)
	}

	r := cli(t, state, "", "skills", "list")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 3 {
		t.Fatalf("list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.Fields(lines[0]); !reflect.DeepEqual(got, []string{"SKILL", "VERSION", "PUBLISHER", "CURRENT", "STATUS", "ELIGIBILITY", "TOOLS", "TRUST"}) {
		t.Fatalf("header %q", lines[0])
	}
	if got := strings.Fields(lines[1]); !reflect.DeepEqual(got, []string{"acme.good", "1.0.0", "acme", "*", "active", "eligible", "1", "tofu_newly_pinned"}) {
		t.Errorf("row %q", lines[1])
	}
	if got := strings.Fields(lines[2]); len(got) != 8 || got[0] != "acme.web" || got[4] != "disabled" {
		t.Errorf("row %q", lines[2])
	}
	// Aligned: each column starts at the same offset on every line.
	for _, col := range []string{"VERSION", "STATUS", "TOOLS"} {
		at := strings.Index(lines[0], col)
		for _, l := range lines[1:] {
			if at >= len(l) || l[at-1] != ' ' || l[at] == ' ' {
				t.Errorf("column %s is not aligned at %d in %q", col, at, l)
			}
		}
	}
	if strings.Contains(r.stdout, "=") {
		t.Errorf("text list still prints key=value:\n%s", r.stdout)
	}

	wide := cli(t, state, "", "skills", "list", "-o", "wide")
	if wide.code != 0 || !strings.Contains(wide.stdout, "PAYLOAD_SHA256") || !strings.Contains(wide.stdout, `"cli test"`) {
		t.Errorf("-o wide lacks the wide columns or the quoted reason:\n%s", wide.stdout)
	}

	var fromJSON, fromAlias, fromYAML map[string]any
	if err := json.Unmarshal([]byte(cli(t, state, "", "skills", "list", "-o", "json").stdout), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(cli(t, state, "", "skills", "list", "--json").stdout), &fromAlias); err != nil {
		t.Fatal(err)
	}
	y := cli(t, state, "", "skills", "list", "-o", "yaml")
	if err := yaml.Unmarshal([]byte(y.stdout), &fromYAML); err != nil || !strings.HasPrefix(y.stdout, "count: 2\n") {
		t.Fatalf("-o yaml: %v\n%s", err, y.stdout)
	}
	if !reflect.DeepEqual(fromJSON, fromAlias) || !reflect.DeepEqual(fromJSON, fromYAML) {
		t.Errorf("-o json, --json and -o yaml differ:\n%v\n%v\n%v", fromJSON, fromAlias, fromYAML)
	}

	if r := cli(t, state, "", "skills", "list", "--publisher", "nobody"); r.code != 0 || !strings.HasPrefix(r.stdout, "No installed skill matches the filters") {
		t.Errorf("empty filtered list: %q", r.stdout)
	}
	if r := cli(t, state, "", "skills", "list", "-o", "table"); r.code != exitUsage || !strings.Contains(r.stderr, "text, wide, json, yaml") {
		t.Errorf("-o table: exit %d %s", r.code, r.stderr)
	}
}

// TestInfoListsTools: skills info in text shows the tools with their
// descriptions (what skills run needs) and the grants, as labelled lines.
func TestInfoListsTools(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	state, dir := t.TempDir(), t.TempDir()
	cli(t, state, "", "skills", "install", "--json", "--artifact", webSkill.write(t, dir), "--allow-tofu").decode(t, &installOut{})
	r := cli(t, state, "", "skills", "info", "acme.web")
	if r.code != 0 {
		t.Fatalf("info: exit %d %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"Skill:", "acme.web\n", "Status:", "active\n",
		"Tools:\n  TOOL      APPROVAL  SENSITIVE  DESCRIPTION\n  acme.run  no        no         Runs.\n",
		"palyra skills run acme.web acme.run --input JSON",
		"Grants:\n", "HTTP hosts:", "api.example.com",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("info lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Grants changed") || strings.Contains(r.stdout, "Refused by") {
		t.Errorf("grants reported changed under the install's profile:\n%s", r.stdout)
	}

	// After a profile change, info shows the grants a call gets now and
	// says that they differ from the install's, in text and in JSON.
	profile := filepath.Join(dir, "strict.toml")
	if err := os.WriteFile(profile, []byte("[secrets]\nallow_read = true\n[http]\nmax_redirects = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, state, "", "policy", "set", "--profile", profile); r.code != 0 {
		t.Fatalf("policy set: exit %d %s", r.code, r.stderr)
	}
	r = cli(t, state, "", "skills", "info", "acme.web")
	if r.code != 0 || !strings.Contains(r.stdout, "Grants changed since install") || !strings.Contains(r.stdout, "- http_max_redirects") {
		t.Errorf("info after a profile change: exit %d\n%s", r.code, r.stdout)
	}
	var info struct {
		Grants struct {
			HTTP struct {
				MaxRedirects int64 `json:"max_redirects"`
			} `json:"http"`
		} `json:"grants"`
		InstallGrants struct {
			HTTP struct {
				MaxRedirects int64 `json:"max_redirects"`
			} `json:"http"`
		} `json:"install_grants"`
		GrantsChanged bool     `json:"grants_changed"`
		GrantsChanges []string `json:"grants_changes"`
	}
	cli(t, state, "", "skills", "info", "acme.web", "--json").decode(t, &info)
	if !info.GrantsChanged || len(info.GrantsChanges) == 0 || info.Grants.HTTP.MaxRedirects != 1 || info.InstallGrants.HTTP.MaxRedirects <= 1 {
		t.Errorf("info JSON after a profile change: %+v", info)
	}
}

// TestStateDirMissing: a command that only reads refuses a state
// directory that does not exist with state_dir_missing, naming the path
// and what set it, and leaves it absent; a command that writes creates it.
func TestStateDirMissing(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	unsetEnv(t, cliconfig.EnvTrustStore)
	for _, args := range [][]string{
		{"skills", "list"}, {"skills", "info", "acme.web"}, {"skills", "check"}, {"skills", "audit"},
		{"hooks", "list"}, {"secrets", "list"}, {"trust", "show"}, {"policy", "show"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			absent := filepath.Join(t.TempDir(), "typo")
			r := cli(t, absent, "", append(args, "--json")...)
			if code := r.errorCode(t); code != "state_dir_missing" || !strings.Contains(r.stdout, absent) || !strings.Contains(r.stdout, "set by --state-dir") {
				t.Fatalf("%s: %s", code, r.stdout)
			}
			r = cli(t, absent, "", args...)
			if r.code != exitFailure || !strings.HasSuffix(strings.SplitN(r.stderr, "\n", 2)[0], "[state_dir_missing]") || !strings.Contains(r.stderr, "hint: give the right --state-dir") {
				t.Fatalf("text: exit %d %s", r.code, r.stderr)
			}
			if _, err := os.Stat(absent); !os.IsNotExist(err) {
				t.Fatalf("%s created the state directory: %v", args, err)
			}
		})
	}
	// What set it is named: here the environment.
	absent := filepath.Join(t.TempDir(), "fromenv")
	t.Setenv(cliconfig.EnvStateDir, absent)
	var out, errb strings.Builder
	if code := run(t.Context(), []string{"skills", "list"}, strings.NewReader(""), &out, &errb); code != exitFailure ||
		!strings.Contains(errb.String(), absent+" (set by $PALYRA_STATE_DIR)") {
		t.Fatalf("from the environment: exit %d %s", code, errb.String())
	}
	// A command that writes still makes it.
	if r := cli(t, absent, "value", "secrets", "set", "global/x"); r.code != 0 {
		t.Fatalf("secrets set on a new state directory: %s", r.stderr)
	}
	if r := cli(t, absent, "", "secrets", "list"); r.code != 0 || !strings.Contains(r.stdout, "global/x") {
		t.Fatalf("secrets list after: %s %s", r.stdout, r.stderr)
	}
}

// TestErrorsHaveOnePrefixAndNameTheFlag: a text failure is one line
// starting "palyra: " once, ending with the code, then a hint naming the
// exact flag; --json carries the same hint.
func TestErrorsHaveOnePrefixAndNameTheFlag(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	state, dir := t.TempDir(), t.TempDir()
	good := goodSkill.write(t, dir)
	cli(t, state, "", "skills", "install", "--json", "--artifact", good, "--allow-tofu").decode(t, &installOut{})
	if r := cli(t, state, "", "skills", "quarantine", "acme.good", "--reason", "test"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, tc := range []struct {
		args       []string
		code, hint string
	}{
		{[]string{"skills", "enable", "acme.good", "--reason", "r"}, "override_required", "--override"},
		{[]string{"skills", "install", "--artifact", good}, "already_installed", "--force"},
		{[]string{"skills", "remove", "acme.good", "--version", "9.9.9", "--purge-storage"}, "", ""},
		{[]string{"skills", "lst"}, "usage", "palyra skills --help"},
	} {
		r := cli(t, state, "", tc.args...)
		first, rest, _ := strings.Cut(r.stderr, "\n")
		if r.code == 0 || !strings.HasPrefix(first, "palyra: ") || strings.Contains(first, "palyra: palyra:") || strings.Count(first, "palyra:") != 1 {
			t.Errorf("%v: exit %d, stderr %q", tc.args, r.code, r.stderr)
		}
		if tc.code == "" {
			continue
		}
		if !strings.HasSuffix(first, "["+tc.code+"]") || !strings.Contains(rest, "hint: ") || !strings.Contains(rest, tc.hint) {
			t.Errorf("%v: want [%s] and a hint naming %s:\n%s", tc.args, tc.code, tc.hint, r.stderr)
		}
		j := cli(t, state, "", append(tc.args, "--json")...)
		var rep errorReport
		if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil || rep.Error.Code != tc.code || !strings.Contains(rep.Error.Hint, tc.hint) {
			t.Errorf("%v --json: %v %s", tc.args, err, j.stdout)
		}
	}
	if r := cli(t, state, "", "skills", "lst"); !strings.Contains(r.stderr, "did you mean list?") {
		t.Errorf("no suggestion: %s", r.stderr)
	}
	if r := cli(t, state, "", "skils", "list"); !strings.Contains(r.stderr, "did you mean skills?") {
		t.Errorf("no suggestion at the root: %s", r.stderr)
	}
}

// TestCompletion: cobra's __complete offers the installed skill ids, the
// skill's versions for --version, its tools for skills run and hooks bind
// --tool, and the output formats; on a missing state directory it offers
// nothing and creates nothing.
func TestCompletion(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	state, dir := t.TempDir(), t.TempDir()
	cli(t, state, "", "skills", "install", "--json", "--artifact", webSkill.write(t, dir), "--allow-tofu").decode(t, &installOut{})
	cli(t, state, "", "skills", "install", "--json", "--artifact", webSkill11.write(t, dir), "--allow-tofu", "--accept-capabilities").decode(t, &installOut{})
	cli(t, state, "", "skills", "install", "--json", "--artifact", goodSkill.write(t, dir), "--allow-tofu").decode(t, &installOut{})
	if r := cli(t, state, "", "hooks", "bind", "on-install", "--event", "skill:installed", "--skill", "acme.good", "--tool", "acme.run"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	complete := func(state string, args ...string) []string {
		t.Helper()
		r := cli(t, state, "", append([]string{"__complete"}, args...)...)
		if r.code != 0 {
			t.Fatalf("__complete %v: exit %d %s", args, r.code, r.stderr)
		}
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if !strings.HasPrefix(l, ":") {
				out = append(out, strings.SplitN(l, "\t", 2)[0])
			}
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"skills", "info", ""}, []string{"acme.good", "acme.web"}},
		{[]string{"skills", "info", "acme.w"}, []string{"acme.web"}},
		{[]string{"skills", "enable", ""}, []string{"acme.good", "acme.web"}},
		{[]string{"skills", "remove", "acme.web", "--version", ""}, []string{"1.0.0", "1.1.0"}},
		{[]string{"skills", "info", "acme.good", "--version", ""}, []string{"1.0.0"}},
		{[]string{"skills", "run", ""}, []string{"acme.good", "acme.web"}},
		{[]string{"skills", "run", "acme.web", ""}, []string{"acme.run"}},
		{[]string{"skills", "run", "acme.web", "acme.run", ""}, nil},
		{[]string{"hooks", "bind", "h", "--skill", "acme.g"}, []string{"acme.good"}},
		{[]string{"hooks", "bind", "h", "--skill", "acme.good", "--tool", ""}, []string{"acme.run"}},
		{[]string{"hooks", "remove", ""}, []string{"on-install"}},
		{[]string{"skills", "list", "-o", ""}, []string{"text", "wide", "json", "yaml"}},
	} {
		got := complete(state, tc.args...)
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("__complete %q = %q, want %q", tc.args, got, tc.want)
		}
	}
	absent := filepath.Join(t.TempDir(), "absent")
	if got := complete(absent, "skills", "info", ""); len(got) != 0 {
		t.Errorf("completion on a missing state: %q", got)
	}
	if _, err := os.Stat(absent); !os.IsNotExist(err) {
		t.Errorf("completion created the state directory: %v", err)
	}
}

// TestAuditAndInspectText: skills audit prints a summary line and a table
// of the audited versions; package inspect prints the artifact as a
// labelled block with its tools and an entries table.
func TestAuditAndInspectText(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	state, dir := t.TempDir(), t.TempDir()
	art := goodSkill.write(t, dir)
	cli(t, state, "", "skills", "install", "--json", "--artifact", art, "--allow-tofu").decode(t, &installOut{})
	r := cli(t, state, "", "skills", "audit")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "1 audited, 0 would be quarantined, ") ||
		!regexp.MustCompile(`\nSKILL +VERSION +PASSED +QUARANTINE +SOURCE\nacme\.good +1\.0\.0 +true +false +installed\n`).MatchString(r.stdout) {
		t.Errorf("audit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, state, "", "skills", "package", "inspect", "--artifact", art)
	if r.code != 0 || !regexp.MustCompile(`(?m)^Skill: +acme\.good$`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "Tools:\n  TOOL      DESCRIPTION\n  acme.run  Runs.\n") ||
		!regexp.MustCompile(`Entries:\n  PATH +BYTES +SHA256\n  modules/`).MatchString(r.stdout) {
		t.Errorf("inspect: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPolicyShowIsAProfile: the text of policy show is a profile file
// (its origin in a TOML comment) that policy check accepts, and policy
// check prints a table of the installed versions it judged.
func TestPolicyShowIsAProfile(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	state, dir := t.TempDir(), t.TempDir()
	cli(t, state, "", "skills", "install", "--json", "--artifact", goodSkill.write(t, dir), "--allow-tofu").decode(t, &installOut{})
	r := cli(t, state, "", "policy", "show")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "# operator profile: the built-in default\n") {
		t.Fatalf("policy show: exit %d\n%s", r.code, r.stdout)
	}
	p := filepath.Join(dir, "shown.toml")
	if err := os.WriteFile(p, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cli(t, state, "", "policy", "check", "--profile", p)
	if r.code != 0 || !strings.HasSuffix(strings.SplitN(r.stdout, "\n", 2)[0], " is valid; 1 installed version(s) checked, 0 would be refused") ||
		!regexp.MustCompile(`\nSKILL +VERSION +ALLOWED\nacme\.good +1\.0\.0 +true\n`).MatchString(r.stdout) {
		t.Errorf("policy check of the shown profile: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestToolsTableMarksHooksOnly: a hooks-only tool says so in skills info,
// since MCP and the console do not offer it.
func TestToolsTableMarksHooksOnly(t *testing.T) {
	raw := json.RawMessage(`{"entrypoints":{"tools":[` +
		`{"id":"acme.on_event","name":"on_event","description":"Records an event.","hooks_only":true},` +
		`{"id":"acme.recent","name":"recent","description":"Lists events."}]}}`)
	got := toolsTable(raw, "acme.log")
	for _, want := range []string{"(hooks only) Records an event.", "acme.recent    no        no         Lists events.\n", "palyra skills run acme.log acme.recent --input JSON"} {
		if !strings.Contains(got, want) {
			t.Errorf("tools table lacks %q:\n%s", want, got)
		}
	}
}
