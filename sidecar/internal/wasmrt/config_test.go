package wasmrt_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/sdk/abi"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

var (
	sdkConfigOnce sync.Once
	sdkConfigWasm []byte
	sdkConfigErr  error
)

// sdkConfigGuest builds testdata/sdkconfig, a guest built with the Go SDK.
func sdkConfigGuest(t testing.TB) []byte {
	t.Helper()
	sdkConfigOnce.Do(func() {
		out := filepath.Join(tmpRoot, "sdkconfig.wasm")
		cmd := exec.Command(filepath.Join(goruntime.GOROOT(), "bin", "go"), "build", "-buildmode=c-shared", "-trimpath", "-o", out, ".")
		cmd.Dir = filepath.Join("testdata", "sdkconfig")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			sdkConfigErr = errors.New("build sdkconfig: " + err.Error() + "\n" + string(b))
			return
		}
		sdkConfigWasm, sdkConfigErr = os.ReadFile(out)
	})
	if sdkConfigErr != nil {
		t.Fatal(sdkConfigErr)
	}
	return sdkConfigWasm
}

// TestGoGuestReadsConfig: a Go guest built with the SDK reads the call's
// config document (config-len/config-read) raw and typed, a call with no
// config reads {}, each call reads its own config (prepared instances
// too), and a config over the limit or not an object is refused before
// the guest runs.
func TestGoGuestReadsConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go guest")
	}
	e := goEngine(t)
	wasm := sdkConfigGuest(t)
	for _, prepared := range []int{0, 2} {
		m := load(t, e, wasm, wasmrt.ModuleConfig{PreparedInstances: prepared, Limits: wasmrt.Limits{Fuel: 1 << 40}})
		cfg := json.RawMessage(`{"api_token":"s3cret-token","endpoint":"https://e","retries":2}`)
		res := mustInvoke(t, m, wasmrt.Invocation{ToolID: "acme.config", Input: json.RawMessage(`{}`), Config: cfg})
		if string(res.Output) != string(cfg) {
			t.Fatalf("prepared=%d: raw config %s", prepared, res.Output)
		}
		res = mustInvoke(t, m, wasmrt.Invocation{ToolID: "acme.typed", Input: json.RawMessage(`{}`), Config: cfg})
		if string(res.Output) != `{"endpoint":"https://e","retries":2,"token_len":12}` {
			t.Fatalf("prepared=%d: typed config %s", prepared, res.Output)
		}
		res = mustInvoke(t, m, wasmrt.Invocation{ToolID: "acme.config", Input: json.RawMessage(`{}`)})
		if string(res.Output) != `{}` {
			t.Fatalf("prepared=%d: no config reads %s", prepared, res.Output)
		}
		res = mustInvoke(t, m, wasmrt.Invocation{ToolID: "acme.config", Input: json.RawMessage(`{}`), Config: json.RawMessage(`{"retries":5}`)})
		if string(res.Output) != `{"retries":5}` {
			t.Fatalf("prepared=%d: a later call reads %s", prepared, res.Output)
		}
		for name, bad := range map[string]json.RawMessage{
			"too large":     json.RawMessage(`{"k":"` + strings.Repeat("x", abi.MaxConfigBytes) + `"}`),
			"not an object": json.RawMessage(`[1]`),
			"not JSON":      json.RawMessage(`{`),
		} {
			_, err := invoke(t, m, wasmrt.Invocation{ToolID: "acme.config", Input: json.RawMessage(`{}`), Config: bad})
			if !errors.Is(err, wasmrt.ErrInvalidInput) || !strings.Contains(err.Error(), "config") {
				t.Fatalf("prepared=%d: %s: %v", prepared, name, err)
			}
		}
	}
}
