package host_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/internal/proctest"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
	"go.uber.org/goleak"
)

// sidecarPath is the palyra-sidecar binary, liarPath a sidecar that answers
// every Invoke with its input as output (host/supervisor's raw comparison
// plugin: a compromised sidecar, as far as the host can tell), and echoWasm
// the echo example module, all built once by TestMain.
var sidecarPath, liarPath, echoWasm string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "palyra-host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		sidecarPath = filepath.Join(dir, "palyra-sidecar")
		build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-ldflags="+buildinfo.SidecarLDFlags, "-o", sidecarPath, "github.com/palyra-go/palyra/cmd/palyra-sidecar")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building palyra-sidecar:", err)
			return 1
		}
		liarPath = filepath.Join(dir, "liar-sidecar")
		build = exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", liarPath, "github.com/palyra-go/palyra/host/supervisor/testdata/rawplugin")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the lying sidecar:", err)
			return 1
		}
		echoWasm, err = examplebuild.Build(context.Background(), "echo", dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "building the echo example:", err)
			return 1
		}
		tmp := filepath.Join(dir, "tmp")
		os.Mkdir(tmp, 0o700)
		os.Setenv("TMPDIR", tmp)
		return m.Run()
	}()
	os.RemoveAll(dir)
	if code != 0 {
		os.Exit(code)
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// openHost opens a Host on a fresh state dir with the echo example
// installed and trusted; Close is checked at cleanup.
func openHost(t *testing.T) *host.Host {
	t.Helper()
	h, _ := openHostWith(t, supervisor.Config{})
	return h
}

// openHostWith is openHost with the supervisor tuned by sc; it returns the
// state dir too.
func openHostWith(t *testing.T, sc supervisor.Config) (*host.Host, string) {
	t.Helper()
	ctx := context.Background()
	state := t.TempDir()
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	sc.SocketDir = sock
	h, err := host.Open(ctx, host.Config{
		StateDir:    state,
		SidecarPath: sidecarPath,
		Supervisor:  sc,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := h.Close(ctx); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if entries, _ := os.ReadDir(sock); len(entries) > 0 {
			t.Errorf("socket dirs left: %v", entries)
		}
	})
	data, keyHex, err := buildEcho()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: data, TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: keyHex}}}); err != nil {
		t.Fatal(err)
	}
	return h, state
}

// sidecarOf is the supervisor's view of the sidecar of skill id (stopped
// when it has none).
func sidecarOf(t *testing.T, h *host.Host, id string) host.SidecarState {
	t.Helper()
	sts, err := h.Sidecars(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if st.SkillID == id {
			return st
		}
	}
	return host.SidecarState{SkillID: id, Status: supervisor.StatusStopped}
}

func TestCallGate(t *testing.T) {
	h := openHost(t)
	ctx := context.Background()
	res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.upper", Input: json.RawMessage(`{"text":"abc"}`)})
	if err != nil || string(res.Output) != `{"text":"ABC"}` {
		t.Fatalf("upper: %v %+v", err, res)
	}
	tests := []struct {
		name, skill, tool, input, code string
	}{
		{"tool error", "palyra.echo", "palyra.upper", `{"text":""}`, "tool_error"},
		{"invalid input", "palyra.echo", "palyra.echo", `{"txt":"x"}`, "invalid_input"},
		{"not json", "palyra.echo", "palyra.echo", `{`, "invalid_input"},
		{"unknown tool", "palyra.echo", "palyra.nope", `{}`, "unknown_tool"},
		{"unknown skill", "acme.nope", "x", `{}`, "skill_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Call(ctx, host.CallRequest{SkillID: tt.skill, ToolID: tt.tool, Input: json.RawMessage(tt.input)})
			if got := errcode.Of(err); got != tt.code {
				t.Errorf("code %q, want %q (%v)", got, tt.code, err)
			}
		})
	}
	if _, err := h.Quarantine(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"x"}`)}); errcode.Of(err) != "skill_quarantined" {
		t.Errorf("quarantined: %v", err)
	}
	if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "palyra.echo", Override: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Disable(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"x"}`)}); errcode.Of(err) != "skill_disabled" {
		t.Errorf("disabled: %v", err)
	}
	if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "palyra.echo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Errorf("enabled again: %v", err)
	}
	skills, err := h.List(ctx, host.ListRequest{})
	if err != nil || skills.Count != 1 || skills.Entries[0].SkillID != "palyra.echo" || skills.Entries[0].Status != "active" {
		t.Errorf("List: %v %+v", err, skills)
	}
	// The counters hold installed skills only: the unknown skill's call was
	// not counted, the unknown tool's was (as an error of the skill).
	all := h.AllStats()
	if _, ok := all["acme.nope"]; ok || len(all) != 1 {
		t.Errorf("AllStats has %d skills: %v", len(all), all)
	}
	if st := all["palyra.echo"]; st.Errors["unknown_tool"] != 1 || st.Calls != 8 {
		t.Errorf("palyra.echo stats %+v", st)
	}
}

