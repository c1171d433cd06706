package wasmrt_test

import (
	"errors"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/toolschema"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// TestExitCodeRule checks the exit-code rule on the sidecar's side
// (sdk/ABI.md §8): with a tool's output_schema in force, a Palyra module's
// result {"exit_code": N} is not checked against it, while a module that
// writes output is, as before.
func TestExitCodeRule(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	// echo-http's acme.echo output_schema.
	v, err := toolschema.New(nil, []byte(`{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"]}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Palyra module: the exit code, schema not applied", func(t *testing.T) {
		m := load(t, e, derived(t, "http_count.wasm"), wasmrt.ModuleConfig{})
		res := mustInvoke(t, m, wasmrt.Invocation{Validator: v, Grants: wasmrt.Grants{HTTPHosts: []string{"api.example.com"}}})
		if string(res.Output) != `{"exit_code":1}` || res.ExitCode != 1 {
			t.Fatalf("output %s, exit code %d; want {\"exit_code\":1}", res.Output, res.ExitCode)
		}
	})
	t.Run("module that writes output: schema applied", func(t *testing.T) {
		m := loadFixture(t, e, "echo", wasmrt.ModuleConfig{})
		res, err := invoke(t, m, wasmrt.Invocation{Validator: v, Input: []byte(`{"text":"hi"}`)})
		if !errors.Is(err, wasmrt.ErrInvalidOutput) || errcode.Of(err) != "invalid_output" || res.Output != nil {
			t.Fatalf("err = %v, output %s; want invalid_output and no output", err, res.Output)
		}
	})
}
