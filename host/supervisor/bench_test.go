package supervisor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// The benchmarks compare, in one run, the supervisor's sidecars with a raw
// go-plugin gRPC plugin (testdata/rawplugin) serving the same
// SidecarService with an Invoke that echoes its input:
//
//	go test -run='^$' -bench='ColdStart|WarmCall' -count=5 ./host/supervisor/

// echoInput is the payload of the go_echo and raw_go_plugin warm calls.
var echoInput = []byte(`{"text":"hello"}`)

// spawn starts bin as a go-plugin sidecar the way the supervisor does
// (gRPC, AutoMTLS, a private socket dir) and dispenses its client.
func spawn(tb testing.TB, bin, sockRoot string) (*goplugin.Client, *sidecarplugin.Client, string) {
	sockDir, err := os.MkdirTemp(sockRoot, "b-")
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PLUGIN_UNIX_SOCKET_DIR="+sockDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sidecarplugin.Handshake,
		Plugins:          sidecarplugin.ClientPlugins(nil),
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           hclog.NewNullLogger(),
		SyncStdout:       io.Discard,
		SyncStderr:       io.Discard,
	})
	rpc, err := pc.Client()
	if err != nil {
		pc.Kill()
		os.RemoveAll(sockDir)
		tb.Fatal(err)
	}
	raw, err := rpc.Dispense(sidecarplugin.PluginName)
	if err != nil {
		pc.Kill()
		os.RemoveAll(sockDir)
		tb.Fatal(err)
	}
	return pc, raw.(*sidecarplugin.Client), sockDir
}

// precompiled returns the answer.wasm target and a cache dir that holds its
// precompiled entry (made by `palyra-sidecar precompile`).
func precompiled(tb testing.TB) (Target, string) {
	tg := fixture(tb, "bench.answer", "answer.wasm")
	tg.Entrypoint = "answer"
	cache := shortDir(tb)
	out, err := exec.Command(binPath, "precompile", "--wasm", tg.ModulePath, "--cache-dir", cache, "--sha256", tg.ModuleSHA256).CombinedOutput()
	if err != nil {
		tb.Fatalf("precompile: %v: %s", err, out)
	}
	return tg, cache
}

func BenchmarkColdStart(b *testing.B) {
	ctx := context.Background()
	b.Run("sidecar_precompiled", func(b *testing.B) {
		tg, cache := precompiled(b)
		sock := shortDir(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			pc, cl, sockDir := spawn(b, binPath, sock)
			lr, err := cl.LoadSkill(ctx, &sidecarv1.LoadSkillRequest{
				SkillId: tg.SkillID, SkillVersion: tg.Version,
				Module:       &sidecarv1.LoadSkillRequest_ModulePath{ModulePath: tg.ModulePath},
				ModuleSha256: tg.ModuleSHA256, CacheDir: cache, Entrypoint: tg.Entrypoint,
				PreparedInstances: DefaultPreparedInstances, Limits: &sidecarv1.Limits{}, Grants: &sidecarv1.Grants{},
			})
			if err != nil || !lr.GetCacheHit() {
				b.Fatalf("LoadSkill: %v (cache hit %v)", err, lr.GetCacheHit())
			}
			resp, err := cl.Invoke(ctx, &sidecarv1.InvokeRequest{InvocationId: "x", SkillId: tg.SkillID, ToolId: "t", Input: []byte(`{}`)})
			if err != nil || !bytes.Contains(resp.GetOutput(), []byte("42")) {
				b.Fatalf("Invoke: %v %s", err, resp.GetOutput())
			}
			pc.Kill()
			os.RemoveAll(sockDir)
		}
	})
	b.Run("raw_go_plugin", func(b *testing.B) {
		sock := shortDir(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			pc, cl, sockDir := spawn(b, rawPath, sock)
			resp, err := cl.Invoke(ctx, &sidecarv1.InvokeRequest{InvocationId: "x", SkillId: "raw", ToolId: "t", Input: []byte(`{}`)})
			if err != nil || string(resp.GetOutput()) != `{}` {
				b.Fatalf("Invoke: %v %s", err, resp.GetOutput())
			}
			pc.Kill()
			os.RemoveAll(sockDir)
		}
	})
}

// echoTarget is the echo Go example as a Target.
func echoTarget(tb testing.TB) Target {
	path := examplebuild.MustBuild(tb, "echo")
	wasm, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	h := sha256.Sum256(wasm)
	return Target{SkillID: "bench.echo", Version: "0.1.0", ModulePath: path, ModuleSHA256: hex.EncodeToString(h[:])}
}

func BenchmarkWarmCall(b *testing.B) {
	ctx := context.Background()
	b.Run("wat_answer", func(b *testing.B) {
		tg, cache := precompiled(b)
		s := newSup(b, Config{CacheDir: cache})
		if _, err := s.Call(ctx, tg, "t", []byte(`{}`), CallOptions{}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.Call(ctx, tg, "t", []byte(`{}`), CallOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go_echo", func(b *testing.B) {
		tg := echoTarget(b)
		s := newSup(b, Config{CacheDir: shortDir(b)})
		if _, err := s.Call(ctx, tg, "palyra.echo", echoInput, CallOptions{}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := s.Call(ctx, tg, "palyra.echo", echoInput, CallOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if i == 0 && !res.Stats.Prepared {
				b.Logf("go_echo call did not use a prepared instance")
			}
		}
	})
	b.Run("raw_go_plugin", func(b *testing.B) {
		pc, cl, sockDir := spawn(b, rawPath, shortDir(b))
		defer func() {
			pc.Kill()
			os.RemoveAll(sockDir)
		}()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			resp, err := cl.Invoke(ctx, &sidecarv1.InvokeRequest{InvocationId: "x", SkillId: "raw", ToolId: "palyra.echo", Input: echoInput})
			if err != nil || len(resp.GetOutput()) != len(echoInput) {
				b.Fatalf("Invoke: %v", err)
			}
		}
	})
}

// vmRSS returns a process's resident set size in KiB (/proc/PID/status).
func vmRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// TestSidecarIdleRSS logs the idle RSS of one sidecar after its skill is
// loaded and has served a call (answer.wasm and the echo Go example), next
// to the raw go-plugin baseline's.
func TestSidecarIdleRSS(t *testing.T) {
	ctx := ctxT(t)
	tg, cache := precompiled(t)
	// The echo example is compiled on its first load: allow for a busy machine.
	s := newSup(t, Config{CacheDir: cache, StartTimeout: 2 * time.Minute})
	echo := echoTarget(t)
	resA, err := s.Call(ctx, tg, "t", []byte(`{}`), CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resE, err := s.Call(ctx, echo, "palyra.echo", echoInput, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pc, _, sockDir := spawn(t, rawPath, shortDir(t))
	defer func() {
		pc.Kill()
		os.RemoveAll(sockDir)
	}()
	time.Sleep(500 * time.Millisecond)
	for _, c := range []struct {
		name string
		pid  int
	}{{"sidecar wat_answer", resA.PID}, {"sidecar go_echo", resE.PID}, {"raw_go_plugin", pc.ReattachConfig().Pid}} {
		kb, err := vmRSS(c.pid)
		if err != nil {
			t.Fatal(err)
		}
		if kb <= 0 {
			t.Errorf("%s: VmRSS %d", c.name, kb)
		}
		t.Logf("idle RSS %s (pid %d): %d KiB (%.1f MiB)", c.name, c.pid, kb, float64(kb)/1024)
	}
}
