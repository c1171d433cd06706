package peers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v25"
)

// wasmtimeRunner runs the palyra-ABI module with wasmtime-go in-process.
type wasmtimeRunner struct {
	gate
	engine *wasmtime.Engine
	module *wasmtime.Module
	linker *wasmtime.Linker

	// calls maps a store's context pointer to its call, for the host
	// functions, which are defined once on the linker and shared by every
	// store.
	callsMu sync.RWMutex
	calls   map[uintptr]*callState
}

// NewWasmtime compiles wasm, a module of the Palyra skills ABI such as the
// echo example, and returns a Runner that calls its palyra.echo tool with
// wasmtime-go in this process.
//
// The engine gets the fastest reasonable configuration: Cranelift at
// OptLevelSpeed, no fuel metering and no epoch interruption (so a call
// cannot be interrupted: the deadline in the input document is only
// informative). The module is compiled and the linker defined (WASI preview1
// and the palyra imports) once; each call pays for a new Store with an empty
// WASI context (no arguments, environment or preopened directories; stdio
// not inherited), instantiation, _initialize and the entrypoint.
func NewWasmtime(wasm []byte) (Runner, error) {
	cfg := wasmtime.NewConfig()
	cfg.SetStrategy(wasmtime.StrategyCranelift)
	cfg.SetCraneliftOptLevel(wasmtime.OptLevelSpeed)
	cfg.SetConsumeFuel(false)
	cfg.SetEpochInterruption(false)
	engine := wasmtime.NewEngineWithConfig(cfg)

	r := &wasmtimeRunner{gate: gate{name: NameWasmtime}, engine: engine, calls: make(map[uintptr]*callState)}
	if err := r.init(wasm); err != nil {
		r.free()
		return nil, fmt.Errorf("%s: %w", NameWasmtime, err)
	}
	return r, nil
}

func (r *wasmtimeRunner) init(wasm []byte) error {
	module, err := wasmtime.NewModule(r.engine, wasm)
	if err != nil {
		return fmt.Errorf("compile module: %w", err)
	}
	r.module = module
	if !hasExport(module, entrypoint) {
		return fmt.Errorf("module does not export %s", entrypoint)
	}
	r.linker = wasmtime.NewLinker(r.engine)
	if err := r.linker.DefineWasi(); err != nil {
		return fmt.Errorf("define WASI: %w", err)
	}
	return r.defineHost()
}

func hasExport(m *wasmtime.Module, name string) bool {
	for _, e := range m.Exports() {
		if e.Name() == name && e.Type().FuncType() != nil {
			return true
		}
	}
	return false
}

// wasmtimeHostFn is one palyra import of signature (i32 × params) -> i32.
type wasmtimeHostFn struct {
	module, name string
	params       int
	fn           func(st *callState, mem func() []byte, a []wasmtime.Val) int32
}

// defineHost defines the palyra imports on the linker.
func (r *wasmtimeRunner) defineHost() error {
	fns := []wasmtimeHostFn{
		{moduleHost, "input-len", 0, func(st *callState, _ func() []byte, _ []wasmtime.Val) int32 {
			return st.inputLen()
		}},
		{moduleHost, "input-read", 2, func(st *callState, mem func() []byte, a []wasmtime.Val) int32 {
			return st.inputRead(mem(), a[0].I32(), a[1].I32())
		}},
		{moduleHost, "output-write", 2, func(st *callState, mem func() []byte, a []wasmtime.Val) int32 {
			return st.outputWrite(mem(), a[0].I32(), a[1].I32())
		}},
		{moduleHost, "capability-call", 3, func(st *callState, mem func() []byte, a []wasmtime.Val) int32 {
			return st.capabilityCall(mem(), a[0].I32(), a[1].I32(), a[2].I32())
		}},
		{moduleHost, "response-len", 0, func(st *callState, _ func() []byte, _ []wasmtime.Val) int32 {
			return st.responseLen()
		}},
		{moduleHost, "response-read", 2, func(st *callState, mem func() []byte, a []wasmtime.Val) int32 {
			return st.responseRead(mem(), a[0].I32(), a[1].I32())
		}},
	}
	for _, kind := range grantKinds {
		fns = append(fns,
			wasmtimeHostFn{moduleCapabilities, kind + "-count", 0,
				func(*callState, func() []byte, []wasmtime.Val) int32 { return 0 }},
			wasmtimeHostFn{moduleCapabilities, kind + "-handle", 1,
				func(*callState, func() []byte, []wasmtime.Val) int32 { return -1 }},
		)
	}
	i32 := wasmtime.NewValType(wasmtime.KindI32)
	i32s := func(n int) []*wasmtime.ValType {
		ts := make([]*wasmtime.ValType, n)
		for i := range ts {
			ts[i] = i32
		}
		return ts
	}
	for _, f := range fns {
		fn := f.fn
		err := r.linker.FuncNew(f.module, f.name, wasmtime.NewFuncType(i32s(f.params), i32s(1)),
			func(c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
				st := r.lookup(c)
				if st == nil {
					return nil, wasmtime.NewTrap("peers: host function called from an unknown store")
				}
				return []wasmtime.Val{wasmtime.ValI32(fn(st, func() []byte { return memoryOf(c) }, a))}, nil
			})
		if err != nil {
			return fmt.Errorf("define %s.%s: %w", f.module, f.name, err)
		}
	}
	// log(level, ptr, len): accepted and dropped.
	err := r.linker.FuncNew(moduleHost, "log", wasmtime.NewFuncType(i32s(3), nil),
		func(*wasmtime.Caller, []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) { return nil, nil })
	if err != nil {
		return fmt.Errorf("define %s.log: %w", moduleHost, err)
	}
	return nil
}

