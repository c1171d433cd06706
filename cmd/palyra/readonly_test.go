package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/internal/dirsnap"
)

// TestReadOnlyCommandsWriteNothing: the commands that only look leave the
// state directory exactly as they found it (every path, mode, size,
// modification time and byte): on a state directory with an installed
// skill and on one that does not exist, which they must not create (and
// refuse with state_dir_missing, policy check with --profile aside).
func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	unsetEnv(t, cliconfig.EnvTrustStore)
	dir := t.TempDir()
	profile := filepath.Join(dir, "strict.toml")
	if err := os.WriteFile(profile, []byte("[http]\nallowed_hosts = [\"other.example.org\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	installed := filepath.Join(t.TempDir(), "state")
	cli(t, installed, "", "skills", "install", "--json", "--artifact", webSkill.write(t, dir), "--trusted-publisher", "acme="+echoPub).decode(t, &installOut{})
	absent := filepath.Join(t.TempDir(), "absent")

	commands := []struct {
		name string
		args []string
		// absentCode is the error code on the absent state directory
		// ("" = success).
		absentCode string
	}{
		{name: "policy show", args: []string{"policy", "show", "--json"}, absentCode: "state_dir_missing"},
		{name: "policy check", args: []string{"policy", "check", "--profile", profile, "--json"}},
		{name: "skills list", args: []string{"skills", "list", "--json"}, absentCode: "state_dir_missing"},
		{name: "skills list --eligible-only", args: []string{"skills", "list", "--eligible-only", "--json"}, absentCode: "state_dir_missing"},
		{name: "skills info", args: []string{"skills", "info", "acme.web", "--json"}, absentCode: "state_dir_missing"},
		{name: "skills check", args: []string{"skills", "check", "--json"}, absentCode: "state_dir_missing"},
		{name: "skills check SKILL_ID", args: []string{"skills", "check", "acme.web", "--json"}, absentCode: "state_dir_missing"},
		{name: "trust show", args: []string{"trust", "show", "--json"}, absentCode: "state_dir_missing"},
		{name: "hooks list", args: []string{"hooks", "list", "--json"}, absentCode: "state_dir_missing"},
		{name: "secrets list", args: []string{"secrets", "list", "--json"}, absentCode: "state_dir_missing"},
	}
	for _, state := range []struct {
		name, dir string
	}{{"installed", installed}, {"absent", absent}} {
		for _, c := range commands {
			t.Run(state.name+"/"+c.name, func(t *testing.T) {
				before := dirsnap.Take(t, state.dir)
				r := cli(t, state.dir, "", c.args...)
				dirsnap.Unchanged(t, before)
				want := ""
				if state.dir == absent {
					want = c.absentCode
				}
				switch {
				case want == "" && r.code != 0:
					t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
				case want != "" && r.errorCode(t) != want:
					t.Fatalf("error %s, want %s", r.stdout, want)
				case want == "" && !json.Valid([]byte(r.stdout)):
					t.Fatalf("not JSON: %s", r.stdout)
				}
				// On the installed state the commands still see the skill.
				if state.dir == installed && !slices.Contains([]string{"policy show", "skills list --eligible-only", "hooks list", "secrets list"}, c.name) && !strings.Contains(r.stdout, "acme") {
					t.Errorf("output does not show the installed skill or its publisher:\n%s", r.stdout)
				}
			})
		}
	}
}

// TestTrustStoreFromEnvironment: the CLI still honours
// $PALYRA_SKILLS_TRUST_STORE (the libraries no longer read it, cliconfig
// does): installs pin there, trust show and checks read there, and the
// state directory's own trust store is never made; --trust-store wins.
func TestTrustStoreFromEnvironment(t *testing.T) {
	t.Setenv(cliconfig.EnvSidecar, "")
	state, dir := t.TempDir(), t.TempDir()
	envStore := filepath.Join(t.TempDir(), "env-trust.json")
	t.Setenv(cliconfig.EnvTrustStore, envStore)

	var out struct {
		installOut
		TrustStore string `json:"trust_store"`
	}
	cli(t, state, "", "skills", "install", "--json", "--artifact", goodSkill.write(t, dir), "--allow-tofu").decode(t, &out)
	if out.TrustStore != envStore || out.TrustDecision != "tofu_newly_pinned" {
		t.Fatalf("install: trust_store %q, decision %q; want %q", out.TrustStore, out.TrustDecision, envStore)
	}
	data, err := os.ReadFile(envStore)
	if err != nil || !strings.Contains(string(data), "acme") {
		t.Fatalf("the pin is not in $%s: %v\n%s", cliconfig.EnvTrustStore, err, data)
	}
	if _, err := os.Stat(filepath.Join(state, "skills", "trust-store.json")); !os.IsNotExist(err) {
		t.Fatalf("the state directory's trust store was written: %v", err)
	}
	if r := cli(t, state, "", "trust", "show"); r.code != 0 || !strings.Contains(r.stdout, "Trust store: "+envStore+"\n") || !strings.Contains(r.stdout, "acme") {
		t.Fatalf("trust show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var chk checkReport
	cli(t, state, "", "skills", "check", "--json").decode(t, &chk)
	if len(chk.Results) != 1 || !chk.Results[0].TrustAccepted {
		t.Fatalf("check with the variable's trust store: %+v", chk)
	}
	// --trust-store wins over the variable: an empty store there does not
	// know the publisher.
	other := filepath.Join(t.TempDir(), "other.json")
	cli(t, state, "", "skills", "check", "--json", "--trust-store", other).decode(t, &chk)
	if len(chk.Results) != 1 || chk.Results[0].TrustAccepted {
		t.Fatalf("check with --trust-store: %+v", chk)
	}
	// Set but empty is refused, not a silent fallback.
	t.Setenv(cliconfig.EnvTrustStore, "")
	if r := cli(t, state, "", "skills", "list", "--json"); r.errorCode(t) != "invalid_state_dir" {
		t.Fatalf("empty $%s: %s", cliconfig.EnvTrustStore, r.stdout)
	}
}

// unsetEnv removes key for the test (restored after it).
func unsetEnv(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "")
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}
