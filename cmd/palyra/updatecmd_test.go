package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/testregistry"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/internal/testskill"
)

// TestOutdatedUpdateCLI runs skills outdated and skills update on a host
// whose skill came from a file, locally and through a daemon (--url): the
// same output and exit code both ways, the JSON shapes, and the codes of
// what cannot be followed.
func TestOutdatedUpdateCLI(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	url := startDaemon(t, state)
	remote, local := skillsVerbs(t, state, url)
	var out installOut
	remote("install", "--json", "--artifact", probeArtifact(t, dir, "test.hookprobe", "0.1.0"), "--allow-tofu").decode(t, &out)

	cases := []struct {
		args []string
		code int    // exit code
		err  string // error code of a --json failure
		out  string // stdout of a success, trimmed
	}{
		{args: []string{"outdated", "--json"}, out: `{"skills":[]}`},
		{args: []string{"outdated"}, out: "No installed skill has a registry source."},
		{args: []string{"outdated", "--json", "test.hookprobe"}, code: exitFailure, err: "no_source"},
		{args: []string{"outdated", "--json", "test.nothing"}, code: exitFailure, err: "skill_not_found"},
		{args: []string{"update", "--json"}, out: `{"results":[]}`},
		{args: []string{"update"}, out: "skills.update nothing to update: every skill with a registry source is at its newest version"},
		{args: []string{"update", "--json", "test.hookprobe", "--dry-run"}, code: exitFailure, err: "no_source"},
		{args: []string{"update", "--json", "test.nothing"}, code: exitFailure, err: "skill_not_found"},
		{args: []string{"update", "--json", "--version", "1.0.0"}, code: exitUsage, err: "usage"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			l, r := local(c.args[0], c.args[1:]...), remote(c.args[0], c.args[1:]...)
			if l.code != r.code || l.stdout != r.stdout {
				t.Errorf("local: exit %d\n%s%s\ndaemon: exit %d\n%s%s", l.code, l.stdout, l.stderr, r.code, r.stdout, r.stderr)
			}
			if l.code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", l.code, c.code, l.stdout, l.stderr)
			}
			if c.err != "" {
				if got := l.errorCode(t); got != c.err {
					t.Errorf("code %q, want %q", got, c.err)
				}
				return
			}
			got := strings.TrimSpace(l.stdout)
			var compact bytes.Buffer
			if json.Compact(&compact, []byte(got)) == nil {
				got = compact.String()
			}
			if got != c.out {
				t.Errorf("stdout %q, want %q", got, c.out)
			}
		})
	}

	// The local host's registry options are refused in daemon mode: the
	// daemon fetches with its own configuration.
	for _, verb := range []string{"outdated", "update"} {
		r := remote(verb, "--json", "--plain-http")
		if r.code != exitUsage || r.errorCode(t) != "usage" {
			t.Errorf("%s --url --plain-http: exit %d %s", verb, r.code, r.stdout)
		}
	}
}

// publishProbe writes the hookprobe skill at version, asking for a
// wall-clock timeout of wallMS (2000 is the fixture's), into the registry
// directory dir and signs its index again with the publisher's key.
func publishProbe(t *testing.T, dir, version string, wallMS int) {
	t.Helper()
	man, wasm := probeSource(t, "test.hookprobe", version)
	man = strings.Replace(man, "wall_clock_timeout_ms = 2000", fmt.Sprintf("wall_clock_timeout_ms = %d", wallMS), 1)
	testregistry.Publish(t, dir, "test.hookprobe-"+version+registry.ArtifactExt, testskill.Build(t, man, wasm, testskill.Key(7)), testskill.Key(7), "test")
}

