package wasmrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// BenchmarkGoGuestCall is one call of the test Go guest's echo op, fresh
// versus prepared (see benchFreshVsPrepared).
func BenchmarkGoGuestCall(b *testing.B) {
	benchFreshVsPrepared(b, goGuest(b), wasmrt.Invocation{Input: op("echo")})
}

// BenchmarkEchoExample is one call of sdk/examples/echo's palyra.echo tool,
// built with the Go guest SDK, fresh versus prepared as above.
func BenchmarkEchoExample(b *testing.B) {
	wasm, err := os.ReadFile(examplebuild.MustBuild(b, "echo"))
	if err != nil {
		b.Fatal(err)
	}
	benchFreshVsPrepared(b, wasm, wasmrt.Invocation{ID: "bench", SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hello"}`)})
}

// benchFreshVsPrepared measures inv on wasm with a fresh instance per call
// ("fresh": _initialize on the call's path) and with prepared instances
// ("prepared": the timer stops until the pool is full again, so each call
// measures what a call finds when calls are not back to back).
func benchFreshVsPrepared(b *testing.B, wasm []byte, inv wasmrt.Invocation) {
	for _, pc := range memoryPoolCases {
		e := newEngine(b, wasmrt.Config{CacheDir: filepath.Join(tmpRoot, "cache"), NoMemoryPool: pc.off})
		for _, bc := range []struct {
			name     string
			prepared int
		}{{"fresh", 0}, {"prepared", 2}} {
			b.Run(pc.name+"/"+bc.name, func(b *testing.B) {
				m := load(b, e, wasm, wasmrt.ModuleConfig{PreparedInstances: bc.prepared})
				ctx := context.Background()
				served := 0
				b.ResetTimer()
				for range b.N {
					if bc.prepared > 0 {
						b.StopTimer()
						for m.ReadyInstances() < m.PreparedTarget() {
							time.Sleep(20 * time.Microsecond)
						}
						b.StartTimer()
					}
					res, err := m.Invoke(ctx, inv)
					if err != nil {
						b.Fatal(err)
					}
					if res.Stats.Prepared {
						served++
					}
				}
				b.ReportMetric(float64(served)/float64(b.N), "prepared/op")
			})
		}
	}
}

// memoryPoolCases run a benchmark with the linear-memory pool (the
// default) and without it (Config.NoMemoryPool), for its before/after.
var memoryPoolCases = []struct {
	name string
	off  bool
}{{"pool", false}, {"nopool", true}}

// BenchmarkWATCall is the floor: a fresh store and instance and one call
// of a tiny WAT module.
func BenchmarkWATCall(b *testing.B) {
	for _, pc := range memoryPoolCases {
		e := newEngine(b, wasmrt.Config{NoMemoryPool: pc.off})
		for _, bc := range []struct {
			name, fixture string
			cfg           wasmrt.ModuleConfig
		}{
			{"answer", "answer", wasmrt.ModuleConfig{Entrypoint: "answer"}},
			{"echo", "echo", wasmrt.ModuleConfig{}},
		} {
			b.Run(pc.name+"/"+bc.name, func(b *testing.B) {
				m := loadFixture(b, e, bc.fixture, bc.cfg)
				ctx := context.Background()
				b.ResetTimer()
				for range b.N {
					if _, err := m.Invoke(ctx, wasmrt.Invocation{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkLoad loads the Go guest: from a verified cache entry (HMAC check
// of the .cwasm plus NewModuleDeserializeFile) or by compiling it.
func BenchmarkLoad(b *testing.B) {
	wasm := goGuest(b)
	dir := filepath.Join(b.TempDir(), "cache")
	if _, err := wasmrt.Precompile(wasmrt.Config{CacheDir: dir}, wasm); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		cfg  wasmrt.Config
		want wasmrt.CacheStatus
	}{
		{"cache", wasmrt.Config{CacheDir: dir}, wasmrt.CacheHit},
		{"compile", wasmrt.Config{}, wasmrt.CacheDisabled},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEngine(b, bc.cfg)
			b.ResetTimer()
			for range b.N {
				m, err := e.Load(wasm, wasmrt.ModuleConfig{})
				if err != nil {
					b.Fatal(err)
				}
				if m.Cache().Status != bc.want {
					b.Fatalf("cache %v", m.Cache().Status)
				}
				_ = m.Close()
			}
		})
	}
}

// BenchmarkColdCall is a sidecar's cold start within the runtime: the echo
// example loaded from a verified cache entry, then its first call, with
// the pool of prepared instances the supervisor asks for (2) and without.
func BenchmarkColdCall(b *testing.B) {
	wasm, err := os.ReadFile(examplebuild.MustBuild(b, "echo"))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "cache")
	if _, err := wasmrt.Precompile(wasmrt.Config{CacheDir: dir}, wasm); err != nil {
		b.Fatal(err)
	}
	inv := wasmrt.Invocation{ID: "bench", SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hello"}`)}
	for _, prepared := range []int{0, 2} {
		b.Run(fmt.Sprintf("prepared=%d", prepared), func(b *testing.B) {
			for range b.N {
				e := newEngine(b, wasmrt.Config{CacheDir: dir})
				m, err := e.Load(wasm, wasmrt.ModuleConfig{PreparedInstances: prepared})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Invoke(context.Background(), inv); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = e.Close()
				b.StartTimer()
			}
		})
	}
}
