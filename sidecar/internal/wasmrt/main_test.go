package wasmrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// tmpRoot holds what the tests build once per process (the Go guest).
var tmpRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "palyra-runtime-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	// goleak checks that every epoch ticker and preparer goroutine was
	// stopped by the Close calls of the tests.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// fixture reads testdata/wasm/<name>.wasm at the repository root.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "wasm", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newEngine(t testing.TB, cfg wasmrt.Config) *wasmrt.Engine {
	t.Helper()
	e, err := wasmrt.NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// load loads wasm on e; the module is closed when the test ends.
func load(t testing.TB, e *wasmrt.Engine, wasm []byte, cfg wasmrt.ModuleConfig) *wasmrt.Module {
	t.Helper()
	m, err := e.Load(wasm, cfg)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func loadFixture(t testing.TB, e *wasmrt.Engine, name string, cfg wasmrt.ModuleConfig) *wasmrt.Module {
	t.Helper()
	return load(t, e, fixture(t, name), cfg)
}

func invoke(t testing.TB, m *wasmrt.Module, inv wasmrt.Invocation) (*wasmrt.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := m.Invoke(ctx, inv)
	if res == nil {
		t.Fatal("Invoke returned a nil Result")
	}
	return res, err
}

func mustInvoke(t testing.TB, m *wasmrt.Module, inv wasmrt.Invocation) *wasmrt.Result {
	t.Helper()
	res, err := invoke(t, m, inv)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	return res
}

func exitCodeOf(t testing.TB, res *wasmrt.Result) int {
	t.Helper()
	var out struct {
		ExitCode *int `json:"exit_code"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil || out.ExitCode == nil {
		t.Fatalf("output %s is not {\"exit_code\":N}", res.Output)
	}
	return *out.ExitCode
}

var (
	goGuestOnce sync.Once
	goGuestWasm []byte
	goGuestErr  error
)

// goGuest builds testdata/goguest as a wasip1 c-shared reactor, once per
// test process (Go's build cache makes later runs fast).
func goGuest(t testing.TB) []byte {
	t.Helper()
	goGuestOnce.Do(func() {
		out := filepath.Join(tmpRoot, "goguest.wasm")
		goBin := filepath.Join(goruntime.GOROOT(), "bin", "go")
		cmd := exec.Command(goBin, "build", "-buildmode=c-shared", "-trimpath", "-o", out, "main.go")
		cmd.Dir = filepath.Join("testdata", "goguest")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			goGuestErr = fmt.Errorf("build goguest: %v\n%s", err, b)
			return
		}
		goGuestWasm, goGuestErr = os.ReadFile(out)
	})
	if goGuestErr != nil {
		t.Fatal(goGuestErr)
	}
	return goGuestWasm
}
