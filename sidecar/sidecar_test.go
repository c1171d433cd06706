package sidecar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	"github.com/palyra-go/palyra/sidecar"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

func TestAnswerByPath(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	req := loadPath(t, "test.answer", "answer.wasm")
	req.Entrypoint = "answer"
	lr, err := s.LoadSkill(ctx, req)
	if err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	if lr.GetEntrypoint() != "answer" || lr.GetModuleSha256() != req.GetModuleSha256() {
		t.Errorf("LoadSkill = %v", lr)
	}
	if lr.GetCacheStatus() != sidecarv1.CacheStatus_CACHE_STATUS_DISABLED || lr.GetCacheHit() {
		t.Errorf("cache status %v, hit %v; want disabled", lr.GetCacheStatus(), lr.GetCacheHit())
	}
	res, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{InvocationId: "i1", SkillId: "test.answer", ToolId: "t"})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	var out struct {
		ExitCode int `json:"exit_code"`
	}
	if err := json.Unmarshal(res.GetOutput(), &out); err != nil || out.ExitCode != 42 {
		t.Errorf("output %s (%v), want exit_code 42", res.GetOutput(), err)
	}
	if res.GetStats().GetWallTime().AsDuration() <= 0 || res.GetEntrypoint() != "answer" {
		t.Errorf("stats %v, entrypoint %q", res.GetStats(), res.GetEntrypoint())
	}
	// Logs reach the supervisor's logger through go-plugin, tagged.
	waitFor(t, "forwarded log", 5*time.Second, func() bool {
		l := s.logs.String()
		return strings.Contains(l, "skill loaded") && strings.Contains(l, "skill_id=test.answer")
	})
}

func TestEchoTools(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	_, wasm, sum := fixture(t, "echo.wasm")
	_, err := s.LoadSkill(ctx, &sidecarv1.LoadSkillRequest{
		SkillId:      "test.echo",
		Module:       &sidecarv1.LoadSkillRequest_ModuleBytes{ModuleBytes: wasm},
		ModuleSha256: sum,
		// Tools without schemas: the trusted side checks those.
		Tools:             []*sidecarv1.Tool{{Id: "test.echo"}, {Id: "test.free"}},
		PreparedInstances: 1,
	})
	if err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	res, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{
		InvocationId: "inv-1", SkillId: "test.echo", ToolId: "test.echo", Input: []byte(`{"msg":"hi"}`),
	})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	var doc struct {
		InvocationID string          `json:"invocation_id"`
		ToolID       string          `json:"tool_id"`
		Input        json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(res.GetOutput(), &doc); err != nil {
		t.Fatalf("output %s: %v", res.GetOutput(), err)
	}
	if doc.InvocationID != "inv-1" || doc.ToolID != "test.echo" || string(doc.Input) != `{"msg":"hi"}` {
		t.Errorf("echoed document %s", res.GetOutput())
	}

	tests := []struct {
		name, tool, input, code string
	}{
		{"not json", "test.echo", `{`, "invalid_input"},
		{"two JSON values", "test.echo", `{} {}`, "invalid_input"},
		{"unknown tool", "test.other", `{}`, "unknown_tool"},
		{"tool without schemas: any JSON", "test.free", `[1,"x",null]`, ""},
		{"tool without schemas: still JSON", "test.free", `[1,`, "invalid_input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.echo", ToolId: tt.tool, Input: []byte(tt.input)})
			if tt.code == "" {
				if err != nil || !bytes.Contains(res.GetOutput(), []byte(tt.input)) {
					t.Fatalf("Invoke: %v, output %s", err, res.GetOutput())
				}
				return
			}
			if got := codeOf(t, err); got != tt.code {
				t.Errorf("code %q, want %q (%v)", got, tt.code, err)
			}
			if res == nil || res.GetStats() == nil {
				t.Errorf("no response with stats on failure")
			}
		})
	}
	if _, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "other.skill", ToolId: "test.echo"}); codeOf(t, err) != "skill_not_loaded" {
		t.Errorf("other skill: %v", err)
	}
	// A remote error unwraps to the one sentinel of its code.
	_, err = s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.echo", ToolId: "test.echo", Input: []byte(`{`)})
	if !errors.Is(err, wasmrt.ErrInvalidInput) {
		t.Errorf("errors.Is(%v, wasmrt.ErrInvalidInput) = false", err)
	}
}

