package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/mcpserver"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/internal/mcptest"
	"github.com/palyra-go/palyra/internal/proctest"
	"github.com/palyra-go/palyra/internal/testskill"
)

// probeDir holds the MCP tests' skill (mcpprobe) and profile.
var probeDir = filepath.Join("..", "..", "host", "mcpserver", "testdata", "mcpprobe")

func readProbe(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(probeDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stateWithSkills installs the mcpprobe skill under each id into a fresh
// state directory and returns it with the host that installed them (no
// sidecar: it only changes statuses later, as the CLI would).
func stateWithSkills(t *testing.T, ids ...string) (string, *host.Host) {
	t.Helper()
	state := t.TempDir()
	prof, err := policy.Parse(readProbe(t, "policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: state, Policy: prof})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	for _, id := range ids {
		m := strings.Replace(string(readProbe(t, "skill.toml")), `skill_id = "test.mcpprobe"`, fmt.Sprintf("skill_id = %q", id), 1)
		art := testskill.Build(t, m, readProbe(t, "mcpprobe.wasm"), testskill.Key(7))
		res, err := h.Install(ctx, host.InstallRequest{Artifact: art, AllowTOFU: true})
		if err != nil || res.Status != "active" {
			t.Fatalf("install %s: %+v %v", id, res, err)
		}
	}
	return state, h
}

// stdioServer is a `palyra-host mcp` process and an MCP client session
// with it over its stdin and stdout.
type stdioServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *proctest.Buffer
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
	cs     *mcp.ClientSession
}

// startMCP starts `palyra-host mcp` on state and connects a client with
// opts to it over the process's stdin and stdout.
func startMCP(t *testing.T, state string, opts *mcp.ClientOptions, args ...string) *stdioServer {
	t.Helper()
	all := append([]string{"mcp", "--state-dir", state, "--policy", filepath.Join(probeDir, "policy.toml"), "--log-level", "debug"}, args...)
	cmd := exec.Command(filepath.Join(bin, "palyra-host"), all...)
	cmd.Env = append(os.Environ(), "PALYRA_SIDECAR="+filepath.Join(bin, "palyra-sidecar"))
	s := &stdioServer{t: t, cmd: cmd, stderr: &proctest.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.stdin = stdin
	// Wait closes stdout once the process is gone: reads end then.
	go func() { s.err = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		s.stdin.Close()
		select {
		case <-s.exited:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-s.exited
		}
		if s.cs != nil {
			s.cs.Close()
		}
		if t.Failed() {
			t.Logf("palyra-host mcp stderr:\n%s", s.stderr)
		}
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, opts).
		Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: nopCloser{stdin}}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, s.stderr)
	}
	s.cs = cs
	return s
}

// nopCloser keeps the client from closing stdin: the test does.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// exit closes the process's stdin (the MCP stdio shutdown) and returns how
// it exited.
func (s *stdioServer) exit() error {
	s.t.Helper()
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		s.t.Fatalf("palyra-host mcp did not exit within a minute of stdin's end\nstderr:\n%s", s.stderr)
	}
	return s.err
}

