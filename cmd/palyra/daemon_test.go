package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/internal/testskill"
)

const hookprobeDir = "../../host/daemon/testdata/hookprobe"

// probeSource returns the hookprobe skill's manifest as skill id at
// version, and its module.
func probeSource(t *testing.T, id, version string) (string, []byte) {
	t.Helper()
	m, err := os.ReadFile(filepath.Join(hookprobeDir, "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(filepath.Join(hookprobeDir, "hookprobe.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	man := strings.Replace(string(m), `skill_id = "test.hookprobe"`, fmt.Sprintf("skill_id = %q", id), 1)
	return strings.Replace(man, `version = "0.1.0"`, fmt.Sprintf("version = %q", version), 1), wasm
}

// probeArtifact writes the hookprobe skill (host/daemon/testdata) as skill
// id at version, signed by publisher "test" (testskill.Key(7)), and returns
// its path.
func probeArtifact(t *testing.T, dir, id, version string) string {
	t.Helper()
	man, wasm := probeSource(t, id, version)
	p := filepath.Join(dir, id+"-"+version+".palyra-skill")
	if err := os.WriteFile(p, testskill.Build(t, man, wasm, testskill.Key(7)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startDaemon serves a palyra-host daemon on state, in this process, on a
// loopback port, and returns its URL. Cleanup stops it and waits for Serve
// to return.
func startDaemon(t *testing.T, state string) string {
	t.Helper()
	d, err := daemon.Open(context.Background(), daemon.Options{
		StateDir: state, SidecarPath: sidecarBinary(t), Config: &daemon.Config{Listen: "127.0.0.1:0"}, Version: manifest.RuntimeVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := d.Listen()
	if err != nil {
		d.Close(context.Background())
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon serve: %v", err)
		}
		// The client's keep-alive connections hold goroutines.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	})
	return d.URL(ln)
}

// shortTMPDIR points TMPDIR at a short directory for the test, so that the
// sidecars' Unix socket paths stay under their 108-byte limit. Call it
// first: its cleanup runs last and checks that nothing (a socket, a
// sidecar's directory) was left in it.
func shortTMPDIR(t *testing.T) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "pd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
			t.Errorf("left in TMPDIR: %v", entries)
		}
		os.RemoveAll(tmp)
	})
	t.Setenv("TMPDIR", tmp)
}

// closedURL is the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// skillsVerbs returns runners of palyra skills VERB ARGS... on state:
// remote through the daemon at url (the token comes from the state
// directory's token file), local on the state directory itself.
func skillsVerbs(t *testing.T, state, url string) (remote, local func(verb string, args ...string) result) {
	remote = func(verb string, args ...string) result {
		return cli(t, state, "", append([]string{"skills", verb, "--url", url}, args...)...)
	}
	local = func(verb string, args ...string) result {
		return cli(t, state, "", append([]string{"skills", verb}, args...)...)
	}
	return remote, local
}

// TestDaemonMode drives the skills verbs through a real daemon with --url
// and checks that they give what the local verbs give on the same state.
func TestDaemonMode(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	url := startDaemon(t, state)
	remote, local := skillsVerbs(t, state, url)

	var out installOut
	remote("install", "--json", "--artifact", probeArtifact(t, dir, "test.hookprobe", "0.1.0"), "--allow-tofu").decode(t, &out)
	if !out.Installed || out.Status != "active" || out.SkillID != "test.hookprobe" || out.TrustDecision != "tofu_newly_pinned" || out.SkillsRoot != "" {
		t.Fatalf("install through the daemon: %+v", out)
	}

	t.Run("same output as local", func(t *testing.T) {
		for _, args := range [][]string{
			{"list", "--json"},
			{"list"},
			{"list", "--json", "--publisher", "test", "--current-only"},
			{"list", "--json", "--quarantined-only"},
			{"list", "--eligible-only"},
			{"info", "--json", "test.hookprobe"},
			{"info", "test.hookprobe", "--version", "0.1.0"},
			{"info", "--json", "test.nothing"},
			{"remove", "--json", "test.nothing"},
			{"enable", "--json", "test.nothing", "--reason", "x"},
			{"run", "--json", "test.hookprobe", "test.nothing"},
			{"run", "--json", "test.hookprobe", "test.probe", "--input", "[1]"},
			// A call's invocation id and stats differ from call to call; the
			// text output is the tool's output alone.
			{"run", "test.hookprobe", "test.probe", "--input", `{"say":"hi"}`},
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				l, r := local(args[0], args[1:]...), remote(args[0], args[1:]...)
				if l.code != r.code || l.stdout != r.stdout || l.stderr != r.stderr {
					t.Errorf("local: exit %d\n%s%s\ndaemon: exit %d\n%s%s", l.code, l.stdout, l.stderr, r.code, r.stdout, r.stderr)
				}
			})
		}
	})

	t.Run("run reports a tool error alike", func(t *testing.T) {
		// The probe exits 10 on exit:10: a tool_error for a tool caller.
		var got []runReport
		for _, run := range []func(string, ...string) result{local, remote} {
			r := run("run", "--json", "test.hookprobe", "test.probe", "--input", `{"say":"exit:10"}`)
			var rep runReport
			if code := r.failure(t, &rep); code != "tool_error" || rep.ToolError == nil {
				t.Fatalf("exit %d %s", r.code, r.stdout)
			}
			got = append(got, rep)
		}
		if *got[0].ToolError != *got[1].ToolError || string(got[0].Output) != string(got[1].Output) {
			t.Errorf("local %+v, daemon %+v", got[0], got[1])
		}
	})

	t.Run("status changes record the principal", func(t *testing.T) {
		var st struct {
			Status    string `json:"status"`
			Principal string `json:"operator_principal"`
			Reason    string `json:"reason"`
		}
		remote("quarantine", "--json", "test.hookprobe", "--reason", "looks odd", "--principal", "user:alice").decode(t, &st)
		if st.Status != "quarantined" || st.Principal != "user:alice" || st.Reason != "looks odd" {
			t.Fatalf("quarantine: %+v", st)
		}
		if e := listEntries(t, state, "--quarantined-only"); len(e) != 1 {
			t.Fatalf("the local list does not show the quarantine: %v", e)
		}
		r := remote("enable", "--json", "test.hookprobe", "--reason", "fine")
		if r.code != exitFailure || r.errorCode(t) != "override_required" {
			t.Fatalf("enable without --override: exit %d %s", r.code, r.stdout)
		}
		r = remote("run", "--json", "test.hookprobe", "test.probe", "--input", "{}")
		if r.errorCode(t) != "skill_quarantined" {
			t.Fatalf("run while quarantined: %s", r.stdout)
		}
		remote("enable", "--json", "test.hookprobe", "--override", "--reason", "reviewed").decode(t, &st)
		if st.Status != "active" || st.Principal != "user:local" {
			t.Fatalf("enable --override: %+v", st)
		}
		remote("disable", "--json", "test.hookprobe", "--principal", "user:bob").decode(t, &st)
		if st.Status != "disabled" || st.Principal != "user:bob" {
			t.Fatalf("disable: %+v", st)
		}
		r = remote("enable", "test.hookprobe", "--reason", "back")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "skill.enabled skill_id=test.hookprobe version=0.1.0 status=active") {
			t.Fatalf("text enable: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("install records the principal", func(t *testing.T) {
		type history struct {
			StatusHistory []struct {
				Principal string `json:"operator_principal"`
			} `json:"status_history"`
		}
		for _, tt := range []struct {
			name, id string
			run      func(verb string, args ...string) result
			args     []string
			want     string
		}{
			{"local default", "test.p1", local, nil, "system:install"},
			{"local given", "test.p2", local, []string{"--principal", "user:erin"}, "user:erin"},
			{"daemon default", "test.p3", remote, nil, "user:local"},
			{"daemon given", "test.p4", remote, []string{"--principal", "user:erin"}, "user:erin"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				args := append([]string{"--json", "--artifact", probeArtifact(t, dir, tt.id, "0.1.0")}, tt.args...)
				tt.run("install", args...).decode(t, &installOut{})
				var h history
				local("info", "--json", tt.id).decode(t, &h)
				if len(h.StatusHistory) != 1 || h.StatusHistory[0].Principal != tt.want {
					t.Fatalf("history %+v, want principal %s", h, tt.want)
				}
				local("remove", "--json", tt.id).decode(t, &map[string]any{})
			})
		}
	})

	t.Run("verify audit reaudit", func(t *testing.T) {
		var v struct {
			SkillID       string `json:"skill_id"`
			TrustDecision string `json:"trust_decision"`
		}
		remote("verify", "--json", "test.hookprobe").decode(t, &v)
		if v.SkillID != "test.hookprobe" || v.TrustDecision == "" {
			t.Fatalf("verify: %+v", v)
		}
		var au struct {
			TrustStore *string `json:"trust_store"`
			Summary    struct {
				Audited int `json:"audited"`
			} `json:"summary"`
		}
		remote("audit", "--json").decode(t, &au)
		if au.Summary.Audited != 1 || au.TrustStore != nil {
			t.Fatalf("audit: %+v", au)
		}
		var re struct {
			Checked int `json:"checked"`
		}
		remote("reaudit", "--json").decode(t, &re)
		if re.Checked != 1 {
			t.Fatalf("reaudit: %+v", re)
		}
	})

	t.Run("a failed audit fails alike", func(t *testing.T) {
		// wasi path_open without a filesystem capability: installed
		// quarantined, and audit_failed on every audit.
		var q installOut
		r := remote("install", "--json", "--allow-tofu", "--artifact", fsSkill.write(t, dir))
		if code := r.failure(t, &q); code != "audit_failed" || q.Status != "quarantined" || !q.Installed {
			t.Fatalf("install: %s", r.stdout)
		}
		for _, args := range [][]string{{"audit", "--json", "acme.files"}, {"audit", "acme.files"}} {
			l, d := local(args[0], args[1:]...), remote(args[0], args[1:]...)
			if l.code != exitFailure || d.code != exitFailure || l.stderr != d.stderr || !strings.Contains(d.stderr+d.stdout, "audit_failed") {
				t.Errorf("%v: local exit %d %s%s\ndaemon exit %d %s%s", args, l.code, l.stdout, l.stderr, d.code, d.stdout, d.stderr)
			}
			if args[1] == "--json" {
				var le, de struct {
					Error struct{ Code, Message string } `json:"error"`
				}
				json.Unmarshal([]byte(l.stdout), &le)
				json.Unmarshal([]byte(d.stdout), &de)
				if le.Error != de.Error {
					t.Errorf("errors differ: local %+v, daemon %+v", le.Error, de.Error)
				}
			}
		}
		local("remove", "--json", "acme.files").decode(t, &map[string]any{})
	})

	t.Run("local-only options are refused", func(t *testing.T) {
		art := probeArtifact(t, dir, "test.other", "0.1.0")
		tests := []struct {
			name string
			args []string
			want string // in the message
		}{
			{"trusted publisher", []string{"install", "--json", "--artifact", art, "--trusted-publisher", "test=" + hex.EncodeToString(testskill.Key(7).Public().(ed25519.PublicKey))}, "--trusted-publisher is local-only"},
			{"trust store", []string{"list", "--json", "--trust-store", filepath.Join(dir, "ts.json")}, "--trust-store is local-only"},
			{"audit artifact", []string{"audit", "--json", "--artifact", art}, "--artifact is local-only"},
			{"run sidecar", []string{"run", "--json", "--sidecar", sidecarBinary(t), "test.hookprobe", "test.probe"}, "--sidecar is local-only"},
			{"check", []string{"check", "--json"}, "check is local-only"},
			{"loop", []string{"loop", "--json", "--call", "test.hookprobe:test.probe:{}"}, "loop is local-only"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := remote(tt.args[0], tt.args[1:]...)
				if r.code != exitUsage || r.errorCode(t) != "usage" || !strings.Contains(r.stdout, tt.want) {
					t.Fatalf("exit %d: %s", r.code, r.stdout)
				}
			})
		}
		if e := listEntries(t, state); len(e) != 1 {
			t.Fatalf("a refused install installed something: %v", e)
		}
	})

	t.Run("transport and auth failures", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			env  map[string]string
			code string
		}{
			{"wrong token", []string{"skills", "list", "--json", "--url", url, "--token", "palyra_wrong_wrong_wrong_wrong_wrong_wrong"}, nil, "unauthorized"},
			{"wrong token from env", []string{"skills", "list", "--json"}, map[string]string{client.EnvURL: url, client.EnvToken: "palyra_not_the_token_not_the_token"}, "unauthorized"},
			{"closed port", []string{"skills", "list", "--json", "--url", closedURL(t)}, nil, "daemon_unreachable"},
			{"hooks closed port", []string{"hooks", "list", "--json", "--url", closedURL(t)}, nil, "daemon_unreachable"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for k, v := range tt.env {
					t.Setenv(k, v)
				}
				r := cli(t, state, "", tt.args...)
				if r.code != exitFailure || r.errorCode(t) != tt.code {
					t.Fatalf("exit %d: %s", r.code, r.stdout)
				}
				text := cli(t, state, "", slicesWithout(tt.args, "--json")...)
				if text.code != exitFailure || !strings.Contains(text.stderr, "["+tt.code+"]") {
					t.Fatalf("text: exit %d: %s", text.code, text.stderr)
				}
			})
		}
		// Another state directory has no token file to fall back on.
		r := cli(t, t.TempDir(), "", "skills", "list", "--json", "--url", url)
		if r.errorCode(t) != "unauthorized" {
			t.Fatalf("no token: %s", r.stdout)
		}
		// A bad URL is a usage error.
		r = cli(t, state, "", "skills", "list", "--json", "--url", "ftp://x")
		if r.code != exitUsage || r.errorCode(t) != "usage" {
			t.Fatalf("bad url: exit %d %s", r.code, r.stdout)
		}
		// $PALYRA_DAEMON_URL selects daemon mode like --url.
		t.Setenv(client.EnvURL, url)
		r = cli(t, state, "", "skills", "check", "--json")
		if r.code != exitUsage || !strings.Contains(r.stdout, "check is local-only") {
			t.Fatalf("check with $%s: %s", client.EnvURL, r.stdout)
		}
	})

	t.Run("remove --purge-storage", func(t *testing.T) {
		for _, id := range []string{"test.purge", "test.purgelocal"} {
			for _, v := range []string{"0.1.0", "0.2.0"} {
				remote("install", "--json", "--artifact", probeArtifact(t, dir, id, v)).decode(t, &installOut{})
			}
		}
		st, err := storage.Open(context.Background(), statedir.At(state).StorageDB())
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"test.purge", "test.purgelocal", "test.hookprobe"} {
			if err := st.Put(context.Background(), id, "data/k", []byte("value"), storage.Quota{}); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
		for _, mode := range []struct {
			name string
			id   string
			run  func(verb string, args ...string) result
		}{{"daemon", "test.purge", remote}, {"local", "test.purgelocal", local}} {
			t.Run(mode.name, func(t *testing.T) {
				before := len(listEntries(t, state))
				r := mode.run("remove", "--json", mode.id, "--version", "0.1.0", "--purge-storage")
				if r.code != exitFailure || r.errorCode(t) != "purge_needs_all_versions" {
					t.Fatalf("purge of one of two versions: exit %d %s", r.code, r.stdout)
				}
				if after := len(listEntries(t, state)); after != before {
					t.Fatalf("the refused purge removed something: %d entries, %d before", after, before)
				}
				var rm struct {
					Versions      []string `json:"versions"`
					Current       string   `json:"current"`
					StoragePurged bool     `json:"storage_purged"`
				}
				mode.run("remove", "--json", mode.id, "--version", "0.1.0").decode(t, &rm)
				if rm.StoragePurged || rm.Current != "0.2.0" {
					t.Fatalf("remove 0.1.0: %+v", rm)
				}
				var raw map[string]json.RawMessage
				rm.Current = ""
				r = mode.run("remove", "--json", mode.id, "--purge-storage")
				r.decode(t, &raw)
				r.decode(t, &rm)
				var usage storage.Usage
				json.Unmarshal(raw["purged_usage"], &usage)
				if !rm.StoragePurged || rm.Current != "" || usage.Keys != 1 || usage.Bytes != int64(len("data/k")+len("value")) {
					t.Fatalf("remove --purge-storage: %s", r.stdout)
				}
				if _, ok := raw["skills_root"]; ok != (mode.name == "local") {
					t.Errorf("skills_root in the %s output: %s", mode.name, r.stdout)
				}
			})
		}
		st, err = storage.Open(context.Background(), statedir.At(state).StorageDB())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for id, want := range map[string]int64{"test.purge": 0, "test.purgelocal": 0, "test.hookprobe": 1} {
			if u, err := st.Usage(context.Background(), id); err != nil || u.Keys != want {
				t.Errorf("%s storage after the purges: %+v %v; want %d keys", id, u, err, want)
			}
		}
		r := remote("remove", "test.hookprobe", "--purge-storage", "--version", "0.1.0")
		if r.code != 0 || !strings.Contains(r.stdout, "storage_purged=true purged_keys=1 purged_bytes=11") {
			t.Fatalf("text remove --purge-storage: exit %d %s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// slicesWithout returns s without the elements equal to drop.
func slicesWithout(s []string, drop string) []string {
	var out []string
	for _, v := range s {
		if v != drop {
			out = append(out, v)
		}
	}
	return out
}