func TestLoadFailures(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	bad := func(mod func(*sidecarv1.LoadSkillRequest)) *sidecarv1.LoadSkillRequest {
		r := loadPath(t, "test.bad", "answer.wasm")
		r.Entrypoint = "answer"
		mod(r)
		return r
	}
	_, _, loopSum := fixture(t, "loop.wasm")
	tests := []struct {
		name string
		req  *sidecarv1.LoadSkillRequest
		code string
	}{
		{"hash mismatch", bad(func(r *sidecarv1.LoadSkillRequest) { r.ModuleSha256 = loopSum }), "module_hash_mismatch"},
		{"no hash", bad(func(r *sidecarv1.LoadSkillRequest) { r.ModuleSha256 = "" }), "invalid_request"},
		{"upper-case hash", bad(func(r *sidecarv1.LoadSkillRequest) { r.ModuleSha256 = strings.ToUpper(r.ModuleSha256) }), "invalid_request"},
		{"no module", bad(func(r *sidecarv1.LoadSkillRequest) { r.Module = nil }), "invalid_request"},
		{"no skill id", bad(func(r *sidecarv1.LoadSkillRequest) { r.SkillId = "" }), "invalid_request"},
		{"missing file", bad(func(r *sidecarv1.LoadSkillRequest) {
			r.Module = &sidecarv1.LoadSkillRequest_ModulePath{ModulePath: "/nonexistent/x.wasm"}
		}), "module_read_failed"},
		// Schemas are the trusted side's to check: a sidecar sent one
		// refuses it, valid or not, rather than leave it unchecked.
		{"input schema", bad(func(r *sidecarv1.LoadSkillRequest) {
			r.Tools = []*sidecarv1.Tool{{Id: "t", InputSchema: []byte(`{"type":"object"}`)}}
		}), "invalid_request"},
		{"output schema", bad(func(r *sidecarv1.LoadSkillRequest) {
			r.Tools = []*sidecarv1.Tool{{Id: "t", OutputSchema: []byte(`{"type":3}`)}}
		}), "invalid_request"},
		{"missing export", bad(func(r *sidecarv1.LoadSkillRequest) { r.Entrypoint = "nope" }), "missing_export"},
		{"link error", loadPath(t, "test.bad", "wasi_path_open.wasm"), "link_error"},
		{"negative limit", bad(func(r *sidecarv1.LoadSkillRequest) { r.Limits = &sidecarv1.Limits{MemoryBytes: -1} }), "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := s.LoadSkill(ctx, tt.req)
			if got := codeOf(t, err); got != tt.code {
				t.Errorf("code %q, want %q (%v)", got, tt.code, err)
			}
			if resp.GetErrorMessage() == "" {
				t.Errorf("no error message")
			}
		})
	}
	// A failed load leaves the sidecar ready for another.
	h, err := s.Health(ctx)
	if err != nil || h.GetStatus() != sidecarv1.ServingStatus_SERVING_STATUS_NOT_LOADED {
		t.Fatalf("Health = %v, %v", h, err)
	}
	if _, err := s.LoadSkill(ctx, bad(func(*sidecarv1.LoadSkillRequest) {})); err != nil {
		t.Fatalf("LoadSkill after failures: %v", err)
	}
	if _, err := s.LoadSkill(ctx, bad(func(*sidecarv1.LoadSkillRequest) {})); codeOf(t, err) != "skill_already_loaded" {
		t.Errorf("second LoadSkill: %v", err)
	}
}

func TestLimits(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	req := loadPath(t, "test.loop", "loop.wasm")
	req.Limits = &sidecarv1.Limits{Fuel: 1 << 40, Timeout: durationpb.New(10 * time.Second)}
	if _, err := s.LoadSkill(ctx, req); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	tests := []struct {
		name   string
		limits *sidecarv1.Limits
		code   string
	}{
		{"fuel", &sidecarv1.Limits{Fuel: 100_000}, "fuel_exhausted"},
		{"timeout", &sidecarv1.Limits{Timeout: durationpb.New(50 * time.Millisecond)}, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.loop", ToolId: "t", Limits: tt.limits})
			if got := codeOf(t, err); got != tt.code {
				t.Fatalf("code %q, want %q (%v)", got, tt.code, err)
			}
			if tt.code == "fuel_exhausted" && res.GetStats().GetFuelConsumed() != 100_000 {
				t.Errorf("fuel consumed %d, want the budget", res.GetStats().GetFuelConsumed())
			}
			// Only a timeout leaves the fuel figure a lower bound.
			if got, want := res.GetStats().GetFuelConsumedLowerBound(), tt.code == "timeout"; got != want {
				t.Errorf("fuel_consumed_lower_bound %v, want %v", got, want)
			}
		})
	}
	// The request's own timeout works too.
	_, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.loop", ToolId: "t", Timeout: durationpb.New(30 * time.Millisecond)})
	if codeOf(t, err) != "timeout" {
		t.Errorf("request timeout: %v", err)
	}
}