func TestTrustRecheckedAtCall(t *testing.T) {
	h, state := openHostWith(t, supervisor.Config{})
	ctx := context.Background()
	if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	// The operator drops the publisher's key: the next call is refused.
	b, _ := trust.NewStore().Marshal()
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(statedir.At(state).TrustStore(), b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"x"}`)})
	if err == nil {
		t.Fatal("call succeeded after the publisher's key was removed")
	}
	t.Logf("refused with %s: %v", errcode.Of(err), err)
}

// TestInvalidOutput installs the WAT echo (it returns its whole input
// document) under an output_schema it does not meet.
func TestInvalidOutput(t *testing.T) {
	h, state := openHostWith(t, supervisor.Config{})
	ctx := context.Background()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := `manifest_version = 2
skill_id = "acme.liar"
name = "Liar"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.liar"
name = "liar"
description = "Claims to return {echo}."

[entrypoints.tools.input_schema]
type = "object"

[entrypoints.tools.output_schema]
type = "object"
required = ["echo"]

[entrypoints.tools.risk]
default_sensitive = false
requires_approval = false

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Liar"
`
	key := testskill.Key(9)
	built := testskill.Build(t, manifest, wasm, key)
	pub := hex.EncodeToString(key.Public().(ed25519.PublicKey))
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: built, TrustedPublishers: []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}}}); err != nil {
		t.Fatal(err)
	}
	res, err := h.Call(ctx, host.CallRequest{SkillID: "acme.liar", ToolID: "acme.liar", Input: json.RawMessage(`{"a":1}`)})
	if !errors.Is(err, host.ErrInvalidOutput) || errcode.Of(err) != "invalid_output" {
		t.Fatalf("call: %v", err)
	}
	if res == nil || res.Output != nil {
		t.Errorf("unchecked output handed back: %+v", res)
	}
	if !strings.Contains(err.Error(), "acme.liar") {
		t.Errorf("message %q", err)
	}

	// The check above may have been the sidecar's own. Now the sidecar
	// lies: it answers with the input as output and skips every check.
	// The host, on the trusted side, must still refuse the output.
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	liar, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: liarPath, Supervisor: supervisor.Config{SocketDir: sock}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := liar.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	res, err = liar.Call(ctx, host.CallRequest{SkillID: "acme.liar", ToolID: "acme.liar", Input: json.RawMessage(`{"a":1}`)})
	if !errors.Is(err, host.ErrInvalidOutput) || (res != nil && res.Output != nil) {
		t.Fatalf("lying sidecar: output %+v, err %v; want invalid_output and no output", res, err)
	}
	// And output that fits the schema passes, so the refusal above is the
	// schema's doing, not a broken sidecar.
	res, err = liar.Call(ctx, host.CallRequest{SkillID: "acme.liar", ToolID: "acme.liar", Input: json.RawMessage(`{"echo":"x"}`)})
	if err != nil || string(res.Output) != `{"echo":"x"}` {
		t.Fatalf("lying sidecar, valid output: %+v, %v", res, err)
	}
}

// installWAT installs a testdata/wasm module as skill id (tool id+".t")
// signed by a test key, with the given quotas.
func installWAT(t *testing.T, h *host.Host, id, module, quotas string) {
	t.Helper()
	built := watArtifact(t, id, "1.0.0", module, quotas)
	pub := hex.EncodeToString(testskill.Key(7).Public().(ed25519.PublicKey))
	if _, err := h.Install(context.Background(), host.InstallRequest{Artifact: built, TrustedPublishers: []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}}}); err != nil {
		t.Fatal(err)
	}
}

// watArtifact signs, by testskill.Key(7) for publisher acme, a one-tool
// skill id (tool id+".t") at version whose module is
// testdata/wasm/<module>.wasm, with the given quotas ("" for none).
func watArtifact(t *testing.T, id, version, module, quotas string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", module+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := testskill.OneToolManifest(id, version, quotas)
	return testskill.Build(t, manifest, wasm, testskill.Key(7))
}

// TestCrashLoopRecorded crashes a skill's sidecar until the supervisor
// holds it crashlooping, and checks the inventory shows it and that an
// operator's enable lets it run again.
func TestCrashLoopRecorded(t *testing.T) {
	h, _ := openHostWith(t, supervisor.Config{CrashLoopThreshold: 2, RestartBackoff: time.Millisecond})
	ctx := context.Background()
	installWAT(t, h, "acme.sleeper", "sleep", "wall_clock_timeout_ms = 5000")
	for i := range 2 {
		errc := make(chan error, 1)
		go func() {
			_, err := h.Call(ctx, host.CallRequest{SkillID: "acme.sleeper", ToolID: "acme.sleeper.t", Input: json.RawMessage(`{}`)})
			errc <- err
		}()
		deadline := time.Now().Add(10 * time.Second)
		var pid int
		for {
			st := sidecarOf(t, h, "acme.sleeper")
			if st.InFlight == 1 && st.PID != 0 {
				pid = st.PID
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: not running: %+v", i, st)
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		syscall.Kill(pid, syscall.SIGKILL)
		if err := <-errc; errcode.Of(err) != "sidecar_crashed" {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	info, err := h.Info(ctx, host.SkillRef{SkillID: "acme.sleeper"})
	if err != nil || info.Inventory.Status != "crashlooping" {
		t.Fatalf("inventory status: %v %+v", err, info)
	}
	if _, err := h.Call(ctx, host.CallRequest{SkillID: "acme.sleeper", ToolID: "acme.sleeper.t", Input: json.RawMessage(`{}`)}); errcode.Of(err) != "crashlooping" {
		t.Errorf("call while crashlooping: %v", err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "acme.sleeper"}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := h.Call(cctx, host.CallRequest{SkillID: "acme.sleeper", ToolID: "acme.sleeper.t", Input: json.RawMessage(`{}`)}); errcode.Of(err) != "timeout" {
		t.Errorf("call after enable: %v (code %s), want it to run until its timeout", err, errcode.Of(err))
	}
}

// TestPrecompileAtInstall checks that an install compiles the module into
// the cache in a palyra-sidecar child, so that the first call's sidecar
// loads it from the cache.
func TestPrecompileAtInstall(t *testing.T) {
	h, state := openHostWith(t, supervisor.Config{}) // installs palyra.echo
	ctx := context.Background()
	cache := filepath.Join(state, "cache", "modules")
	var files int
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
		}
		return nil
	})
	if files == 0 {
		t.Fatalf("no precompiled entry in %s after install", cache)
	}
	if st := sidecarOf(t, h, "palyra.echo"); st.Status != supervisor.StatusStopped {
		t.Fatalf("a sidecar runs before the first call: %+v", st)
	}
	res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if st := sidecarOf(t, h, "palyra.echo"); !st.CacheHit || st.PID != res.SidecarPID {
		t.Errorf("first call's sidecar: %+v, want a cache hit", st)
	}
}

// TestPrecompileFailureQuarantines checks that a failed precompile keeps
// the install, quarantined with a precompile_failed reason.
func TestPrecompileFailureQuarantines(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake-sidecar")
	script := "#!/bin/sh\necho '{\"abi_version\":\"x\",\"error_code\":\"compile_failed\",\"error\":\"boom\"}'\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: filepath.Join(dir, "state"), SidecarPath: fake})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	data, keyHex, err := buildEcho()
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Install(ctx, host.InstallRequest{Artifact: data, TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: keyHex}}})
	if !errors.Is(err, install.ErrPrecompileFailed) || errcode.Of(err) != "precompile_failed" {
		t.Fatalf("install: %v", err)
	}
	if res == nil || !res.Installed || res.Status != "quarantined" || len(res.Reasons) == 0 ||
		!strings.HasPrefix(res.Reasons[len(res.Reasons)-1], "precompile_failed: ") || !strings.Contains(res.Reasons[len(res.Reasons)-1], "boom") {
		t.Fatalf("install result: %+v", res)
	}
	if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`)}); errcode.Of(err) != "skill_quarantined" {
		t.Errorf("call: %v", err)
	}
}

