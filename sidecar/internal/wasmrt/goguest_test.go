package wasmrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt/runtimetest"
)

// goEngine shares one precompiled-module cache among the tests that run the
// Go guest, so that it is compiled once per test process.
func goEngine(t testing.TB) *wasmrt.Engine {
	return newEngine(t, wasmrt.Config{CacheDir: filepath.Join(tmpRoot, "cache")})
}

func op(name string) json.RawMessage { return json.RawMessage(`{"op":"` + name + `"}`) }

// TestGoGuest runs a real Go wasip1 c-shared reactor, built from
// testdata/goguest, against exactly the WASI subset of sdk/ABI.md §2.3.
func TestGoGuest(t *testing.T) {
	e := goEngine(t)
	wasm := goGuest(t)
	for _, prepared := range []int{0, 2} {
		m := load(t, e, wasm, wasmrt.ModuleConfig{PreparedInstances: prepared, Limits: wasmrt.Limits{Fuel: 1 << 40}})
		t.Run("prepared="+string(rune('0'+prepared)), func(t *testing.T) {
			testGoGuest(t, m)
		})
	}
}

func testGoGuest(t *testing.T, m *wasmrt.Module) {
	t.Run("echo in a fresh instance every call", func(t *testing.T) {
		for range 3 {
			res := mustInvoke(t, m, wasmrt.Invocation{ToolID: "acme.echo", Input: op("echo")})
			var out struct {
				Calls int `json:"calls"`
				Doc   struct {
					ToolID string          `json:"tool_id"`
					Input  json.RawMessage `json:"input"`
				} `json:"doc"`
			}
			if err := json.Unmarshal(res.Output, &out); err != nil {
				t.Fatalf("output %s: %v", res.Output, err)
			}
			if out.Calls != 1 || out.Doc.ToolID != "acme.echo" || string(out.Doc.Input) != `{"op":"echo"}` {
				t.Fatalf("output %s", res.Output)
			}
			if res.Stats.InitFuelConsumed < 100_000 || res.Stats.FuelConsumed == 0 || res.Stats.PeakMemoryBytes < 1<<20 {
				t.Fatalf("stats %+v", res.Stats)
			}
		}
	})
	t.Run("stdout, stderr and log", func(t *testing.T) {
		res := mustInvoke(t, m, wasmrt.Invocation{Input: op("stdio")})
		want := []wasmrt.LogRecord{
			{Level: wasmrt.LevelInfo, Source: wasmrt.SourceStdout, Message: "hello stdout"},
			{Level: wasmrt.LevelWarn, Source: wasmrt.SourceStderr, Message: "hello stderr"},
			{Level: wasmrt.LevelInfo, Source: wasmrt.SourceLog, Message: "via log 42"},
		}
		if len(res.Logs) != len(want) {
			t.Fatalf("logs %+v", res.Logs)
		}
		for i := range want {
			if res.Logs[i] != want[i] {
				t.Fatalf("log %d = %+v, want %+v", i, res.Logs[i], want[i])
			}
		}
	})
	t.Run("time.Sleep uses poll_oneoff", func(t *testing.T) {
		res := mustInvoke(t, m, wasmrt.Invocation{Input: op("nap")})
		if string(res.Output) != `"rested"` || res.Stats.WallTime < 5*time.Millisecond {
			t.Fatalf("output %s after %v", res.Output, res.Stats.WallTime)
		}
	})
	t.Run("sleep past the deadline", func(t *testing.T) {
		res, err := invoke(t, m, wasmrt.Invocation{Input: op("sleep"), Timeout: 50 * time.Millisecond})
		if !errors.Is(err, wasmrt.ErrTimeout) || res.Stats.WallTime > 5*time.Second {
			t.Fatalf("err = %v after %v", err, res.Stats.WallTime)
		}
	})
	t.Run("sleep canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		_, err := m.Invoke(ctx, wasmrt.Invocation{Input: op("sleep")})
		if !errors.Is(err, wasmrt.ErrCanceled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("spin until the deadline", func(t *testing.T) {
		_, err := invoke(t, m, wasmrt.Invocation{Input: op("spin"), Timeout: 30 * time.Millisecond})
		if !errors.Is(err, wasmrt.ErrTimeout) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("spin until the fuel ends", func(t *testing.T) {
		_, err := invoke(t, m, wasmrt.Invocation{Input: op("spin"), Limits: wasmrt.Limits{Fuel: 1_000_000}})
		if !errors.Is(err, wasmrt.ErrFuelExhausted) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("out of memory", func(t *testing.T) {
		res, err := invoke(t, m, wasmrt.Invocation{Input: op("oom"), Limits: wasmrt.Limits{MemoryBytes: 32 << 20}})
		if !errors.Is(err, wasmrt.ErrMemoryLimit) || errcode.Of(err) != "memory_limit_exceeded" {
			t.Fatalf("err = %v", err)
		}
		if res.Stats.PeakMemoryBytes > 32<<20 || res.Stats.PeakMemoryBytes < 16<<20 {
			t.Fatalf("peak memory %d", res.Stats.PeakMemoryBytes)
		}
	})
	t.Run("os.Exit(0)", func(t *testing.T) {
		res := mustInvoke(t, m, wasmrt.Invocation{Input: op("exit0")})
		if string(res.Output) != `"bye"` {
			t.Fatalf("output %s", res.Output)
		}
	})
	t.Run("os.Exit(3)", func(t *testing.T) {
		_, err := invoke(t, m, wasmrt.Invocation{Input: op("exit3")})
		var te *wasmrt.ToolError
		if !errors.As(err, &te) || te.ExitCode != 3 || te.Code != "tool_error" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("panic", func(t *testing.T) {
		res, err := invoke(t, m, wasmrt.Invocation{Input: op("panic")})
		var te *wasmrt.TrapError
		if !errors.As(err, &te) || te.Code != "unreachable" {
			t.Fatalf("err = %v", err)
		}
		if len(res.Logs) == 0 || res.Logs[0].Message != "panic: guest panicked on purpose" {
			t.Fatalf("logs %+v", res.Logs)
		}
	})
	t.Run("tool error", func(t *testing.T) {
		_, err := invoke(t, m, wasmrt.Invocation{Input: op("fail")})
		var te *wasmrt.ToolError
		if !errors.As(err, &te) || te.Code != "not_found" || te.Message != "no such thing" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("capability call", func(t *testing.T) {
		b := &runtimetest.Broker{}
		b.Put("skills/cache", "k", []byte("hi"))
		res := mustInvoke(t, m, wasmrt.Invocation{Input: op("cap"), Broker: b,
			Grants: wasmrt.Grants{StoragePrefixes: []string{"skills/cache"}}})
		if !strings.Contains(string(res.Output), `"found":true`) {
			t.Fatalf("output %s", res.Output)
		}
		res = mustInvoke(t, m, wasmrt.Invocation{Input: op("cap")})
		if string(res.Output) != "-1" {
			t.Fatalf("ungranted: output %s", res.Output)
		}
	})
}
