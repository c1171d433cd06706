package wasmrt_test

import (
	"testing"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// TestExitCodeRule checks the runtime's half of the exit-code rule
// (sdk/ABI.md §8): a Palyra module's result is the document
// {"exit_code": N}, whatever the module wrote. The host checks it is
// exactly that document and never applies the output_schema to it
// (host/palyraabi_test.go).
func TestExitCodeRule(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := load(t, e, derived(t, "http_count.wasm"), wasmrt.ModuleConfig{})
	res := mustInvoke(t, m, wasmrt.Invocation{Grants: wasmrt.Grants{HTTPHosts: []string{"api.example.com"}}})
	if string(res.Output) != `{"exit_code":1}` || res.ExitCode != 1 {
		t.Fatalf("output %s, exit code %d; want {\"exit_code\":1}", res.Output, res.ExitCode)
	}
}
