package wasmrt

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v25"
)

// Defaults of Config.
const (
	DefaultEpochTick    = 2 * time.Millisecond
	DefaultTimeout      = 30 * time.Second
	DefaultMaxWasmStack = 512 << 10
	minEpochTick        = 100 * time.Microsecond
	maxEpochTick        = time.Second
	minMaxWasmStack     = 64 << 10
	maxMaxWasmStack     = 64 << 20
	wasmtimeModulePath  = "github.com/bytecodealliance/wasmtime-go/v25"
)

// Config configures an Engine. The zero value is usable: every zero field
// takes its default. A Config is copied by NewEngine; changing it later has
// no effect.
type Config struct {
	// EpochTick is the period of the engine's epoch ticker, and so the
	// granularity of wall-clock deadlines: a call is interrupted between
	// its deadline and one tick later. Default DefaultEpochTick (2 ms);
	// allowed 100 µs to 1 s.
	EpochTick time.Duration

	// CacheDir, when set, is the precompiled-module cache: compiled
	// modules are stored there (keyed by module sha256, this Config's
	// compilation settings, the wasmtime version and the CPU) and loaded
	// from there, after verification, by later engines. It is created
	// with mode 0700. Empty disables the cache.
	CacheDir string

	// DefaultTimeout bounds a call that has no other deadline (no ctx
	// deadline, no Invocation.Timeout, no Limits.Timeout). Default
	// DefaultTimeout (30 s). A call always has a deadline.
	DefaultTimeout time.Duration

	// MaxWasmStack is the maximum wasm stack, in bytes; deeper recursion
	// traps with code "stack_overflow". Default DefaultMaxWasmStack
	// (512 KiB, wasmtime's default); allowed 64 KiB to 64 MiB.
	MaxWasmStack int

	// NoMemoryPool turns off the pool of linear memories (Linux; see
	// mempool_linux.go): every instance then gets a fresh mapping from
	// wasmtime, with a guard region and the data image mapped
	// copy-on-write. It exists for before/after measurements; the pool
	// changes generated code, so the two settings have separate cache
	// entries.
	NoMemoryPool bool
}

// memoryPooled reports whether engines made with c take their linear
// memories from the pool.
func (c Config) memoryPooled() bool { return !c.NoMemoryPool && memoryPoolSupported() }

// MemoryPoolMaxModuleBytes is the largest module for which ForModule keeps
// the linear-memory pool. A pooled memory is filled by copying the data
// segments at each instantiation and its code bounds-checks every access;
// for a small module that costs far less than the mappings the pool saves
// (BenchmarkWATCall: 44 -> 25 µs per call), but a Go guest's megabytes of
// data and its runtime's start made a fresh call twice as slow
// (BenchmarkEchoExample/fresh: 0.70 -> 1.37 ms), so large modules keep
// wasmtime's copy-on-write mappings.
const MemoryPoolMaxModuleBytes = 256 << 10

// ForModule returns c for an engine that will load a module of size
// bytes: the pool is turned off for modules over MemoryPoolMaxModuleBytes.
// The sidecar and the precompile child both derive their engine from the
// module this way, so a precompiled entry is found by the sidecar that
// loads it (the setting is part of the cache fingerprint).
func (c Config) ForModule(size int64) Config {
	if size > MemoryPoolMaxModuleBytes {
		c.NoMemoryPool = true
	}
	return c
}

func (c Config) withDefaults() (Config, error) {
	if c.EpochTick == 0 {
		c.EpochTick = DefaultEpochTick
	}
	if c.DefaultTimeout == 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	if c.MaxWasmStack == 0 {
		c.MaxWasmStack = DefaultMaxWasmStack
	}
	if c.EpochTick < minEpochTick || c.EpochTick > maxEpochTick {
		return c, fmt.Errorf("%w: EpochTick %v outside [%v, %v]", ErrInvalidConfig, c.EpochTick, minEpochTick, maxEpochTick)
	}
	if c.DefaultTimeout < 0 {
		return c, fmt.Errorf("%w: DefaultTimeout %v is negative", ErrInvalidConfig, c.DefaultTimeout)
	}
	if c.MaxWasmStack < minMaxWasmStack || c.MaxWasmStack > maxMaxWasmStack {
		return c, fmt.Errorf("%w: MaxWasmStack %d outside [%d, %d]", ErrInvalidConfig, c.MaxWasmStack, minMaxWasmStack, maxMaxWasmStack)
	}
	return c, nil
}

// wasmtimeConfig builds the wasmtime configuration. Everything set here that
// changes generated code must also be in fingerprint (cache.go).
func (c Config) wasmtimeConfig() (*wasmtime.Config, error) {
	wc := wasmtime.NewConfig()
	wc.SetConsumeFuel(true)
	wc.SetEpochInterruption(true)
	wc.SetStrategy(wasmtime.StrategyCranelift)
	wc.SetCraneliftOptLevel(wasmtime.OptLevelSpeed)
	wc.SetMaxWasmStack(c.MaxWasmStack)
	// No threads: a skill is single-threaded and shared memories would
	// escape the per-call store.
	wc.SetWasmThreads(false)
	if c.memoryPooled() && !installMemoryPool(wc) {
		return nil, fmt.Errorf("%w: out of memory installing the linear-memory pool", ErrInvalidConfig)
	}
	return wc, nil
}

