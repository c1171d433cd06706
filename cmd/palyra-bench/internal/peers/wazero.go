package peers

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// wazeroRunner runs the palyra-ABI module with wazero in-process.
type wazeroRunner struct {
	gate
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	modCfg   wazero.ModuleConfig
}

// callKey is the context key of the *callState of a call: wazero hands the
// ctx of Call to the host functions, so each call finds its own state.
type callKey struct{}

// unbound is what host functions see outside a call; it is never written,
// since every write happens only on a bound call.
var unbound callState

func stateOf(ctx context.Context) *callState {
	if st, ok := ctx.Value(callKey{}).(*callState); ok {
		return st
	}
	return &unbound
}

// NewWazero compiles wasm, a module of the Palyra skills ABI such as the echo
// example, and returns a Runner that calls its palyra.echo tool with wazero
// in this process.
//
// The runtime uses wazero's optimizing compiler
// (wazero.NewRuntimeConfigCompiler), without WithCloseOnContextDone (so a
// call cannot be interrupted). wasi_snapshot_preview1 and the two palyra
// import modules are instantiated once; each call instantiates the compiled
// module anonymously with _initialize as its start function, calls the
// entrypoint and closes the module. The module config is wazero's default:
// no arguments, environment or filesystem, stdio discarded, and wazero's
// sandboxed fake clocks and deterministic random source.
func NewWazero(ctx context.Context, wasm []byte) (Runner, error) {
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	r := &wazeroRunner{
		gate:   gate{name: NameWazero},
		rt:     rt,
		modCfg: wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"),
	}
	if err := r.init(ctx, wasm); err != nil {
		_ = rt.Close(ctx) // Don't leak the runtime on error.
		return nil, fmt.Errorf("%s: %w", NameWazero, err)
	}
	return r, nil
}

func (r *wazeroRunner) init(ctx context.Context, wasm []byte) error {
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r.rt); err != nil {
		return fmt.Errorf("instantiate WASI: %w", err)
	}
	if err := r.hostModule(ctx); err != nil {
		return err
	}
	if err := r.capabilitiesModule(ctx); err != nil {
		return err
	}
	compiled, err := r.rt.CompileModule(ctx, wasm)
	if err != nil {
		return fmt.Errorf("compile module: %w", err)
	}
	r.compiled = compiled
	if _, ok := compiled.ExportedFunctions()[entrypoint]; !ok {
		return fmt.Errorf("module does not export %s", entrypoint)
	}
	return nil
}

var (
	i32x0 = []api.ValueType{}
	i32x1 = []api.ValueType{api.ValueTypeI32}
	i32x2 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}
	i32x3 = []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}
)

// memoryView returns the whole of mod's memory, or nil when it has none.
func memoryView(mod api.Module) []byte {
	m := mod.Memory()
	if m == nil {
		return nil
	}
	b, _ := m.Read(0, m.Size())
	return b
}

func arg(stack []uint64, i int) int32 { return api.DecodeI32(stack[i]) }

// hostModule instantiates palyra:skills/host@1.
func (r *wazeroRunner) hostModule(ctx context.Context) error {
	b := r.rt.NewHostModuleBuilder(moduleHost)
	fn := func(name string, params, results []api.ValueType, f func(ctx context.Context, mod api.Module, stack []uint64)) {
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(f), params, results).Export(name)
	}
	fn("input-len", i32x0, i32x1, func(ctx context.Context, _ api.Module, stack []uint64) {
		stack[0] = api.EncodeI32(stateOf(ctx).inputLen())
	})
	fn("input-read", i32x2, i32x1, func(ctx context.Context, mod api.Module, stack []uint64) {
		stack[0] = api.EncodeI32(stateOf(ctx).inputRead(memoryView(mod), arg(stack, 0), arg(stack, 1)))
	})
	fn("output-write", i32x2, i32x1, func(ctx context.Context, mod api.Module, stack []uint64) {
		stack[0] = api.EncodeI32(stateOf(ctx).outputWrite(memoryView(mod), arg(stack, 0), arg(stack, 1)))
	})
	// log: accepted and dropped.
	fn("log", i32x3, i32x0, func(context.Context, api.Module, []uint64) {})
	fn("capability-call", i32x3, i32x1, func(ctx context.Context, mod api.Module, stack []uint64) {
		stack[0] = api.EncodeI32(stateOf(ctx).capabilityCall(memoryView(mod), arg(stack, 0), arg(stack, 1), arg(stack, 2)))
	})
	fn("response-len", i32x0, i32x1, func(ctx context.Context, _ api.Module, stack []uint64) {
		stack[0] = api.EncodeI32(stateOf(ctx).responseLen())
	})
	fn("response-read", i32x2, i32x1, func(ctx context.Context, mod api.Module, stack []uint64) {
		stack[0] = api.EncodeI32(stateOf(ctx).responseRead(memoryView(mod), arg(stack, 0), arg(stack, 1)))
	})
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate %s: %w", moduleHost, err)
	}
	return nil
}

// capabilitiesModule instantiates palyra:plugins/host-capabilities@0.1.0:
// nothing is granted, so every count is 0 and every handle -1.
func (r *wazeroRunner) capabilitiesModule(ctx context.Context) error {
	b := r.rt.NewHostModuleBuilder(moduleCapabilities)
	for _, kind := range grantKinds {
		b.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, stack []uint64) {
			stack[0] = 0
		}), i32x0, i32x1).Export(kind + "-count")
		b.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(_ context.Context, stack []uint64) {
			stack[0] = api.EncodeI32(-1)
		}), i32x1, i32x1).Export(kind + "-handle")
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate %s: %w", moduleCapabilities, err)
	}
	return nil
}

func (r *wazeroRunner) Name() string { return NameWazero }

// Call instantiates the module (running _initialize), calls the entrypoint
// and closes the module.
func (r *wazeroRunner) Call(ctx context.Context, input []byte) ([]byte, error) {
	return r.gate.call(ctx, func() ([]byte, error) { return r.call(ctx, input) })
}

func (r *wazeroRunner) call(ctx context.Context, input []byte) (_ []byte, err error) {
	st := &callState{}
	ctx = context.WithValue(ctx, callKey{}, st)
	mod, err := r.rt.InstantiateModule(ctx, r.compiled, r.modCfg)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	defer func() {
		if cerr := mod.Close(ctx); cerr != nil && err == nil {
			err = fmt.Errorf("close module: %w", cerr)
		}
	}()
	main := mod.ExportedFunction(entrypoint)
	st.doc, st.bound = inputDocument(ctx, input), true
	res, err := main.Call(ctx)
	if err != nil {
		var ee *sys.ExitError
		if errors.As(err, &ee) {
			return exitResult(ee.ExitCode(), st.out)
		}
		return nil, fmt.Errorf("%s: %w", entrypoint, err)
	}
	return result(api.DecodeI32(res[0]), st.out)
}

// Close closes the runtime, and with it everything it compiled and
// instantiated, after the calls in progress.
func (r *wazeroRunner) Close(ctx context.Context) error {
	return r.gate.close(func() error { return r.rt.Close(ctx) })
}
