package wasmrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// TestOutcomes produces every call outcome of sdk/ABI.md §7 with a fixture
// and checks it with errors.Is, errors.As and errcode.Of.
func TestOutcomes(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	tests := []struct {
		name    string
		fixture string
		cfg     wasmrt.ModuleConfig
		inv     wasmrt.Invocation
		want    error
		code    string
		check   func(t *testing.T, res *wasmrt.Result, err error)
	}{
		{name: "fuel", fixture: "loop", inv: wasmrt.Invocation{Limits: wasmrt.Limits{Fuel: 20000}},
			want: wasmrt.ErrFuelExhausted, code: "fuel_exhausted",
			check: func(t *testing.T, res *wasmrt.Result, _ error) {
				if res.Stats.FuelConsumed != 20000 {
					t.Errorf("fuel consumed %d, want the whole budget 20000", res.Stats.FuelConsumed)
				}
			}},
		{name: "timeout", fixture: "loop", cfg: wasmrt.ModuleConfig{Limits: wasmrt.Limits{Fuel: 1 << 62}},
			inv: wasmrt.Invocation{Timeout: 20 * time.Millisecond}, want: wasmrt.ErrTimeout, code: "timeout",
			check: func(t *testing.T, res *wasmrt.Result, err error) {
				if errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("a request timeout must not look like the ctx deadline: %v", err)
				}
				if res.Stats.WallTime < 20*time.Millisecond {
					t.Errorf("interrupted after %v, before the deadline", res.Stats.WallTime)
				}
			}},
		{name: "memory minimum over the limit", fixture: "memory_initial",
			want: wasmrt.ErrMemoryLimit, code: "memory_limit_exceeded"},
		{name: "table minimum over the limit", fixture: "table_initial",
			want: wasmrt.ErrMemoryLimit, code: "memory_limit_exceeded"},
		{name: "memory minimum over a call's tightened limit", fixture: "echo",
			inv:  wasmrt.Invocation{Limits: wasmrt.Limits{MemoryBytes: 1 << 10}},
			want: wasmrt.ErrMemoryLimit, code: "memory_limit_exceeded"},
		{name: "trap unreachable", fixture: "unreachable", want: wasmrt.ErrTrap, code: "trap",
			check: func(t *testing.T, _ *wasmrt.Result, err error) {
				var te *wasmrt.TrapError
				if !errors.As(err, &te) || te.Code != "unreachable" || !strings.Contains(te.Message, "unreachable") {
					t.Errorf("err = %#v", err)
				}
			}},
		{name: "trap stack overflow", fixture: "stack_overflow", cfg: wasmrt.ModuleConfig{Limits: wasmrt.Limits{Fuel: 1 << 40}},
			want: wasmrt.ErrTrap, code: "trap",
			check: func(t *testing.T, _ *wasmrt.Result, err error) {
				var te *wasmrt.TrapError
				if !errors.As(err, &te) || te.Code != "stack_overflow" {
					t.Errorf("err = %v", err)
				}
				if len(te.Message) > 4096 {
					t.Errorf("trap message of %d bytes", len(te.Message))
				}
			}},
		{name: "tool error document", fixture: "tool_error", want: wasmrt.ErrToolError, code: "tool_error",
			check: func(t *testing.T, res *wasmrt.Result, err error) {
				var te *wasmrt.ToolError
				if !errors.As(err, &te) || te.Code != "bad_thing" || te.Message != "it broke" || te.ExitCode != 1 {
					t.Errorf("err = %#v", err)
				}
				if res.Output != nil || res.ExitCode != 1 {
					t.Errorf("output %s exit %d", res.Output, res.ExitCode)
				}
				if !strings.Contains(err.Error(), `"it broke"`) {
					t.Errorf("guest text not quoted: %v", err)
				}
			}},
		{name: "tool error raw text", fixture: "tool_error_raw", want: wasmrt.ErrToolError, code: "tool_error",
			check: func(t *testing.T, _ *wasmrt.Result, err error) {
				var te *wasmrt.ToolError
				if !errors.As(err, &te) || te.Code != "tool_error" || te.Message != "disk \"full\"\n" || te.ExitCode != 3 {
					t.Errorf("err = %#v", err)
				}
				if !strings.Contains(err.Error(), `"disk \"full\"\n"`) {
					t.Errorf("guest text not quoted: %v", err)
				}
			}},
		{name: "input not JSON", fixture: "echo", inv: wasmrt.Invocation{Input: json.RawMessage(`{"a":`)},
			want: wasmrt.ErrInvalidInput, code: "invalid_input"},
		{name: "input over the limit", fixture: "echo",
			inv:  wasmrt.Invocation{Input: json.RawMessage(`"` + strings.Repeat("x", wasmrt.MaxInputBytes) + `"`)},
			want: wasmrt.ErrInvalidInput, code: "invalid_input"},
		{name: "input document over the limit", fixture: "echo",
			inv:  wasmrt.Invocation{Input: json.RawMessage(`"` + strings.Repeat("x", wasmrt.MaxInputBytes-100) + `"`), Grants: wasmrt.Grants{HTTPHosts: []string{strings.Repeat("h", 200)}}},
			want: wasmrt.ErrInvalidInput, code: "invalid_input"},
		{name: "input of two JSON values: the guest does not run", fixture: "echo",
			inv:  wasmrt.Invocation{Input: json.RawMessage(`{"n":4} {"n":5}`)},
			want: wasmrt.ErrInvalidInput, code: "invalid_input",
			check: func(t *testing.T, res *wasmrt.Result, _ error) {
				if res.Stats.FuelConsumed != 0 || res.Stats.InitFuelConsumed != 0 {
					t.Errorf("the guest ran on invalid input: %+v", res.Stats)
				}
			}},
		{name: "output not JSON", fixture: "not_json", want: wasmrt.ErrInvalidOutput, code: "invalid_output"},
		{name: "output too large", fixture: "output_flood", want: wasmrt.ErrOutputTooLarge, code: "output_too_large"},
		{name: "canceled", fixture: "sleep", want: wasmrt.ErrCanceled, code: "canceled",
			check: func(t *testing.T, res *wasmrt.Result, err error) {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v does not match context.Canceled", err)
				}
				if res.Stats.WallTime > 5*time.Second {
					t.Errorf("cancellation took %v", res.Stats.WallTime)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := loadFixture(t, e, tt.fixture, tt.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if tt.want == wasmrt.ErrCanceled {
				go func() { time.Sleep(30 * time.Millisecond); cancel() }()
			}
			res, err := m.Invoke(ctx, tt.inv)
			if res == nil {
				t.Fatal("nil Result")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if got := errcode.Of(err); got != tt.code {
				t.Fatalf("errcode.Of = %q, want %q", got, tt.code)
			}
			if res.Stats.WallTime <= 0 {
				t.Errorf("no wall time reported")
			}
			if tt.check != nil {
				tt.check(t, res, err)
			}
		})
	}
}

// TestLoadOutcomes: link_error and missing_export are found when loading.
func TestLoadOutcomes(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	tests := []struct {
		name    string
		fixture string
		cfg     wasmrt.ModuleConfig
		want    error
		code    string
		text    string
	}{
		{"WASI path_open", "wasi_path_open", wasmrt.ModuleConfig{}, wasmrt.ErrLinkError, "link_error", "path_open"},
		{"wrong import signature", "bad_signature", wasmrt.ModuleConfig{}, wasmrt.ErrLinkError, "link_error", "(i32) -> (i32)"},
		{"no entrypoint", "missing_run", wasmrt.ModuleConfig{}, wasmrt.ErrMissingExport, "missing_export", `"run"`},
		{"override names a missing export", "answer", wasmrt.ModuleConfig{Entrypoint: "nope"}, wasmrt.ErrMissingExport, "missing_export", `"nope"`},
		{"override names a () -> () export", "reactor", wasmrt.ModuleConfig{Entrypoint: "_initialize"}, wasmrt.ErrMissingExport, "missing_export", "() -> i32"},
		{"not wasm", "", wasmrt.ModuleConfig{}, wasmrt.ErrInvalidModule, "invalid_module", ""},
		{"bad config", "answer", wasmrt.ModuleConfig{PreparedInstances: 99}, wasmrt.ErrInvalidConfig, "invalid_config", ""},
		{"negative limit", "answer", wasmrt.ModuleConfig{Limits: wasmrt.Limits{MemoryBytes: -1}}, wasmrt.ErrInvalidConfig, "invalid_config", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wasm := []byte("not wasm at all")
			if tt.fixture != "" {
				wasm = fixture(t, tt.fixture)
			}
			m, err := e.Load(wasm, tt.cfg)
			if err == nil {
				_ = m.Close()
			}
			if !errors.Is(err, tt.want) || errcode.Of(err) != tt.code || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %v (%s), want %v containing %q", err, errcode.Of(err), tt.want, tt.text)
			}
		})
	}
}

