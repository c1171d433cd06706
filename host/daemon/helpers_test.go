package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/rundir"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/internal/proctest"
	"github.com/palyra-go/palyra/internal/testskill"
)

// publisherKey signs every test artifact (publisher "test").
var publisherKey = testskill.Key(7)

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// probeArtifact is the hookprobe skill under skill id id.
func probeArtifact(t testing.TB, id string) []byte {
	t.Helper()
	m := string(readFixture(t, "testdata/hookprobe/skill.toml"))
	m = strings.Replace(m, `skill_id = "test.hookprobe"`, fmt.Sprintf("skill_id = %q", id), 1)
	return testskill.Build(t, m, readFixture(t, "testdata/hookprobe/hookprobe.wasm"), publisherKey)
}

// wasmArtifact is a skill whose one tool test.run runs a module of
// testdata/wasm (exporting run), with the given quotas.
func wasmArtifact(t testing.TB, id, module string, quotas string) []byte {
	t.Helper()
	m := fmt.Sprintf(`manifest_version = 2
skill_id = %q
name = "Fixture"
version = "0.1.0"
publisher = "test"

[[entrypoints.tools]]
id = "test.run"
name = "run"
description = "Runs the fixture"
input_schema = { type = "object" }
output_schema = { type = "object" }

[capabilities.quotas]
%s

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`, id, quotas)
	return testskill.Build(t, m, readFixture(t, filepath.Join("..", "..", "testdata", "wasm", module)), publisherKey)
}

// proc is a palyra-host serve process.
type proc struct {
	t        testing.TB
	cmd      *exec.Cmd
	state    string
	tmp      string // the daemon's TMPDIR: sidecar sockets go there
	url      string
	token    string
	out, err *proctest.Buffer
	done     chan struct{}
	exitErr  error
}

// startDaemon runs palyra-host serve on a random loopback port with config
// (TOML, may be empty) and waits until it is ready.
func startDaemon(t testing.TB, state, config string, args ...string) *proc {
	t.Helper()
	return startDaemonTmp(t, state, t.TempDir(), config, args...)
}

// startDaemonTmp is startDaemon with the daemon's TMPDIR named.
func startDaemonTmp(t testing.TB, state, tmp, config string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, state: state, tmp: tmp, out: &proctest.Buffer{}, err: &proctest.Buffer{}, done: make(chan struct{})}
	cfgPath := filepath.Join(t.TempDir(), "palyra-host.toml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	all := append([]string{"serve", "--state-dir", state, "--listen", "127.0.0.1:0", "--config", cfgPath, "--log-level", "debug"}, args...)
	p.cmd = exec.Command(filepath.Join(bin, "palyra-host"), all...)
	p.cmd.Env = append(os.Environ(), "TMPDIR="+p.tmp, "PALYRA_SIDECAR="+filepath.Join(bin, "palyra-sidecar"))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exitErr = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
			// What the killed daemon's sidecars left may be outside the
			// test's temporary directories (host/rundir's /tmp fallback).
			rundir.Sweep(statedir.At(state), p.tmp)
		}
		if t.Failed() {
			t.Logf("palyra-host stdout:\n%s\nstderr:\n%s", p.out, p.err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-p.done:
			t.Fatalf("palyra-host exited early: %v\nstdout:\n%s\nstderr:\n%s", p.exitErr, p.out, p.err)
		default:
		}
		if info, err := daemon.ReadInfo(state); err == nil && info.PID == p.cmd.Process.Pid {
			p.url = info.URL
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("palyra-host did not start\nstderr:\n%s", p.err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := daemon.ReadToken(daemon.TokenPath(state))
	if err != nil {
		t.Fatal(err)
	}
	p.token = tok
	for {
		resp, err := http.Get(p.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("palyra-host not ready: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop sends SIGTERM and checks a clean exit: status 0, no error logged
// from then on (but for failed requests), no child process left, no socket left in the daemon's
// TMPDIR, no daemon.json left.
func (p *proc) stop() {
	t := p.t
	t.Helper()
	kids := proctest.Children(p.cmd.Process.Pid)
	logged := len(p.err.String())
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatal("palyra-host did not exit within 60 s of SIGTERM")
	}
	if p.exitErr != nil {
		t.Fatalf("palyra-host exit: %v\nstderr:\n%s", p.exitErr, p.err)
	}
	for _, ln := range strings.Split(p.err.String()[logged:], "\n") {
		// A request's own failure (a call that times out during the
		// drain) is the request's log line, not the stop's.
		if strings.Contains(ln, "[ERROR]") && !strings.Contains(ln, "api request:") {
			t.Errorf("an orderly stop logged an error: %s", ln)
		}
	}
	proctest.WaitGone(t, kids, 5*time.Second)
	var leftover []string
	filepath.WalkDir(p.tmp, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != p.tmp {
			leftover = append(leftover, path)
		}
		return nil
	})
	if len(leftover) > 0 {
		t.Errorf("left behind in TMPDIR: %v", leftover)
	}
	if _, err := os.Stat(daemon.InfoPath(p.state)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("daemon.json left behind: %v", err)
	}
}

// do sends an HTTP request with the token (unless auth is false) and
// decodes the JSON answer into out; it returns the status and body.
func (p *proc) do(method, path string, body any, out any) (int, []byte) {
	p.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			p.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, p.url+path, r)
	if err != nil {
		p.t.Fatal(err)
	}
	recordAPISeed(p.t, method, path, req)
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("X-Palyra-Principal", "user:tester")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			p.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode, data
}

// must is do that fails the test unless the status is want.
func (p *proc) must(want int, method, path string, body any, out any) []byte {
	p.t.Helper()
	st, data := p.do(method, path, body, out)
	if st != want {
		p.t.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, st, want, data)
	}
	return data
}

// errCode returns the error code of an API error body.
func errCode(t testing.TB, data []byte) string {
	t.Helper()
	var eb daemon.ErrorBody
	if err := json.Unmarshal(data, &eb); err != nil {
		t.Fatalf("not an error body: %s", data)
	}
	return eb.Error.Code
}

// sse reads server-sent events from the daemon into a channel.
type sse struct {
	ch     chan map[string]any
	cancel context.CancelFunc
	done   chan struct{}
}

func (p *proc) events(after string) *sse {
	p.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	path := "/v1/events"
	if after != "" {
		path += "?after=" + after
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		p.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		p.t.Fatalf("events: HTTP %d", resp.StatusCode)
	}
	s := &sse{ch: make(chan map[string]any, 256), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					select {
					case s.ch <- m:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	p.t.Cleanup(s.close)
	return s
}

func (s *sse) close() { s.cancel(); <-s.done }

// waitFor returns the first event that match accepts, failing after d.
func (s *sse) waitFor(t testing.TB, d time.Duration, match func(map[string]any) bool) map[string]any {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev := <-s.ch:
			if match(ev) {
				return ev
			}
		case <-timer.C:
			t.Fatalf("no matching event within %s", d)
			return nil
		}
	}
}