// TestUpdateFromRegistryCLI follows a skill installed from a local
// registry with skills outdated and skills update, locally and through a
// daemon: the text shows "ID FROM -> TO" and each capability_diff line, a
// refused escalation prints the diff and says to rerun with
// --accept-capabilities, and the JSON failure carries the results.
func TestUpdateFromRegistryCLI(t *testing.T) {
	state, reg := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	url := startDaemon(t, state)
	remote, local := skillsVerbs(t, state, url)
	both := func(verb string, args ...string) result {
		t.Helper()
		l, r := local(verb, args...), remote(verb, args...)
		if l.code != r.code || l.stdout != r.stdout {
			t.Errorf("%s %v: local: exit %d\n%s%s\ndaemon: exit %d\n%s%s", verb, args, l.code, l.stdout, l.stderr, r.code, r.stdout, r.stderr)
		}
		return l
	}

	publishProbe(t, reg, "1.0.0", 2000)
	tok, err := daemon.ReadToken(daemon.TokenPath(state))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(url, tok)
	if err != nil {
		t.Fatal(err)
	}
	from := &host.SourceRef{RegistryDir: reg, SkillID: "test.hookprobe"}
	if _, err := cl.Install(context.Background(), host.InstallRequest{From: from, AllowTOFU: true}); err != nil {
		t.Fatal(err)
	}
	if r := both("outdated"); r.code != 0 || !strings.Contains(r.stdout, "1 checked, 0 outdated") ||
		!regexp.MustCompile(`\ntest\.hookprobe +1\.0\.0 +1\.0\.0 +newest +local_registry `).MatchString(r.stdout) {
		t.Errorf("outdated at the newest: exit %d\n%s", r.code, r.stdout)
	}
	if r := both("update", "test.hookprobe"); r.code != 0 || !strings.Contains(r.stdout, "updated=false reason=already_current") {
		t.Errorf("update at the newest: exit %d\n%s", r.code, r.stdout)
	}

	publishProbe(t, reg, "1.1.0", 4000)
	if r := both("outdated"); r.code != 0 || !strings.Contains(r.stdout, "1 checked, 1 outdated") ||
		!regexp.MustCompile(`\ntest\.hookprobe +1\.0\.0 +1\.1\.0 +outdated +local_registry `).MatchString(r.stdout) {
		t.Errorf("outdated: exit %d\n%s", r.code, r.stdout)
	}
	// Without an id: every outdated skill; the escalation is refused.
	for _, args := range [][]string{{"--dry-run"}, {"test.hookprobe", "--dry-run"}, {"test.hookprobe"}} {
		r := both("update", args...)
		if r.code != exitFailure || !strings.Contains(r.stdout, "test.hookprobe 1.0.0 -> 1.1.0") ||
			!strings.Contains(r.stdout, "capability_diff=") || !strings.Contains(r.stdout, "rerun with --accept-capabilities") ||
			!strings.Contains(r.stderr, "capability_escalation") {
			t.Errorf("update %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
	}
	var rep struct {
		Error struct {
			Code    string `json:"code"`
			Details struct {
				Results []struct {
					FromVersion    string   `json:"from_version"`
					ToVersion      string   `json:"to_version"`
					CapabilityDiff []string `json:"capability_diff"`
				} `json:"results"`
			} `json:"details"`
		} `json:"error"`
	}
	// The JSON differs in the audit's generation time only.
	for _, r := range []result{local("update", "--json", "--dry-run"), remote("update", "--json", "--dry-run")} {
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != exitFailure || rep.Error.Code != "capability_escalation" ||
			len(rep.Error.Details.Results) != 1 || rep.Error.Details.Results[0].ToVersion != "1.1.0" || len(rep.Error.Details.Results[0].CapabilityDiff) == 0 {
			t.Errorf("update --json --dry-run: exit %d %v\n%s", r.code, err, r.stdout)
		}
	}
	if r := both("update", "--dry-run", "--accept-capabilities"); r.code != 0 || !strings.Contains(r.stdout, "1.0.0 -> 1.1.0 updated=false dry_run=true") {
		t.Errorf("accepted dry run: exit %d\n%s", r.code, r.stdout)
	}

	// The update itself, once (through the daemon).
	if r := remote("update", "test.hookprobe", "--accept-capabilities"); r.code != 0 || !strings.Contains(r.stdout, "1.0.0 -> 1.1.0 updated=true") {
		t.Fatalf("update: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := both("outdated"); r.code != 0 || !strings.Contains(r.stdout, "1 checked, 0 outdated") {
		t.Errorf("outdated after the update: exit %d\n%s", r.code, r.stdout)
	}

	// A source that cannot be read is said, on its skill's line.
	if err := os.Remove(filepath.Join(reg, registry.IndexFile)); err != nil {
		t.Fatal(err)
	}
	if r := both("outdated"); r.code != 0 || !regexp.MustCompile(`\ntest\.hookprobe +1\.1\.0 +- +"source unreadable \(`).MatchString(r.stdout) {
		t.Errorf("outdated of an unreadable source: exit %d\n%s", r.code, r.stdout)
	}
	if r := both("update"); r.code != 0 || !strings.Contains(r.stdout, "skill_id=test.hookprobe skipped: source unreadable (") ||
		strings.Contains(r.stdout, "nothing to update") {
		t.Errorf("update with an unreadable source: exit %d\n%s", r.code, r.stdout)
	}
}