// Engine owns one wasmtime engine, its epoch ticker, and the linker that
// provides the ABI's host functions. A sidecar process has one Engine.
//
// An Engine is safe for concurrent use. Close stops it; it closes every
// Module loaded by it first. After Close, Load returns ErrClosed.
type Engine struct {
	cfg         Config
	wt          *wasmtime.Engine
	linker      *wasmtime.Linker
	fingerprint string
	epoch0      time.Time // base of the WASI monotonic clock

	statesMu sync.RWMutex
	states   map[uintptr]*instState // keyed by the store's context pointer

	// The epoch ticker runs only while active > 0.
	active     atomic.Int64
	wake       chan struct{}
	stop       chan struct{}
	tickerDone sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	modules map[*Module]struct{}
	once    sync.Once
}

// NewEngine returns an Engine configured by cfg with its epoch ticker
// started. The caller owns it and must Close it.
func NewEngine(cfg Config) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:         cfg,
		fingerprint: fingerprint(cfg),
		epoch0:      time.Now(),
		states:      make(map[uintptr]*instState),
		wake:        make(chan struct{}, 1),
		stop:        make(chan struct{}),
		modules:     make(map[*Module]struct{}),
	}
	wc, err := cfg.wasmtimeConfig()
	if err != nil {
		return nil, err
	}
	e.wt = wasmtime.NewEngineWithConfig(wc)
	e.linker = wasmtime.NewLinker(e.wt)
	if err := e.defineHostFuncs(); err != nil {
		e.linker.Close()
		e.wt.Close()
		return nil, fmt.Errorf("runtime: define host functions: %w", err)
	}
	e.tickerDone.Add(1)
	go e.tick()
	return e, nil
}

// Close closes every Module loaded by the engine (each waits for its
// in-flight calls, which are bounded by their deadlines, while the epoch
// ticker still runs), then stops the ticker and waits for it, then frees the
// wasmtime engine. It is idempotent and always returns nil; the error result
// is there for io.Closer.
func (e *Engine) Close() error {
	e.once.Do(func() {
		e.mu.Lock()
		e.closed = true
		mods := make([]*Module, 0, len(e.modules))
		for m := range e.modules {
			mods = append(mods, m)
		}
		e.mu.Unlock()
		for _, m := range mods {
			_ = m.Close()
		}
		close(e.stop)
		e.tickerDone.Wait()
		e.linker.Close()
		e.wt.Close()
	})
	return nil
}

// tick increments the epoch every EpochTick while any store may be running
// guest code. It is owned by the Engine and stopped by Close.
//
// A timer re-armed after each increment, not a time.Ticker: a ticker that
// fires late catches up with a short interval, so n+1 increments could take
// less than n ticks and a call be interrupted before its deadline; with the
// timer, increments are always at least a tick apart (deadlineTicks relies
// on it).
func (e *Engine) tick() {
	defer e.tickerDone.Done()
	t := time.NewTimer(e.cfg.EpochTick)
	defer t.Stop()
	for {
		if e.active.Load() == 0 {
			t.Stop()
			select {
			case <-e.stop:
				return
			case <-e.wake:
			}
			t.Reset(e.cfg.EpochTick)
			continue
		}
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.wt.IncrementEpoch()
			t.Reset(e.cfg.EpochTick)
		}
	}
}

// acquire marks a store as about to run guest code, starting the ticker if
// it was idle. Every acquire is paired with a release.
func (e *Engine) acquire() {
	if e.active.Add(1) == 1 {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

func (e *Engine) release() { e.active.Add(-1) }

// deadlineTicks converts a duration into a relative epoch deadline that
// never fires early: the current epoch may be almost over, so one tick is
// added.
func (e *Engine) deadlineTicks(d time.Duration) uint64 {
	if d <= 0 {
		return 1
	}
	n := uint64((d + e.cfg.EpochTick - 1) / e.cfg.EpochTick)
	return n + 1
}

func (e *Engine) register(store *wasmtime.Store, st *instState) {
	key := uintptr(unsafe.Pointer(store.Context()))
	e.statesMu.Lock()
	e.states[key] = st
	e.statesMu.Unlock()
}

// unregister must run before store.Close: context pointers are reused.
func (e *Engine) unregister(store *wasmtime.Store) {
	key := uintptr(unsafe.Pointer(store.Context()))
	e.statesMu.Lock()
	delete(e.states, key)
	e.statesMu.Unlock()
}

func (e *Engine) lookup(c *wasmtime.Caller) *instState {
	key := uintptr(unsafe.Pointer(c.Context()))
	e.statesMu.RLock()
	st := e.states[key]
	e.statesMu.RUnlock()
	return st
}

func (e *Engine) addModule(m *Module) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("%w: engine", ErrClosed)
	}
	e.modules[m] = struct{}{}
	return nil
}

func (e *Engine) removeModule(m *Module) {
	e.mu.Lock()
	delete(e.modules, m)
	e.mu.Unlock()
}

func (e *Engine) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}
