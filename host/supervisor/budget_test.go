package supervisor

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/wasmgen"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// writeModule writes module to a file of its own and returns its path.
func writeModule(t testing.TB, module []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "module.wasm")
	if err := os.WriteFile(p, module, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPrecompileBudget runs the real sidecar on a module that costs more
// to compile than the caps allow (50,000 functions: about 6 s of CPU and
// 300 MB): each cap ends the child, and Precompile reports
// compile_budget_exceeded naming the cap; under the default caps a Go
// guest compiles.
func TestPrecompileBudget(t *testing.T) {
	costly := writeModule(t, wasmgen.EmptyFunctions(50_000))
	goGuest := examplebuild.MustBuild(t, "echo")
	for _, tt := range []struct {
		name   string
		cfg    Config
		module string
		want   string // "" for success
	}{
		{"CPU-time cap", Config{PrecompileCPUTime: time.Second, PrecompileMemoryBytes: -1}, costly, "over the CPU-time cap of 1 s"},
		{"memory cap", Config{PrecompileCPUTime: -1, PrecompileMemoryBytes: 160 << 20}, costly, "memory cap of 167772160 bytes (160 MiB)"},
		{"a Go guest under the default caps", Config{}, goGuest, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.SidecarPath, cfg.CacheDir, cfg.HealthInterval, cfg.IdleTimeout = binPath, filepath.Join(shortDir(t), "cache"), -1, -1
			s := newSup(t, cfg)
			// Not ctxT's minute: on a loaded machine the Go guest's 6 s of
			// CPU may take longer; PrecompileTimeout (2 min) bounds it.
			err := s.Precompile(t.Context(), tt.module, "")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Precompile: %v", err)
			case tt.want != "":
				if !errors.Is(err, ErrCompileBudgetExceeded) || errcode.Of(err) != "compile_budget_exceeded" || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Precompile = %v (code %s), want compile_budget_exceeded naming %q", err, errcode.Of(err), tt.want)
				}
				if entries, _ := os.ReadDir(cfg.CacheDir); len(entries) > 0 {
					t.Errorf("cache holds %d entries after a refused compile", len(entries))
				}
			}
			if left := sidecarChildren(); len(left) > 0 {
				t.Errorf("children left after Precompile: %v", left)
			}
		})
	}
}

// TestCompileBudgetArgs: the caps reach the child as flags, the CPU time
// rounded up to whole seconds; a negative cap passes none.
func TestCompileBudgetArgs(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want compileBudget
	}{
		{Config{}, compileBudget{cpuSeconds: 30, memoryBytes: 448 << 20}},
		{Config{PrecompileCPUTime: 1500 * time.Millisecond, PrecompileMemoryBytes: 1 << 30}, compileBudget{cpuSeconds: 2, memoryBytes: 1 << 30}},
		{Config{PrecompileCPUTime: -1, PrecompileMemoryBytes: -1}, compileBudget{}},
	} {
		tt.cfg.setDefaults()
		s := &Supervisor{cfg: tt.cfg}
		if got := s.compileBudget(); got != tt.want {
			t.Errorf("compileBudget() of %v, %d = %+v, want %+v", tt.cfg.PrecompileCPUTime, tt.cfg.PrecompileMemoryBytes, got, tt.want)
		}
	}
}

// BenchmarkPrecompileBudget compiles, with the real palyra-sidecar under
// the default compile budget, a Go guest and the modules that cost most
// to compile within the audit's limits, and reports figures of the child:
// its peak RSS (rusage maxrss), its CPU time, and whether the budget
// stopped it (over-budget: 0 no, 1 the CPU-time cap, 2 the memory cap).
// Modules: the echo example; 50,000 empty
// functions (the audit's max_functions); 50,000 functions of 150-byte
// bodies of calls (an 8 MiB module); 63 bodies of 128 KiB of calls.
func BenchmarkPrecompileBudget(b *testing.B) {
	var def Config
	def.setDefaults()
	budget := (&Supervisor{cfg: def}).compileBudget()
	for _, bc := range []struct {
		name   string
		module func() []byte
	}{
		{"go-guest", nil},
		{"50k-empty-functions", func() []byte { return wasmgen.EmptyFunctions(50_000) }},
		{"50k-call-bodies", func() []byte { return wasmgen.Module(wasmgen.Spec{Functions: 50_000, BodyBytes: 150, Calls: true}) }},
		{"63-max-call-bodies", func() []byte { return wasmgen.Module(wasmgen.Spec{Functions: 63, BodyBytes: 128<<10 - 4, Calls: true}) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var path string
			if bc.module == nil {
				path = examplebuild.MustBuild(b, "echo")
			} else {
				path = writeModule(b, bc.module())
			}
			var cpu time.Duration
			var maxRSS int64
			over := 0
			// b.N rather than b.Loop: with b.Loop, go1.26.8 -race stops
			// on an internal compiler error building this package.
			for range b.N {
				cache := b.TempDir()
				var stderr bytes.Buffer
				cmd := exec.CommandContext(b.Context(), binPath, "precompile", "--wasm", path, "--cache-dir", cache,
					"--cpu-seconds", strconv.FormatUint(budget.cpuSeconds, 10), "--memory-bytes", strconv.FormatUint(budget.memoryBytes, 10))
				cmd.Stderr = &stderr
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
				err := cmd.Run()
				if err != nil {
					berr := budget.exceeded(err, "", stderr.Bytes())
					switch {
					case berr == nil:
						b.Fatalf("precompile: %v: %.300s", err, stderr.String())
					case strings.Contains(berr.Error(), "CPU-time cap"):
						over = 1
					default:
						over = 2
					}
				}
				st := cmd.ProcessState
				if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
					maxRSS = max(maxRSS, ru.Maxrss*1024)
				}
				cpu = max(cpu, st.UserTime()+st.SystemTime())
			}
			b.ReportMetric(float64(maxRSS)/(1<<20), "peak-rss-MiB")
			b.ReportMetric(cpu.Seconds(), "cpu-s")
			b.ReportMetric(float64(over), "over-budget")
		})
	}
}