// memBroker is an in-memory storage broker that records what it was asked.
type memBroker struct {
	mu     sync.Mutex
	data   map[string]string
	deny   bool
	asked  []sidecarplugin.CapabilityRequest
	errOut error
}

func (b *memBroker) Call(_ context.Context, req sidecarplugin.CapabilityRequest) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, req)
	if b.errOut != nil {
		return nil, b.errOut
	}
	if b.deny || req.Kind != sidecarplugin.KindStorage {
		return nil, &sidecarplugin.CapabilityError{Code: sidecarplugin.CodeDenied, Message: "not in this test"}
	}
	var r struct{ Op, Key string }
	if err := json.Unmarshal(req.Request, &r); err != nil || r.Op != "get" {
		return nil, &sidecarplugin.CapabilityError{Code: sidecarplugin.CodeInvalidRequest, Message: "bad request"}
	}
	v, ok := b.data[req.Grant+"/"+r.Key]
	out, _ := json.Marshal(map[string]any{"found": ok, "value": v})
	return out, nil
}

func TestCapabilityThroughBroker(t *testing.T) {
	b := &memBroker{data: map[string]string{"counters/k": "7"}}
	s := start(t, b)
	ctx := ctxT(t)
	req := loadPath(t, "test.cap", "capability.wasm")
	req.Grants = &sidecarv1.Grants{StoragePrefixes: []string{"counters"}, SecretKeys: []string{"skill:test/token"}}
	if _, err := s.LoadSkill(ctx, req); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	invoke := func() *sidecarv1.InvokeResponse {
		t.Helper()
		res, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{InvocationId: "inv-c", SkillId: "test.cap", ToolId: "test.get"})
		if err != nil {
			t.Fatalf("Invoke: %v", err)
		}
		return res
	}

	res := invoke()
	if got := string(res.GetOutput()); got != `{"found":true,"value":"7"}` {
		t.Errorf("output %s", got)
	}
	if res.GetStats().GetCapabilityCalls() != 1 {
		t.Errorf("capability calls %d", res.GetStats().GetCapabilityCalls())
	}
	b.mu.Lock()
	got := b.asked[0]
	b.mu.Unlock()
	want := sidecarplugin.CapabilityRequest{InvocationID: "inv-c", SkillID: "test.cap", ToolID: "test.get",
		Kind: sidecarplugin.KindStorage, Handle: 30000, Grant: "counters", Request: []byte(`{"op":"get","key":"k"}`)}
	if got.InvocationID != want.InvocationID || got.SkillID != want.SkillID || got.ToolID != want.ToolID ||
		got.Kind != want.Kind || got.Handle != want.Handle || got.Grant != want.Grant || string(got.Request) != string(want.Request) {
		t.Errorf("broker got %+v, want %+v", got, want)
	}

	// A refusal reaches the guest with its ABI code and message.
	b.mu.Lock()
	b.deny = true
	b.mu.Unlock()
	if got := string(invoke().GetOutput()); got != `{"error":{"code":"denied","message":"not in this test"}}` {
		t.Errorf("denied output %s", got)
	}
	// A broker failure without a code is "internal" with no detail.
	b.mu.Lock()
	b.errOut = errors.New("db password is hunter2")
	b.mu.Unlock()
	if got := string(invoke().GetOutput()); strings.Contains(got, "hunter2") || !strings.Contains(got, `"internal"`) {
		t.Errorf("internal output %s", got)
	}

	// Per-call grants replace the load's: no storage grant, no call.
	res, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.cap", ToolId: "t", Grants: &sidecarv1.Grants{}})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if got := string(res.GetOutput()); !strings.Contains(got, `"not_granted"`) {
		t.Errorf("ungranted output %s", got)
	}
}

func TestCapabilityWithoutBroker(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	req := loadPath(t, "test.cap", "capability.wasm")
	req.Grants = &sidecarv1.Grants{StoragePrefixes: []string{"counters"}}
	if _, err := s.LoadSkill(ctx, req); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	res, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.cap", ToolId: "t"})
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if got := string(res.GetOutput()); !strings.Contains(got, `"unavailable"`) {
		t.Errorf("output %s", got)
	}
}

