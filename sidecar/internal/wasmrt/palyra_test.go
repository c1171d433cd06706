package wasmrt_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// The behaviours the tests of Palyra's runtime crate (palyra-plugins-runtime)
// check.
func TestPalyraRuntimeBehaviours(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	oneOfEach := wasmrt.Grants{
		HTTPHosts:       []string{"api.example.com"},
		SecretKeys:      []string{"api_token"},
		StoragePrefixes: []string{"skills/cache"},
		Channels:        []string{"ops"},
	}

	t.Run("answer returns 42", func(t *testing.T) {
		m := loadFixture(t, e, "answer", wasmrt.ModuleConfig{Entrypoint: "answer"})
		res := mustInvoke(t, m, wasmrt.Invocation{})
		if got := exitCodeOf(t, res); got != 42 {
			t.Fatalf("exit code %d, want 42", got)
		}
		if res.Entrypoint != "answer" {
			t.Fatalf("entrypoint %q", res.Entrypoint)
		}
	})
	t.Run("one grant of each kind gives handles 10000..40000", func(t *testing.T) {
		m := loadFixture(t, e, "handles", wasmrt.ModuleConfig{Entrypoint: "check"})
		if got := exitCodeOf(t, mustInvoke(t, m, wasmrt.Invocation{Grants: oneOfEach})); got != 0 {
			t.Fatalf("handle check %d failed", got)
		}
	})
	t.Run("all four grants: exit code is the sum of the counts", func(t *testing.T) {
		m := loadFixture(t, e, "handles", wasmrt.ModuleConfig{})
		if got := exitCodeOf(t, mustInvoke(t, m, wasmrt.Invocation{Grants: oneOfEach})); got != 4 {
			t.Fatalf("exit code %d, want 4", got)
		}
		if got := exitCodeOf(t, mustInvoke(t, m, wasmrt.Invocation{})); got != 0 {
			t.Fatalf("exit code %d with no grants, want 0", got)
		}
	})
	t.Run("a run-only Palyra module", func(t *testing.T) {
		m := loadFixture(t, e, "palyra_run", wasmrt.ModuleConfig{})
		res := mustInvoke(t, m, wasmrt.Invocation{Grants: oneOfEach})
		if got := exitCodeOf(t, res); got != 4 || res.Entrypoint != "run" || res.ExitCode != 4 {
			t.Fatalf("exit code %d via %q, want 4 via run", got, res.Entrypoint)
		}
	})
	t.Run("http-handle(42) with one host is -1", func(t *testing.T) {
		m := load(t, e, derived(t, "http_handle42.wasm"), wasmrt.ModuleConfig{})
		if got := exitCodeOf(t, mustInvoke(t, m, wasmrt.Invocation{Grants: oneOfEach})); got != -1 {
			t.Fatalf("exit code %d, want -1", got)
		}
	})
	t.Run("infinite loop with fuel 5000 exhausts fuel", func(t *testing.T) {
		m := loadFixture(t, e, "loop", wasmrt.ModuleConfig{Limits: wasmrt.Limits{Fuel: 5000}})
		res, err := invoke(t, m, wasmrt.Invocation{})
		if !errors.Is(err, wasmrt.ErrFuelExhausted) || errcode.Of(err) != "fuel_exhausted" {
			t.Fatalf("err = %v (%s)", err, errcode.Of(err))
		}
		if res.Stats.FuelConsumed != 5000 {
			t.Fatalf("fuel consumed %d, want 5000", res.Stats.FuelConsumed)
		}
	})
	t.Run("2000 pages of memory exceed 64 MiB", func(t *testing.T) {
		m := loadFixture(t, e, "memory_initial", wasmrt.ModuleConfig{})
		if _, err := invoke(t, m, wasmrt.Invocation{}); !errors.Is(err, wasmrt.ErrMemoryLimit) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unreachable traps", func(t *testing.T) {
		m := loadFixture(t, e, "unreachable", wasmrt.ModuleConfig{})
		_, err := invoke(t, m, wasmrt.Invocation{})
		var te *wasmrt.TrapError
		if !errors.As(err, &te) || te.Code != "unreachable" || !errors.Is(err, wasmrt.ErrTrap) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("infinite loop with huge fuel and a 10 ms timeout times out", func(t *testing.T) {
		m := loadFixture(t, e, "loop", wasmrt.ModuleConfig{Limits: wasmrt.Limits{Fuel: 1 << 62, Timeout: 10 * time.Millisecond}})
		res, err := invoke(t, m, wasmrt.Invocation{})
		if !errors.Is(err, wasmrt.ErrTimeout) || errcode.Of(err) != "timeout" {
			t.Fatalf("err = %v", err)
		}
		if res.Stats.WallTime < 10*time.Millisecond {
			t.Fatalf("interrupted after %v, before the 10 ms deadline", res.Stats.WallTime)
		}
	})
	t.Run("http-count with a wrong signature is a link error", func(t *testing.T) {
		_, err := e.Load(fixture(t, "bad_signature"), wasmrt.ModuleConfig{})
		if !errors.Is(err, wasmrt.ErrLinkError) || errcode.Of(err) != "link_error" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("missing run is a missing export", func(t *testing.T) {
		_, err := e.Load(fixture(t, "missing_run"), wasmrt.ModuleConfig{})
		if !errors.Is(err, wasmrt.ErrMissingExport) || errcode.Of(err) != "missing_export" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("Palyra's empty example module is a missing export", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "vectors", "palyra-echo-http-example", "module.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Load(b, wasmrt.ModuleConfig{}); !errors.Is(err, wasmrt.ErrMissingExport) {
			t.Fatalf("err = %v", err)
		}
	})
}

func derived(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "vectors", "derived", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDerivedVectors runs the researcher-derived Palyra modules against the
// outcomes recorded in expected.json.
func TestDerivedVectors(t *testing.T) {
	var expected struct {
		WasmModules map[string]struct {
			Hex string `json:"hex"`
		} `json:"wasm_modules"`
	}
	if err := json.Unmarshal(derived(t, "expected.json"), &expected); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, wasmrt.Config{})
	noGrants := wasmrt.Grants{}
	oneHost := wasmrt.Grants{HTTPHosts: []string{"api.example.com"}}
	manyHosts := wasmrt.Grants{}
	for i := range 43 {
		manyHosts.HTTPHosts = append(manyHosts.HTTPHosts, "h"+string(rune('a'+i/26))+string(rune('a'+i%26))+".example.com")
	}
	tests := []struct {
		file   string
		grants wasmrt.Grants
		want   int
	}{
		{"run7.wasm", noGrants, 7},
		{"http_count.wasm", noGrants, 0},
		{"http_count.wasm", oneHost, 1},
		{"http_handle0.wasm", noGrants, -1},
		{"http_handle0.wasm", oneHost, 10000},
		{"http_handle42.wasm", oneHost, -1},
		{"http_handle42.wasm", manyHosts, 10042},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := derived(t, tt.file)
			if want, err := hex.DecodeString(expected.WasmModules[tt.file].Hex); err != nil || !bytes.Equal(b, want) {
				t.Fatalf("%s differs from the hex in expected.json", tt.file)
			}
			m := load(t, e, b, wasmrt.ModuleConfig{})
			res := mustInvoke(t, m, wasmrt.Invocation{Grants: tt.grants})
			if got := exitCodeOf(t, res); got != tt.want {
				t.Fatalf("exit code %d, want %d", got, tt.want)
			}
			if res.Entrypoint != "run" {
				t.Fatalf("entrypoint %q, want run", res.Entrypoint)
			}
		})
	}
}
