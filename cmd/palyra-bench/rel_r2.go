package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
)

// daemonProc is a palyra-host serve process of R2.
type daemonProc struct {
	cmd   *exec.Cmd
	done  chan struct{}
	url   string
	token string
	out   bytes.Buffer
}

// startDaemon runs palyra-host serve on state with TMPDIR tmp and waits
// until it answers /readyz.
func (e *env) startDaemon(ctx context.Context, state, tmp string) (*daemonProc, error) {
	cfg := filepath.Join(e.work, "r2-palyra-host.toml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		return nil, err
	}
	p := &daemonProc{done: make(chan struct{})}
	p.cmd = exec.Command(e.hostBin, "serve", "--state-dir", state, "--listen", "127.0.0.1:0", "--config", cfg, "--sidecar", e.sidecar)
	p.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	fail := func(err error) (*daemonProc, error) {
		p.kill()
		return nil, fmt.Errorf("palyra-host: %w\n%s", err, p.out.String())
	}
	deadline := time.Now().Add(60 * time.Second)
	for p.url == "" {
		if info, err := daemon.ReadInfo(state); err == nil && info.PID == p.cmd.Process.Pid {
			p.url = info.URL
			break
		}
		select {
		case <-p.done:
			return fail(errors.New("exited before it was ready"))
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fail(errors.New("not started within 60 s"))
		}
	}
	tok, err := daemon.ReadToken(daemon.TokenPath(state))
	if err != nil {
		return fail(err)
	}
	p.token = tok
	for {
		if st, _, err := p.do(ctx, http.MethodGet, "/readyz", nil); err == nil && st == http.StatusOK {
			return p, nil
		}
		if time.Now().After(deadline) {
			return fail(errors.New("not ready within 60 s"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill SIGKILLs the daemon and waits for it.
func (p *daemonProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop SIGTERMs the daemon and waits up to 60 s for it (then kills it).
func (p *daemonProc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if !p.cmd.ProcessState.Success() {
			return fmt.Errorf("palyra-host exit: %v\n%s", p.cmd.ProcessState, p.out.String())
		}
		return nil
	case <-time.After(60 * time.Second):
		p.kill()
		return errors.New("palyra-host did not exit within 60 s of SIGTERM")
	}
}

// do sends an authenticated request; body []byte is sent as is, anything
// else as JSON.
func (p *daemonProc) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.url+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// relKillDaemon is R2: a real palyra-host daemon (private TMPDIR) with
// running sidecars is SIGKILLed; one second later no sidecar may be alive.
// The entries left in the run/temp dirs are counted after every kill, and
// after a final restart and clean stop, when none may remain.
func relKillDaemon(ctx context.Context, e *env) ([]relRow, error) {
	state := filepath.Join(e.work, "r2-state")
	tmp := filepath.Join(e.work, "r2-tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	defer http.DefaultClient.CloseIdleConnections()
	trivial, err := e.trivialArtifact("r2t")
	if err != nil {
		return nil, err
	}
	echo, err := e.echoArtifact("rel.r2echo", e.echoWasm)
	if err != nil {
		return nil, err
	}
	calls := []struct{ path, want string }{
		{"/v1/skills/bench.r2t/tools/bench.trivial/call", trivialOutput},
		{"/v1/skills/rel.r2echo/tools/palyra.echo/call", echoOutput},
	}
	row := relRow{Scenario: "R2", Title: "SIGKILL the palyra-host daemon with running sidecars"}
	var leftAfter []string
	kills := e.opts.n(1, 5)
	for k := range kills {
		p, err := e.startDaemon(ctx, state, tmp)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			for _, a := range [][]byte{trivial, echo} {
				if st, b, err := p.do(ctx, http.MethodPost, "/v1/skills?allow_tofu=true", a); err != nil || st != http.StatusCreated {
					p.kill()
					return nil, fmt.Errorf("install through the daemon: %d %s %v", st, b, err)
				}
			}
		}
		for _, c := range calls {
			st, b, err := p.do(ctx, http.MethodPost, c.path, map[string]json.RawMessage{"input": echoInput})
			var out struct {
				Output json.RawMessage `json:"output"`
			}
			if err != nil || st != http.StatusOK || json.Unmarshal(b, &out) != nil || string(out.Output) != c.want {
				p.kill()
				return nil, fmt.Errorf("call %s: %d %s %v", c.path, st, b, err)
			}
		}
		st, b, err := p.do(ctx, http.MethodGet, "/v1/sidecars", nil)
		var list struct {
			Sidecars []host.SidecarState `json:"sidecars"`
		}
		if err != nil || st != http.StatusOK || json.Unmarshal(b, &list) != nil {
			p.kill()
			return nil, fmt.Errorf("GET /v1/sidecars: %d %s %v", st, b, err)
		}
		var pids []int
		for _, s := range list.Sidecars {
			if s.PID > 0 {
				pids = append(pids, s.PID)
			}
		}
		p.kill()
		time.Sleep(time.Second)
		var alive []int
		for _, pid := range pids {
			if processAlive(pid) {
				alive = append(alive, pid)
				_ = syscall.Kill(pid, syscall.SIGKILL) // nothing of ours outlives the run
			}
		}
		row.check(len(pids) > 0 && len(alive) == 0, "kill %d: %d of %d sidecars alive 1 s after (pids %v)", k+1, len(alive), len(pids), alive)
		left, err := leftovers(tmp, state)
		if err != nil {
			return nil, err
		}
		leftAfter = append(leftAfter, fmt.Sprint(len(left)))
	}
	p, err := e.startDaemon(ctx, state, tmp)
	if err != nil {
		return nil, err
	}
	if err := p.stop(); err != nil {
		return nil, err
	}
	left, err := leftovers(tmp, state)
	if err != nil {
		return nil, err
	}
	row.check(len(left) == 0, "after %d kills, a restart and a clean stop: %d entries left (%s)", kills, len(left), firstN(left, 4))
	row.Figures = append(row.Figures,
		fmt.Sprintf("sidecars alive 1 s after the kill: %d kills checked (must be 0 each)", kills),
		fmt.Sprintf("entries left in TMPDIR and the state dir's run/socket dirs after each kill: %s", strings.Join(leftAfter, ", ")),
		fmt.Sprintf("left after a restart and a clean stop: %d (must be 0)", len(left)))
	return []relRow{row}, nil
}

// processAlive reports whether pid runs (exists and is not a zombie).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// leftovers lists what dead owners left: every path under tmp, every
// socket under state, and every path under a run, runtime, sockets or tmp
// directory of state.
func leftovers(tmp, state string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != tmp {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(state, p)
		first := strings.SplitN(rel, string(filepath.Separator), 2)
		runDir := len(first) == 2 && (first[0] == "run" || first[0] == "runtime" || first[0] == "sockets" || first[0] == "tmp")
		if runDir || d.Type()&fs.ModeSocket != 0 {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// firstN joins the first n of ss.
func firstN(ss []string, n int) string {
	if len(ss) > n {
		return strings.Join(ss[:n], ", ") + ", …"
	}
	return strings.Join(ss, ", ")
}