func TestHealthDescribeStop(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	h, err := s.Health(ctx)
	if err != nil || h.GetStatus() != sidecarv1.ServingStatus_SERVING_STATUS_NOT_LOADED {
		t.Fatalf("Health before load = %v, %v", h, err)
	}
	req := loadPath(t, "test.echo", "echo.wasm")
	req.SkillVersion = "1.2.3"
	req.PreparedInstances = 2
	req.Tools = []*sidecarv1.Tool{{Id: "a"}, {Id: "b"}}
	req.Limits = &sidecarv1.Limits{Fuel: 1_000_000}
	req.Grants = &sidecarv1.Grants{HttpHosts: []string{"api.example.com"}}
	if _, err := s.LoadSkill(ctx, req); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	waitFor(t, "prepared instances", 10*time.Second, func() bool {
		h, err := s.Health(ctx)
		return err == nil && h.GetReadyInstances() == 1 // one after Load; more once calls find none
	})
	if _, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.echo", ToolId: "a", Input: []byte(`1`)}); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	h, err = s.Health(ctx)
	if err != nil || h.GetStatus() != sidecarv1.ServingStatus_SERVING_STATUS_SERVING || h.GetSkillId() != "test.echo" || h.GetInvocations() != 1 {
		t.Errorf("Health = %v, %v", h, err)
	}
	d, err := s.Describe(ctx)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if d.GetAbiVersion() != wasmrt.ABIVersion || int(d.GetPid()) != s.pid || d.GetSkillVersion() != "1.2.3" ||
		d.GetModuleSha256() != req.GetModuleSha256() || d.GetEntrypoint() != "palyra_plugin_main" ||
		strings.Join(d.GetToolIds(), ",") != "a,b" || d.GetPreparedInstances() != 2 ||
		d.GetLimits().GetFuel() != 1_000_000 || d.GetGrants().GetHttpHosts()[0] != "api.example.com" ||
		d.GetEngineFingerprint() == "" {
		t.Errorf("Describe = %v", d)
	}

	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// Stop ends the process by itself (within its StopGrace), without Kill.
	waitFor(t, "sidecar exit after Stop", 10*time.Second, func() bool { return s.pc.Exited() })
	if err := syscall.Kill(s.pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d after Stop: kill -0: %v", s.pid, err)
	}
}

func TestPrecompileThenCacheHit(t *testing.T) {
	cache := t.TempDir()
	path, _, sum := fixture(t, "echo.wasm")
	run := func(args ...string) (sidecar.PrecompileResult, error) {
		cmd := exec.Command(binPath, append([]string{"precompile"}, args...)...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		var res sidecar.PrecompileResult
		if jerr := json.Unmarshal(out, &res); jerr != nil {
			t.Fatalf("precompile output %q: %v (exit: %v)", out, jerr, err)
		}
		return res, err
	}
	res, err := run("--wasm", path, "--cache-dir", cache, "--sha256", sum)
	if err != nil {
		t.Fatalf("precompile: %v (%+v)", err, res)
	}
	if res.SHA256 != sum || res.CacheStatus != "miss" || res.CachePath == "" || res.ABIVersion != wasmrt.ABIVersion {
		t.Errorf("precompile = %+v", res)
	}
	// It compiled hardened, as the kernel says.
	if h := res.Hardening; h == nil || !h.Enabled || h.Status["NoNewPrivs"] != "1" || h.Status["Seccomp"] != "2" || h.Status["CapEff"] != "0000000000000000" || h.Landlock == "" {
		t.Errorf("precompile hardening = %+v", h)
	}
	if _, err := os.Stat(res.CachePath); err != nil {
		t.Errorf("cache entry: %v", err)
	}
	// A wrong expected hash fails closed, with a code.
	if res, err := run("--wasm", path, "--cache-dir", cache, "--sha256", strings.Repeat("0", 64)); err == nil || res.ErrorCode != "module_hash_mismatch" {
		t.Errorf("precompile with wrong hash = %+v, %v", res, err)
	}

	s := start(t, nil, "--harden-cache-dir="+cache)
	ctx := ctxT(t)
	req := loadPath(t, "test.echo", "echo.wasm")
	req.CacheDir = cache
	lr, err := s.LoadSkill(ctx, req)
	if err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	if !lr.GetCacheHit() || lr.GetCacheStatus() != sidecarv1.CacheStatus_CACHE_STATUS_HIT || lr.GetCachePath() != res.CachePath {
		t.Errorf("LoadSkill = %v, want a cache hit on %s", lr, res.CachePath)
	}
	if _, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.echo", ToolId: "t", Input: []byte(`{}`)}); err != nil {
		t.Errorf("Invoke: %v", err)
	}
}

