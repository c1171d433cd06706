package peers

import (
	"context"
	"encoding/json"
	"fmt"

	extism "github.com/extism/go-sdk"
)

// extismExport is the function the Extism guest exports.
const extismExport = "echo"

// extismRunner runs the Extism-ABI guest with the Extism go-sdk.
type extismRunner struct {
	gate
	compiled *extism.CompiledPlugin
}

// NewExtism compiles wasm, the Extism guest built by BuildExtismGuest, and
// returns a Runner that calls its echo export with the Extism go-sdk.
//
// The plugin is compiled once with extism.NewCompiledPlugin (WASI enabled,
// no host functions, no timeout, no memory limit; the go-sdk's default
// wazero runtime config, which uses the compiler on amd64 and arm64). Each
// call creates an instance (the Extism kernel and the guest, with the
// go-sdk's default module config: wazero's fake clocks, no filesystem),
// calls echo and closes the instance. The go-sdk runs the reactor's
// _initialize itself before the first call of an instance. Guest logs are
// dropped.
func NewExtism(ctx context.Context, wasm []byte) (Runner, error) {
	compiled, err := extism.NewCompiledPlugin(ctx,
		extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{EnableWasi: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: compile plugin: %w", NameExtism, err)
	}
	return &extismRunner{gate: gate{name: NameExtism}, compiled: compiled}, nil
}

func (r *extismRunner) Name() string { return NameExtism }

// Call runs one call in a new plugin instance.
func (r *extismRunner) Call(ctx context.Context, input []byte) ([]byte, error) {
	return r.gate.call(ctx, func() ([]byte, error) { return r.call(ctx, input) })
}

func (r *extismRunner) call(ctx context.Context, input []byte) (_ []byte, err error) {
	p, err := r.compiled.Instance(ctx, extism.PluginInstanceConfig{})
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	defer func() {
		if cerr := p.Close(ctx); cerr != nil && err == nil {
			err = fmt.Errorf("close instance: %w", cerr)
		}
	}()
	p.SetLogger(func(extism.LogLevel, string) {})
	rc, out, err := p.CallWithContext(ctx, extismExport, input)
	if err != nil {
		// The guest reports a tool error as the Extism error text, a
		// tool error document; anything else failed in the host or
		// trapped.
		if te := extismToolError(err.Error()); te != nil {
			return nil, te
		}
		return nil, fmt.Errorf("call %s: %w", extismExport, err)
	}
	if rc != 0 {
		return nil, toolError(out)
	}
	return result(0, out)
}

// extismToolError reads the tool error document the guest set as its
// Extism error, or returns nil when msg is not one.
func extismToolError(msg string) *ToolError {
	var d struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(msg), &d); err != nil || d.Code == "" {
		return nil
	}
	return &ToolError{Code: d.Code, Message: d.Message}
}

// Close closes the compiled plugin, after the calls in progress.
func (r *extismRunner) Close(ctx context.Context) error {
	return r.gate.close(func() error { return r.compiled.Close(ctx) })
}