// memoryOf returns the caller's exported memory, or nil when it exports
// none (every pointer is then outside memory).
func memoryOf(c *wasmtime.Caller) []byte {
	ext := c.GetExport("memory")
	if ext == nil {
		return nil
	}
	m := ext.Memory()
	if m == nil {
		return nil
	}
	return m.UnsafeData(c)
}

func storeKey(s wasmtime.Storelike) uintptr { return uintptr(unsafe.Pointer(s.Context())) }

func (r *wasmtimeRunner) lookup(c *wasmtime.Caller) *callState {
	r.callsMu.RLock()
	st := r.calls[storeKey(c)]
	r.callsMu.RUnlock()
	return st
}

func (r *wasmtimeRunner) Name() string { return NameWasmtime }

// Call runs one call in a new Store.
func (r *wasmtimeRunner) Call(ctx context.Context, input []byte) ([]byte, error) {
	return r.gate.call(ctx, func() ([]byte, error) { return r.call(ctx, input) })
}

func (r *wasmtimeRunner) call(ctx context.Context, input []byte) ([]byte, error) {
	store := wasmtime.NewStore(r.engine)
	store.SetWasi(wasmtime.NewWasiConfig())
	st := &callState{}
	key := storeKey(store)
	r.callsMu.Lock()
	r.calls[key] = st
	r.callsMu.Unlock()
	defer func() {
		// Before store.Close: a context pointer may be reused by the next
		// store.
		r.callsMu.Lock()
		delete(r.calls, key)
		r.callsMu.Unlock()
		store.Close()
	}()

	inst, err := r.linker.Instantiate(store, r.module)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %w", err)
	}
	if init := inst.GetFunc(store, "_initialize"); init != nil {
		if _, err := init.Call(store); err != nil {
			if code, ok := exitStatus(err); ok && code == 0 {
				return result(0, nil) // exited during _initialize: nothing to call
			}
			return nil, fmt.Errorf("_initialize: %w", err)
		}
	}
	main := inst.GetFunc(store, entrypoint)
	if main == nil {
		return nil, fmt.Errorf("module does not export %s", entrypoint)
	}
	st.doc, st.bound = inputDocument(ctx, input), true
	v, err := main.Call(store)
	if err != nil {
		if code, ok := exitStatus(err); ok {
			return exitResult(uint32(code), st.out)
		}
		return nil, fmt.Errorf("%s: %w", entrypoint, err)
	}
	rc, ok := v.(int32)
	if !ok {
		return nil, fmt.Errorf("%s returned %T, want int32", entrypoint, v)
	}
	return result(rc, st.out)
}

// exitStatus reports the code of a WASI proc_exit.
func exitStatus(err error) (int32, bool) {
	var we *wasmtime.Error
	if errors.As(err, &we) {
		return we.ExitStatus()
	}
	return 0, false
}

// Close frees the linker, module and engine, after the calls in progress.
func (r *wasmtimeRunner) Close(context.Context) error {
	return r.gate.close(func() error { r.free(); return nil })
}

func (r *wasmtimeRunner) free() {
	if r.linker != nil {
		r.linker.Close()
	}
	if r.module != nil {
		r.module.Close()
	}
	r.engine.Close()
}