func TestRunDirectly(t *testing.T) {
	// Without the magic cookie the binary refuses to serve.
	cmd := exec.Command(binPath)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "plugin") {
		t.Errorf("run directly: %v, %q", err, out)
	}
	if code := sidecar.Run([]string{"bogus"}, sidecar.ServeConfig{}, os.Stdout, &strings.Builder{}); code != 2 {
		t.Errorf("Run(bogus) = %d", code)
	}
}

// TestABICodesInStep keeps sidecar/sidecarplugin's copy of the ABI codes equal to
// the runtime's.
func TestABICodesInStep(t *testing.T) {
	pairs := []struct {
		p sidecarplugin.ABICode
		r wasmrt.ABICode
	}{
		{sidecarplugin.CodeNotGranted, wasmrt.CodeNotGranted},
		{sidecarplugin.CodeDenied, wasmrt.CodeDenied},
		{sidecarplugin.CodeInvalidRequest, wasmrt.CodeInvalidRequest},
		{sidecarplugin.CodeTooLarge, wasmrt.CodeTooLarge},
		{sidecarplugin.CodeUpstreamFailure, wasmrt.CodeUpstreamFailure},
		{sidecarplugin.CodeTimeout, wasmrt.CodeTimeout},
		{sidecarplugin.CodeQuotaExceeded, wasmrt.CodeQuotaExceeded},
		{sidecarplugin.CodeUnavailable, wasmrt.CodeUnavailable},
		{sidecarplugin.CodeInternal, wasmrt.CodeInternal},
	}
	for _, p := range pairs {
		if int32(p.p) != int32(p.r) || p.p.String() != p.r.String() {
			t.Errorf("plugin %d %q != runtime %d %q", p.p, p.p, p.r, p.r)
		}
	}
	kinds := map[sidecarplugin.CapabilityKind]wasmrt.CapabilityKind{
		sidecarplugin.KindHTTP: wasmrt.KindHTTP, sidecarplugin.KindSecret: wasmrt.KindSecret,
		sidecarplugin.KindStorage: wasmrt.KindStorage, sidecarplugin.KindChannel: wasmrt.KindChannel,
	}
	for p, r := range kinds {
		if string(p) != string(r) {
			t.Errorf("kind %q != %q", p, r)
		}
	}
}

// TestStopWaitsForInFlight: Stop lets a running call finish with its own
// outcome, then a Kill right after Stop leaves nothing behind (cleanup).
func TestStopWaitsForInFlight(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	req := loadPath(t, "test.loop", "loop.wasm")
	req.Limits = &sidecarv1.Limits{Fuel: 1 << 40}
	if _, err := s.LoadSkill(ctx, req); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.loop", ToolId: "t", Timeout: durationpb.New(300 * time.Millisecond)})
		done <- err
	}()
	waitFor(t, "call in flight", 5*time.Second, func() bool {
		h, err := s.Health(ctx)
		return err == nil && h.GetInFlight() == 1
	})
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := <-done; codeOf(t, err) != "timeout" {
		t.Errorf("in-flight call: %v", err)
	}
}

// TestCPUProfileOnStop: with PALYRA_SIDECAR_CPUPROFILE_DIR set, a sidecar
// writes a CPU profile of its life when it is stopped, before it answers
// Stop (the supervisor may kill it right after).
func TestCPUProfileOnStop(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(sidecar.CPUProfileDirEnv, dir)
	s := start(t, nil)
	ctx := ctxT(t)
	if _, err := s.LoadSkill(ctx, loadPath(t, "test.echo", "echo.wasm")); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	if _, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{SkillId: "test.echo", ToolId: "a", Input: []byte(`1`)}); err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	prof, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("sidecar-%d.pprof", s.pid)))
	if err != nil {
		t.Fatal(err)
	}
	// A runtime/pprof profile is gzip-compressed protobuf.
	if len(prof) < 2 || prof[0] != 0x1f || prof[1] != 0x8b {
		t.Errorf("profile of %d bytes is not a gzip-compressed pprof profile", len(prof))
	}
}