// TestStartEagerly checks that Open with StartEagerly starts the sidecar of
// every active skill before the first call, and that the call uses it.
func TestStartEagerly(t *testing.T) {
	h, state := openHostWith(t, supervisor.Config{}) // a state dir with palyra.echo installed
	ctx := context.Background()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	h2, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: sidecarPath, StartEagerly: true, Supervisor: supervisor.Config{SocketDir: sock}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close(ctx)
	st := sidecarOf(t, h2, "palyra.echo")
	if st.Status != supervisor.StatusRunning || st.PID == 0 || !st.CacheHit {
		t.Fatalf("after an eager Open: %+v", st)
	}
	res, err := h2.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`)})
	if err != nil || res.SidecarPID != st.PID {
		t.Errorf("call: %v, pid %v want %d", err, res, st.PID)
	}
}

// TestStopSidecar checks the diagnostics stop: the running sidecar ends
// (its process gone), the skill's status is untouched, and the next call
// starts a new sidecar.
func TestStopSidecar(t *testing.T) {
	h := openHost(t)
	ctx := context.Background()
	call := host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`)}
	first, err := h.Call(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	if st := sidecarOf(t, h, "palyra.echo"); st.Status != supervisor.StatusRunning || st.PID != first.SidecarPID {
		t.Fatalf("after a call: %+v, want running pid %d", st, first.SidecarPID)
	}
	h.StopSidecar("palyra.echo", "0.1.0")
	if st := sidecarOf(t, h, "palyra.echo"); st.Status != supervisor.StatusStopped || st.PID != 0 {
		t.Fatalf("after StopSidecar: %+v, want stopped", st)
	}
	proctest.WaitGone(t, []int{first.SidecarPID}, 10*time.Second)
	info, err := h.Info(ctx, host.SkillRef{SkillID: "palyra.echo"})
	if err != nil || info.Inventory.Status != "active" {
		t.Fatalf("status after StopSidecar: %v %+v", err, info)
	}
	second, err := h.Call(ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	if second.SidecarPID == 0 || second.SidecarPID == first.SidecarPID {
		t.Errorf("call after StopSidecar ran in pid %d (first %d), want a new sidecar", second.SidecarPID, first.SidecarPID)
	}
	// Stopping a version that has no sidecar does nothing.
	h.StopSidecar("acme.nope", "1.0.0")
}
