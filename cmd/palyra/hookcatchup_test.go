package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// recorded returns the events the event-log skill recorded, in the order
// it recorded them: {event, journal id}, read from its storage.
func recorded(t *testing.T, state string) []string {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, filepath.Join(state, "storage", "storage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, _, err := st.List(ctx, "palyra.event_log", "events/e-", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		v, _, err := st.Get(ctx, "palyra.event_log", k)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Event   string
			Payload struct {
				SkillID string `json:"skill_id"`
				Reason  string
			}
		}
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Event+" "+e.Payload.SkillID+" "+e.Payload.Reason)
	}
	return out
}

// TestHooksCatchUpAfterCLI is issue 24's point 10 with Palyra-Go's own
// command lines: lifecycle changes made with palyra while no daemon runs
// reach the hooks bound to them when palyra-host starts, in order and once,
// and the changes made while it runs follow them.
func TestHooksCatchUpAfterCLI(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))

	// The event-log example, the hook skill, and a subject whose status
	// changes; installed, bound and changed with no daemon.
	man, err := os.ReadFile(filepath.Join(examplebuild.MustDir(t, "event-log"), "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	man = bytes.Replace(man, []byte("wall_clock_timeout_ms = 5000"), []byte("wall_clock_timeout_ms = 60000"), 1)
	module, err := os.ReadFile(examplebuild.MustBuild(t, "event-log"))
	if err != nil {
		t.Fatal(err)
	}
	eventLog := filepath.Join(dir, "event-log.palyra-skill")
	if err := os.WriteFile(eventLog, testskill.Build(t, string(man), module, testskill.Key(24)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, art := range []string{eventLog, probeArtifact(t, dir, "test.subject", "0.1.0")} {
		if r := cli(t, state, "", "skills", "install", "--json", "--allow-tofu", "--artifact", art); r.code != 0 {
			t.Fatalf("install %s: %s%s", art, r.stdout, r.stderr)
		}
	}
	for _, ev := range []string{"skill:disabled", "skill:enabled"} {
		if r := cli(t, state, "", "hooks", "bind", "log."+ev[len("skill:"):], "--event", ev, "--skill", "palyra.event_log"); r.code != 0 {
			t.Fatalf("bind: %s%s", r.stdout, r.stderr)
		}
	}
	var want []string
	change := func(verb, reason string, args ...string) {
		t.Helper()
		if r := cli(t, state, "", append([]string{"skills", verb, "test.subject", "--reason", reason}, args...)...); r.code != 0 {
			t.Fatalf("%s: %s%s", verb, r.stdout, r.stderr)
		}
		want = append(want, "skill:"+verb+"d test.subject "+reason)
	}
	change("disable", "down 1")
	change("enable", "down 2")
	change("disable", "down 3")
	if got := recorded(t, state); len(got) != 0 {
		t.Fatalf("recorded with no daemon: %v", got)
	}

	url := startDaemon(t, state)
	wait := func(n int) []string {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute) // a bound on a hang; nothing is timed
		for {
			got := recorded(t, state)
			if len(got) >= n || time.Now().After(deadline) {
				return got
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if got := wait(len(want)); !slices.Equal(got, want) {
		t.Fatalf("after the daemon started the hook recorded %q, want %q", got, want)
	}
	// Live, through the daemon and beside it.
	change("enable", "up 1", "--url", url)
	change("disable", "up 2")
	if got := wait(len(want)); !slices.Equal(got, want) {
		t.Fatalf("the hook recorded %q, want %q", got, want)
	}
}
