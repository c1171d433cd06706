package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/testregistry"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/internal/testskill"
)

// publishEcho writes skill id at version, granted the HTTP hosts, into the
// registry directory dir and signs its index again.
func publishEcho(t *testing.T, dir, id, version string, hosts ...string) {
	t.Helper()
	wasm, err := os.ReadFile("../../testdata/wasm/echo.wasm")
	if err != nil {
		t.Fatal(err)
	}
	m := testskill.WithHosts(testskill.OneToolManifest(id, version, ""), hosts...)
	testregistry.Publish(t, dir, id+"-"+version+registry.ArtifactExt, testskill.Build(t, m, wasm, testskill.Key(7)), testskill.Key(7), "acme")
}

// TestApplyDiffCLI drives one host with palyra diff and palyra apply,
// locally and through a daemon (--url), with the same output both ways: the
// plan of a fresh host (install with its grants), apply, apply again (no
// changes), a newer version granted a host the file does not accept (the
// diff shows it, refused with capabilities_not_accepted and the excess,
// nothing changed), accepted after editing the file, an undeclared skill
// listed as unmanaged and removed with --prune, the JSON result, and the
// usage and document errors.
func TestApplyDiffCLI(t *testing.T) {
	state, reg := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	url := startDaemon(t, state)
	local := func(args ...string) result { return cli(t, state, "", args...) }
	remote := func(args ...string) result {
		return cli(t, state, "", append(args[:1:1], append([]string{"--url", url}, args[1:]...)...)...)
	}
	both := func(args ...string) result {
		t.Helper()
		l, r := local(args...), remote(args...)
		if l.code != r.code || l.stdout != r.stdout {
			t.Errorf("%v: local: exit %d\n%s%s\ndaemon: exit %d\n%s%s", args, l.code, l.stdout, l.stderr, r.code, r.stdout, r.stderr)
		}
		return l
	}
	file := filepath.Join(t.TempDir(), "palyra.toml")
	write := func(hosts string) {
		t.Helper()
		doc := fmt.Sprintf("version = 1\n\n[[skill]]\nid = \"acme.one\"\nregistry_dir = %q\nversion = \"^1.0\"\nallow_tofu = true\n\n[skill.accept]\nhttp_hosts = [%s]\n", reg, hosts)
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, r result, code int, want ...string) {
		t.Helper()
		if r.code != code {
			t.Errorf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, r.code, code, r.stdout, r.stderr)
			return
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: stdout lacks %q\n%s", what, w, r.stdout)
			}
		}
	}

	publishEcho(t, reg, "acme.one", "1.0.0", "api.example.com")
	write(`"api.example.com"`)
	install := fmt.Sprintf("+ install acme.one 1.0.0 (%s)\n    + http host api.example.com\n", reg)
	expect("diff of a fresh host", both("diff", "-f", file), 0, install, "plan only (dry run): nothing was changed")
	expect("apply --dry-run", both("apply", "--dry-run", "-f", file), 0, install, "plan only (dry run)")
	var plan host.ApplyResult
	both("diff", "--json", "-f", file).decode(t, &plan)
	if !plan.DryRun || !plan.Changed || len(plan.Steps) != 1 || plan.Steps[0].Action != host.ActionInstall || plan.Steps[0].Done {
		t.Errorf("diff --json: %+v", plan)
	}
	expect("apply", local("apply", "-f", file), 0, install, "applied")
	converged := "= keep acme.one 1.0.0\nno changes: the host is in the desired state"
	expect("apply again", both("apply", "-f", file), 0, converged)
	expect("diff when converged", both("diff", "-f", file), 0, converged)

	// 1.1.0 is granted a second host, which the file does not accept.
	publishEcho(t, reg, "acme.one", "1.1.0", "api.example.com", "status.example.com")
	refused := fmt.Sprintf("~ update acme.one 1.0.0 -> 1.1.0 (%s)\n    + http host status.example.com\n    refused: capabilities_not_accepted: ", reg)
	r := both("diff", "-f", file)
	expect("diff of a version not accepted", r, exitFailure, refused, "1 step(s) would be refused")
	if !strings.Contains(r.stderr, "capabilities_not_accepted") {
		t.Errorf("stderr lacks the code: %s", r.stderr)
	}
	expect("apply of a version not accepted", both("apply", "-f", file), exitFailure, refused, "not converged: 1 step(s) refused or failed")
	var details host.ApplyResult
	if code := both("apply", "--json", "-f", file).failure(t, &details); code != "capabilities_not_accepted" ||
		details.Changed || len(details.Steps) != 1 || details.Steps[0].Code != "capabilities_not_accepted" ||
		strings.Join(details.Steps[0].CapabilityDiff, ",") != "+ http host status.example.com" {
		t.Errorf("apply --json: %s %+v", code, details)
	}
	expect("still 1.0.0", local("skills", "list"), 0, "acme.one")
	expect("converged on 1.0.0", both("diff", "-f", file), exitFailure, "~ update acme.one 1.0.0 -> 1.1.0")

	write(`"api.example.com", "status.example.com"`)
	expect("diff of the accepted update", both("diff", "-f", file), 0, fmt.Sprintf("~ update acme.one 1.0.0 -> 1.1.0 (%s)\n    + http host status.example.com\nplan only", reg))
	expect("apply of the accepted update", remote("apply", "-f", file), 0, "~ update acme.one 1.0.0 -> 1.1.0", "applied")
	expect("apply after the update", both("apply", "-f", file), 0, "= keep acme.one 1.1.0\nno changes")

	// A skill the file does not declare: unmanaged, removed with --prune.
	publishEcho(t, reg, "acme.two", "1.0.0")
	two := filepath.Join(t.TempDir(), "two.toml")
	if err := os.WriteFile(two, []byte(fmt.Sprintf("version = 1\n[[skill]]\nid = \"acme.two\"\nregistry_dir = %q\n", reg)), 0o600); err != nil {
		t.Fatal(err)
	}
	expect("apply of another file", local("apply", "-f", two), 0, "+ install acme.two 1.0.0", "? unmanaged acme.one 1.1.0", "applied")
	expect("diff with an unmanaged skill", both("diff", "-f", file), 0, "? unmanaged acme.two 1.0.0", "no changes")
	expect("diff --prune", both("diff", "--prune", "-f", file), 0, "- remove acme.two 1.0.0\nplan only")
	expect("apply --prune", remote("apply", "--prune", "-f", file), 0, "- remove acme.two 1.0.0\napplied")
	expect("converged after prune", both("apply", "--prune", "-f", file), 0, "= keep acme.one 1.1.0\nno changes")

	// Usage and document errors.
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("version = 1\n[[skill]]\nid = \"x\"\nregistry_dir = \"/d\"\ncolour = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		exit int
		code string
	}{
		{"no file", []string{"apply", "--json"}, exitUsage, "usage"},
		{"a missing file", []string{"diff", "--json", "-f", filepath.Join(reg, "none.toml")}, exitFailure, ""},
		{"an unknown key", []string{"apply", "--json", "-f", bad}, exitFailure, "invalid_desired_state"},
		{"an argument", []string{"diff", "--json", "-f", file, "extra"}, exitUsage, "usage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := both(c.args...)
			if r.code != c.exit {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, c.exit, r.stdout, r.stderr)
			}
			if c.code != "" {
				if got := r.errorCode(t); got != c.code {
					t.Errorf("code %q, want %q", got, c.code)
				}
			}
		})
	}
	// The local host's source options are refused with --url: the daemon
	// fetches with its own configuration.
	if r := remote("apply", "--json", "--plain-http", "-f", file); r.code != exitUsage || r.errorCode(t) != "usage" {
		t.Errorf("apply --url --plain-http: exit %d %s", r.code, r.stdout)
	}
}