func TestTimeoutFromCtxDeadline(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "loop", wasmrt.ModuleConfig{Limits: wasmrt.Limits{Fuel: 1 << 62}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := m.Invoke(ctx, wasmrt.Invocation{Timeout: time.Minute})
	if !errors.Is(err, wasmrt.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || errcode.Of(err) != "timeout" {
		t.Fatalf("err = %v", err)
	}
	// The guest looped without calling out: wasmtime never saved its fuel
	// counter, so the figure is only a lower bound, and says so.
	if !res.Stats.FuelLowerBound {
		t.Fatalf("a timed-out call's stats do not flag fuel as a lower bound: %+v", res.Stats)
	}
	// A ctx already done never runs the guest: nothing was burnt, exactly.
	res, err = m.Invoke(ctx, wasmrt.Invocation{})
	if !errors.Is(err, wasmrt.ErrTimeout) || res.Stats.FuelConsumed != 0 || res.Stats.FuelLowerBound {
		t.Fatalf("err = %v, stats %+v", err, res.Stats)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, err := m.Invoke(cctx, wasmrt.Invocation{}); !errors.Is(err, wasmrt.ErrCanceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestSleepEndsAtDeadline(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "sleep", wasmrt.ModuleConfig{})
	res, err := invoke(t, m, wasmrt.Invocation{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, wasmrt.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if res.Stats.WallTime < 50*time.Millisecond || res.Stats.WallTime > 5*time.Second {
		t.Fatalf("poll_oneoff slept %v for a 50 ms deadline", res.Stats.WallTime)
	}
}

func TestMemoryGrowStopsAtLimit(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "memory_grow", wasmrt.ModuleConfig{})
	for _, tt := range []struct {
		limit int64
		pages int
	}{{0, 1024}, {1 << 20, 16}} {
		res := mustInvoke(t, m, wasmrt.Invocation{Limits: wasmrt.Limits{MemoryBytes: tt.limit}})
		if got := exitCodeOf(t, res); got != tt.pages {
			t.Fatalf("limit %d: %d pages, want %d", tt.limit, got, tt.pages)
		}
		if res.Stats.PeakMemoryBytes != uint64(tt.pages)*65536 {
			t.Fatalf("peak memory %d, want %d", res.Stats.PeakMemoryBytes, tt.pages*65536)
		}
	}
}

func TestClosed(t *testing.T) {
	e, err := wasmrt.NewEngine(wasmrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Load(fixture(t, "answer"), wasmrt.ModuleConfig{Entrypoint: "answer", PreparedInstances: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if _, err := m.Invoke(context.Background(), wasmrt.Invocation{}); !errors.Is(err, wasmrt.ErrClosed) || errcode.Of(err) != "runtime_closed" {
		t.Fatalf("err = %v", err)
	}
	m2, err := e.Load(fixture(t, "answer"), wasmrt.ModuleConfig{Entrypoint: "answer", PreparedInstances: 1})
	if err != nil {
		t.Fatal(err)
	}
	_ = e.Close()
	_ = e.Close()
	if _, err := m2.Invoke(context.Background(), wasmrt.Invocation{}); !errors.Is(err, wasmrt.ErrClosed) {
		t.Fatalf("module of a closed engine: err = %v", err)
	}
	if _, err := e.Load(fixture(t, "answer"), wasmrt.ModuleConfig{}); !errors.Is(err, wasmrt.ErrClosed) {
		t.Fatalf("Load on a closed engine: err = %v", err)
	}
}

func TestEngineConfigValidation(t *testing.T) {
	for _, cfg := range []wasmrt.Config{
		{EpochTick: time.Nanosecond},
		{EpochTick: time.Hour},
		{MaxWasmStack: 1},
		{DefaultTimeout: -1},
	} {
		if e, err := wasmrt.NewEngine(cfg); !errors.Is(err, wasmrt.ErrInvalidConfig) {
			if e != nil {
				_ = e.Close()
			}
			t.Errorf("NewEngine(%+v) err = %v", cfg, err)
		}
	}
}

func TestSmallStackOverflowsSooner(t *testing.T) {
	e := newEngine(t, wasmrt.Config{MaxWasmStack: 64 << 10})
	m := loadFixture(t, e, "stack_overflow", wasmrt.ModuleConfig{})
	_, err := invoke(t, m, wasmrt.Invocation{})
	var te *wasmrt.TrapError
	if !errors.As(err, &te) || te.Code != "stack_overflow" {
		t.Fatalf("err = %v", err)
	}
}