// TestMCPStdio runs the MCP tools of a state directory through a real
// `palyra-host mcp` process and the SDK's client over its stdio: list,
// echo, a failing tool, approval by elicitation (accepted, declined, and
// refused without elicitation), progress and cancellation of a long call,
// list_changed after another process quarantines a skill, and a clean
// exit on stdin EOF with every sidecar gone.
func TestMCPStdio(t *testing.T) {
	state, h := stateWithSkills(t, "test.mcpprobe", "test.other")
	rec := mcptest.NewRecorder()
	srv := startMCP(t, state, rec.Options())
	cs := srv.cs
	ctx := context.Background()

	// tools/list: both skills' tools, the first skill's under the plain
	// names, with schemas, annotations and the ids in _meta.
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range lr.Tools {
		tools[tl.Name] = tl
	}
	if len(tools) != 6 {
		t.Fatalf("%d tools, want 6", len(tools))
	}
	echo := tools["test_echo"]
	if echo == nil || echo.Meta[mcpserver.MetaSkillID] != "test.mcpprobe" || echo.Meta[mcpserver.MetaToolID] != "test.echo" {
		t.Fatalf("test_echo: %+v", echo)
	}
	if in, _ := json.Marshal(echo.InputSchema); string(in) != `{"properties":{"text":{"type":"string"}},"type":"object"}` {
		t.Errorf("inputSchema %s", in)
	}
	if out, _ := json.Marshal(echo.OutputSchema); string(out) != `{"type":"object"}` {
		t.Errorf("outputSchema %s", out)
	}
	if a := tools["test_guarded"].Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("test_guarded annotations %+v", a)
	}
	var otherEcho string
	for n, tl := range tools {
		if tl.Meta[mcpserver.MetaSkillID] == "test.other" && tl.Meta[mcpserver.MetaToolID] == "test.echo" {
			otherEcho = n
		}
	}
	if !strings.HasPrefix(otherEcho, "test_echo_") || !mcpserver.ValidName(otherEcho) {
		t.Errorf("test.other's echo is named %q", otherEcho)
	}

	// echo, and a tool that fails.
	res := mcptest.Call(t, cs, "test_echo", map[string]any{"text": "hi"})
	if sc, _ := json.Marshal(res.StructuredContent); res.IsError || string(sc) != `{"text":"hi"}` {
		t.Fatalf("echo: %s %v", sc, res.Content)
	}
	if code := mcptest.ErrorCode(t, mcptest.Call(t, cs, "test_echo", map[string]any{"text": "fail!"})); code != "tool_error" {
		t.Errorf("fail!: code %q", code)
	}

	// Approval by elicitation, accepted then declined.
	if res := mcptest.Call(t, cs, "test_guarded", map[string]any{"text": "ok"}); res.IsError {
		t.Errorf("approved call: %v", res.Content)
	}
	rec.SetApprove(false)
	if code := mcptest.ErrorCode(t, mcptest.Call(t, cs, "test_guarded", map[string]any{"text": "no"})); code != "approval_declined" {
		t.Errorf("declined call: code %q", code)
	}
	if asked := rec.Asked(); len(asked) != 2 || !strings.Contains(asked[1], `{"text":"no"}`) || !strings.Contains(asked[1], "test.guarded") {
		t.Errorf("approval requests: %q", asked)
	}

	// A long call: progress notifications, then a cancel that ends it.
	pid := srv.cmd.Process.Pid
	mcptest.CancelAfterProgress(t, cs, rec.Progress, "test_echo", map[string]any{"text": "spin!"}, "p1")
	// The skill still works: the sidecar stopped the guest.
	if res := mcptest.Call(t, cs, "test_echo", map[string]any{"text": "after"}); res.IsError {
		t.Fatalf("call after the cancel: %v", res.Content)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(srv.stderr.String(), "code=canceled") {
		if time.Now().After(deadline) {
			t.Fatal("the server never logged the cancelled call")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Another process quarantines test.other: list_changed, and its
	// tools are gone.
	if _, err := h.Quarantine(host.WithPrincipal(ctx, "user:test"), host.StatusRequest{SkillID: "test.other", Reason: "mcp test"}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case <-rec.Changed:
		case <-time.After(30 * time.Second):
			t.Fatal("no list_changed after the quarantine")
		}
		lr, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(lr.Tools) == 3 && !slices.ContainsFunc(lr.Tools, func(tl *mcp.Tool) bool { return tl.Meta[mcpserver.MetaSkillID] == "test.other" }) {
			break
		}
	}

	// A client without elicitation is refused a tool that needs approval.
	plain := startMCP(t, state, nil)
	if code := mcptest.ErrorCode(t, mcptest.Call(t, plain.cs, "test_guarded", map[string]any{})); code != "approval_required" {
		t.Errorf("without elicitation: code %q", code)
	}
	if err := plain.exit(); err != nil {
		t.Errorf("second server's exit: %v", err)
	}

	// stdin EOF: exit 0, every sidecar gone, nothing but MCP on stdout
	// (the client would have failed on anything else).
	kids := proctest.Children(pid)
	if len(kids) == 0 {
		t.Error("no sidecar process under palyra-host mcp")
	}
	if err := srv.exit(); err != nil {
		t.Fatalf("exit after stdin EOF: %v", err)
	}
	proctest.WaitGone(t, kids, 10*time.Second)
	if !strings.Contains(srv.stderr.String(), "palyra-host mcp stopped") {
		t.Errorf("stderr lacks the stop line:\n%s", srv.stderr)
	}
}

// startSpinning starts palyra-host mcp on state and a call that runs until
// stopped, and returns once the call reported progress; done gets the
// call's end.
func startSpinning(t *testing.T, state string) (srv *stdioServer, done <-chan error) {
	t.Helper()
	rec := mcptest.NewRecorder()
	srv = startMCP(t, state, rec.Options())
	ended := make(chan error, 1)
	go func() {
		_, err := srv.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"text": "spin!"}, Meta: mcp.Meta{"progressToken": "spin"}})
		ended <- err
	}()
	select {
	case <-rec.Progress:
	case <-time.After(30 * time.Second):
		t.Fatal("no progress")
	}
	return srv, ended
}

// TestMCPStdioSIGTERM: SIGTERM during a long call ends the process with
// status 0 and its sidecars gone.
func TestMCPStdioSIGTERM(t *testing.T) {
	state, _ := stateWithSkills(t, "test.mcpprobe")
	srv, done := startSpinning(t, state)
	kids := proctest.Children(srv.cmd.Process.Pid)
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-srv.exited
	if srv.err != nil {
		t.Errorf("exit after SIGTERM: %v", srv.err)
	}
	if err := <-done; err == nil {
		t.Error("the call in flight at SIGTERM ended without an error")
	}
	proctest.WaitGone(t, kids, 10*time.Second)
}

// TestMCPStdioEOFDuringCall: the client closing stdin while a long call
// runs ends the call (cancelled, not run to its wall clock) and the
// process, with status 0 and its sidecars gone.
func TestMCPStdioEOFDuringCall(t *testing.T) {
	state, _ := stateWithSkills(t, "test.mcpprobe")
	srv, done := startSpinning(t, state)
	kids := proctest.Children(srv.cmd.Process.Pid)
	if err := srv.exit(); err != nil {
		t.Errorf("exit after stdin EOF: %v", err)
	}
	if err := <-done; err == nil {
		t.Error("the call in flight at EOF ended without an error")
	}
	if log := srv.stderr.String(); !strings.Contains(log, "code=canceled") || strings.Contains(log, "code=timeout") {
		t.Errorf("the call was not cancelled by the EOF:\n%s", log)
	}
	proctest.WaitGone(t, kids, 10*time.Second)
}

// TestMCPBadFlag: a bad --approval-without-elicitation is a usage error,
// before anything starts.
func TestMCPBadFlag(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"mcp", "--state-dir", t.TempDir(), "--approval-without-elicitation", "ask"}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "mcp_option_invalid") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q, want nothing", out.String())
	}
}
