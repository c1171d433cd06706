package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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
	remote := func(verb string, args ...string) result {
		return cli(t, state, "", append([]string{"skills", verb, "--url", url}, args...)...)
	}
	local := func(verb string, args ...string) result {
		return cli(t, state, "", append([]string{"skills", verb}, args...)...)
	}
	var out installOut
	remote("install", "--json", "--artifact", probeArtifact(t, dir, "test.hookprobe", "0.1.0"), "--allow-tofu").decode(t, &out)

	cases := []struct {
		args []string
		code int    // exit code
		err  string // error code of a --json failure
		out  string // stdout of a success, trimmed
	}{
		{args: []string{"outdated", "--json"}, out: `{"skills":[]}`},
		{args: []string{"outdated"}, out: "skills.outdated checked=0 outdated=0"},
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
