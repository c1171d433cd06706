package sidecar_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"go.uber.org/goleak"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"

	"github.com/palyra-go/palyra/internal/buildinfo"
)

// binPath is the palyra-sidecar binary TestMain builds once; hostTmp is the
// TMPDIR of the test process, where go-plugin puts the host side's broker
// sockets.
var binPath, hostTmp string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "palyra-sidecar-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "palyra-sidecar")
	build := exec.Command("go", "build", "-ldflags="+buildinfo.SidecarLDFlags, "-o", binPath, "github.com/palyra-go/palyra/cmd/palyra-sidecar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building palyra-sidecar:", err)
		os.Exit(1)
	}
	hostTmp = filepath.Join(dir, "tmp")
	if err := os.Mkdir(hostTmp, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", hostTmp)

	// goleak.VerifyTestMain runs the tests and fails when goroutines survive
	// them: every go-plugin client was Killed, which waits for its
	// goroutines and stops the broker's AcceptAndServe.
	goleak.VerifyTestMain(wrap{m, func(code int) int {
		if code == 0 {
			if socks := sockets(hostTmp); len(socks) > 0 {
				fmt.Fprintln(os.Stderr, "host-side sockets left behind:", socks)
				code = 1
			}
		}
		os.RemoveAll(dir)
		return code
	}})
}

// wrap runs a check after the tests, before goleak's own.
type wrap struct {
	m     *testing.M
	after func(int) int
}

func (w wrap) Run() int { return w.after(w.m.Run()) }

// sockets lists the Unix socket files directly in dir.
func sockets(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is one running palyra-sidecar process under test.
type proc struct {
	*sidecarplugin.Client
	pc      *goplugin.Client
	pid     int
	sockDir string
	logs    *syncBuffer
}

// start starts a sidecar the way the supervisor will: gRPC only, AutoMTLS,
// Pdeathsig and its own process group, a private socket dir, a silent
// logger (logs captured in s.logs). The cleanup Kills it and checks that no
// process or socket is left.
//
// The sidecar hardens itself as under the supervisor: its private dir is
// the socket dir, and the fixtures' directory stands for its module;
// args add flags (a cache dir).
func start(t testing.TB, broker sidecarplugin.Broker, args ...string) *proc {
	t.Helper()
	sockDir := t.TempDir()
	fixtures, err := filepath.Abs(filepath.Join("..", "testdata", "wasm"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, append([]string{"--harden-private-dir=" + sockDir, "--harden-module=" + fixtures}, args...)...)
	cmd.Env = append(os.Environ(), "PLUGIN_UNIX_SOCKET_DIR="+sockDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	logs := &syncBuffer{}
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sidecarplugin.Handshake,
		Plugins:          sidecarplugin.ClientPlugins(broker),
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info}),
		SyncStdout:       io.Discard,
		SyncStderr:       io.Discard,
	})
	s := &proc{pc: pc, sockDir: sockDir, logs: logs}
	t.Cleanup(func() { s.kill(t) })
	rpc, err := pc.Client()
	if err != nil {
		t.Fatalf("starting sidecar: %v", err)
	}
	s.pid = pc.ReattachConfig().Pid
	raw, err := rpc.Dispense(sidecarplugin.PluginName)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	s.Client = raw.(*sidecarplugin.Client)
	return s
}

// kill Kills the sidecar and checks that its process and socket are gone.
func (s *proc) kill(t testing.TB) {
	t.Helper()
	s.pc.Kill()
	if s.pid != 0 {
		if err := syscall.Kill(s.pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("sidecar pid %d still exists after Kill (kill -0: %v)", s.pid, err)
		}
	}
	if entries, _ := os.ReadDir(s.sockDir); len(entries) > 0 {
		t.Errorf("socket dir not empty after Kill: %v", entries)
	}
}

// fixture returns a testdata/wasm module's path, bytes and sha256.
func fixture(t testing.TB, name string) (path string, wasm []byte, sum string) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "testdata", "wasm", name))
	if err != nil {
		t.Fatal(err)
	}
	wasm, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(wasm)
	return path, wasm, hex.EncodeToString(h[:])
}

// loadPath is a LoadSkillRequest for a fixture by path.
func loadPath(t testing.TB, skillID, name string) *sidecarv1.LoadSkillRequest {
	t.Helper()
	path, _, sum := fixture(t, name)
	return &sidecarv1.LoadSkillRequest{
		SkillId:      skillID,
		Module:       &sidecarv1.LoadSkillRequest_ModulePath{ModulePath: path},
		ModuleSha256: sum,
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// codeOf returns the code of a *sidecarplugin.Error, or fails.
func codeOf(t testing.TB, err error) string {
	t.Helper()
	var se *sidecarplugin.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *sidecarplugin.Error", err, err)
	}
	return se.Code()
}

func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
