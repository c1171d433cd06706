package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/wasmgen"
)

// TestCompileBudget installs through the host, with the real sidecar:
// a Go guest whose compile needs more CPU than a 1 s cap is kept
// quarantined with compile_budget_exceeded naming the cap, and calls to it
// are skill_quarantined; the 300,000-function module of issue 19 is
// refused by the audit with module_too_complex and never compiled.
func TestCompileBudget(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	h, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: sidecarPath,
		Supervisor: supervisor.Config{SocketDir: sock, PrecompileCPUTime: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	cache := filepath.Join(state, "cache", "modules")
	cached := func() int {
		entries, _ := os.ReadDir(cache)
		return len(entries)
	}

	t.Run("CPU-time cap", func(t *testing.T) {
		data, keyHex, err := buildEcho()
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.Install(ctx, host.InstallRequest{Artifact: data, TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: keyHex}}})
		if !errors.Is(err, install.ErrCompileBudgetExceeded) || errcode.Of(err) != "compile_budget_exceeded" || !strings.Contains(err.Error(), "CPU-time cap of 1 s") {
			t.Fatalf("install: %v (code %s)", err, errcode.Of(err))
		}
		if res == nil || !res.Installed || res.Status != "quarantined" || len(res.Reasons) == 0 ||
			!strings.HasPrefix(res.Reasons[len(res.Reasons)-1], "compile_budget_exceeded: modules/echo.wasm: ") {
			t.Fatalf("install result: %+v", res)
		}
		if n := cached(); n != 0 {
			t.Errorf("%d cache entries after a compile over budget", n)
		}
		if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`)}); errcode.Of(err) != "skill_quarantined" {
			t.Errorf("call: %v", err)
		}
	})

	t.Run("module of issue 19", func(t *testing.T) {
		data, keyHex, err := buildEchoWith(wasmgen.EmptyFunctions(300_000))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := h.Install(ctx, host.InstallRequest{Artifact: data, Force: true,
			TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: keyHex}}})
		t.Logf("install of a %d-byte artifact refused in %v", len(data), time.Since(start)) // a figure, not an assertion
		if !errors.Is(err, audit.ErrModuleTooComplex) || errcode.Of(err) != "audit_failed" {
			t.Fatalf("install: %v (code %s)", err, errcode.Of(err))
		}
		if res == nil || res.Status != "quarantined" || !strings.Contains(strings.Join(res.Reasons, "\n"), "300000 functions, over max_functions 50000") {
			t.Fatalf("install result: %+v", res)
		}
		for _, r := range res.Reasons {
			if strings.HasPrefix(r, "compile_budget_exceeded") || strings.HasPrefix(r, "precompile_failed") {
				t.Errorf("the module was compiled: %s", r)
			}
		}
		if n := cached(); n != 0 {
			t.Errorf("%d cache entries after a refused module", n)
		}
	})
}
