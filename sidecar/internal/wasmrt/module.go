package wasmrt

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v25"
)

// Defaults of Limits and ModuleConfig. The limits follow Palyra's
// RuntimeLimits where it has one.
const (
	DefaultFuel          = 10_000_000
	DefaultMemoryBytes   = 64 << 20
	DefaultTableElements = 100_000
	DefaultInstances     = 1
	DefaultTables        = 4
	DefaultMemories      = 1
	DefaultInitFuel      = 200_000_000
	DefaultInitTimeout   = 5 * time.Second
	MaxPreparedInstances = 16
	DefaultPrepareIdle   = 10 * time.Second
)

// Limits bound one call. A zero field means "no opinion": a Module's
// ModuleConfig.Limits falls back to the package defaults, and an
// Invocation's Limits fall back to its Module's. An Invocation can only
// tighten its Module's limits: each effective limit is the smaller non-zero
// value.
type Limits struct {
	// Fuel is the wasmtime fuel budget of the entrypoint call
	// (_initialize has its own, ModuleConfig.InitFuel). Default 10,000,000.
	Fuel uint64
	// MemoryBytes caps each linear memory. memory.grow past it returns -1;
	// a declared minimum over it fails the call with ErrMemoryLimit.
	// Default 64 MiB.
	MemoryBytes int64
	// TableElements caps each table. Default 100,000.
	TableElements int64
	// Instances, Tables and Memories cap the number of each in the call's
	// store. Defaults 1, 4 and 1.
	Instances, Tables, Memories int64
	// Timeout is the wall-clock budget of the call, from the manifest
	// quota and the operator's policy. The effective deadline is the
	// earliest of this, Invocation.Timeout and the ctx deadline (or
	// Config.DefaultTimeout when none is set).
	Timeout time.Duration
	// MaxCapabilityCalls caps capability-call per invocation; past it
	// capability-call returns -7. Default 256 (sdk/ABI.md §5).
	MaxCapabilityCalls int
}

var defaultLimits = Limits{
	Fuel:               DefaultFuel,
	MemoryBytes:        DefaultMemoryBytes,
	TableElements:      DefaultTableElements,
	Instances:          DefaultInstances,
	Tables:             DefaultTables,
	Memories:           DefaultMemories,
	MaxCapabilityCalls: DefaultMaxCapabilityCalls,
}

func (l Limits) validate() error {
	if l.MemoryBytes < 0 || l.TableElements < 0 || l.Instances < 0 || l.Tables < 0 ||
		l.Memories < 0 || l.Timeout < 0 || l.MaxCapabilityCalls < 0 {
		return fmt.Errorf("%w: negative limit in %+v", ErrInvalidConfig, l)
	}
	return nil
}

func minNonZero[T int | int64 | uint64 | time.Duration](a, b T) T {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

// tighten returns l with every zero field taken from base and every other
// field the smaller of the two.
func (l Limits) tighten(base Limits) Limits {
	return Limits{
		Fuel:               minNonZero(l.Fuel, base.Fuel),
		MemoryBytes:        minNonZero(l.MemoryBytes, base.MemoryBytes),
		TableElements:      minNonZero(l.TableElements, base.TableElements),
		Instances:          minNonZero(l.Instances, base.Instances),
		Tables:             minNonZero(l.Tables, base.Tables),
		Memories:           minNonZero(l.Memories, base.Memories),
		Timeout:            minNonZero(l.Timeout, base.Timeout),
		MaxCapabilityCalls: minNonZero(l.MaxCapabilityCalls, base.MaxCapabilityCalls),
	}
}

// storeLimits are the limits fixed when a store is created; a prepared
// instance serves a call only when they are equal.
type storeLimits struct {
	memory, tableElements, instances, tables, memories int64
}

// withDefaults returns l with every zero field taken from base.
func (l Limits) withDefaults(base Limits) Limits {
	return Limits{
		Fuel:               cmp.Or(l.Fuel, base.Fuel),
		MemoryBytes:        cmp.Or(l.MemoryBytes, base.MemoryBytes),
		TableElements:      cmp.Or(l.TableElements, base.TableElements),
		Instances:          cmp.Or(l.Instances, base.Instances),
		Tables:             cmp.Or(l.Tables, base.Tables),
		Memories:           cmp.Or(l.Memories, base.Memories),
		Timeout:            cmp.Or(l.Timeout, base.Timeout),
		MaxCapabilityCalls: cmp.Or(l.MaxCapabilityCalls, base.MaxCapabilityCalls),
	}
}

func (l Limits) store() storeLimits {
	return storeLimits{l.MemoryBytes, l.TableElements, l.Instances, l.Tables, l.Memories}
}

// ModuleConfig configures a Module.
type ModuleConfig struct {
	// Entrypoint is operator.plugin.default_entrypoint from skill.toml.
	// Empty selects palyra_plugin_main, else run (sdk/ABI.md §1).
	Entrypoint string

	// Limits are the module's call limits (manifest quotas ∩ policy);
	// zero fields take the package defaults.
	Limits Limits

	// PreparedInstances is the most fresh, instantiated and initialized
	// instances the module keeps ready, so that a call does not pay for
	// instantiation and _initialize. 0 turns preparation off; at most
	// MaxPreparedInstances. Memory held: up to this many times the guest's
	// memory after _initialize (about 2.3 MiB for a Go guest).
	//
	// The pool is sized by the calls: after Load one instance is prepared
	// (the first call's); each call that finds the pool empty raises the
	// target by one, and so does a call rate that would wake the preparer
	// more often than once every refillGap (1 ms), up to PreparedInstances;
	// the rate's share falls again as the calls slow down, and after
	// PrepareIdle without a call the target falls back to
	// IdlePreparedInstances. The preparer is woken once the pool is down
	// to a quarter of its target, and then refills it in one go.
	PreparedInstances int

	// IdlePreparedInstances is the pool's target after PrepareIdle without
	// a call: 0 keeps one instance, a negative value none (the next call
	// then instantiates its own). At most PreparedInstances.
	IdlePreparedInstances int

	// PrepareIdle is how long without a call shrinks the pool to
	// IdlePreparedInstances. Default DefaultPrepareIdle (10 s); negative
	// never shrinks it.
	PrepareIdle time.Duration

	// InitFuel is the fuel budget of instantiation and _initialize,
	// separate from the call's Limits.Fuel so that a call is charged the
	// same with or without preparation. Default 200,000,000 (a Go
	// guest's runtime init takes about 540,000).
	InitFuel uint64

	// InitTimeout bounds instantiation and _initialize. For a call without
	// a prepared instance it is further bounded by the call's deadline.
	// Default 5 s.
	InitTimeout time.Duration
}

// Module is a compiled skill module. It runs each Invoke in a fresh store
// and instance. A Module is safe for concurrent use; Close ends it.
type Module struct {
	e       *Engine
	wt      *wasmtime.Module
	sha     [32]byte
	cfg     ModuleConfig
	limits  Limits // cfg.Limits with defaults
	entry   string
	legacy  bool // a Palyra module: no palyra:skills/host@1 import
	hasInit bool
	cache   CacheInfo

	mu       sync.RWMutex
	closed   bool
	inflight sync.WaitGroup
	once     sync.Once

	// Prepared instances. The preparer goroutine is the only producer.
	pool       chan *instance // capacity cfg.PreparedInstances
	trash      chan *instance // used instances the preparer closes off the call path
	refill     chan struct{}
	want       atomic.Int32 // the calls' share of the pool's target, [idleWant, cap(pool)]
	batch      atomic.Int32 // the call rate's share (prepareLoop's), [0, cap(pool)]
	wakes      atomic.Int64 // refill wakes of the preparer, for tests
	idleWant   int32
	lastCall   atomic.Int64 // unix nanoseconds of the last call's start
	stop       chan struct{}
	prepCtx    context.Context
	prepCancel context.CancelFunc
	prepDone   sync.WaitGroup
	targetMu   sync.Mutex
	target     storeLimits
	prepFails  atomic.Int32

	// grants are the canonical grants of the last call and their JSON
	// (input.go): calls nearly always bring the same.
	grants atomic.Pointer[grantsDoc]
}

// maxPrepFailures consecutive preparation failures stop preparation until
// a call initializes an instance successfully: a module whose _initialize
// always fails must not keep a core busy.
const maxPrepFailures = 3

// Load compiles wasm (or loads it from the engine's cache) and checks it
// against the ABI: every import must be one the host provides with the same
// signature (else ErrLinkError), and the entrypoint must exist with
// signature () -> i32 (else ErrMissingExport). The caller owns the Module
// and must Close it; Engine.Close also closes it.
func (e *Engine) Load(wasm []byte, cfg ModuleConfig) (*Module, error) {
	return e.LoadSHA256(sha256.Sum256(wasm), func() ([]byte, error) { return wasm, nil }, cfg)
}

// LoadSHA256 is Load for a caller that knows the module's sha256 and need
// not read its bytes: when the engine's cache has a verified entry for sum
// (compiled on this host from bytes that hashed to sum), the module is
// loaded from it and read is not called. Otherwise read returns the
// module's bytes; an error from read is returned as is, and bytes that do
// not hash to sum fail with ErrInvalidModule.
func (e *Engine) LoadSHA256(sum [32]byte, read func() ([]byte, error), cfg ModuleConfig) (*Module, error) {
	if e.isClosed() {
		return nil, fmt.Errorf("%w: engine", ErrClosed)
	}
	if err := cfg.Limits.validate(); err != nil {
		return nil, err
	}
	if cfg.PreparedInstances < 0 || cfg.PreparedInstances > MaxPreparedInstances {
		return nil, fmt.Errorf("%w: PreparedInstances %d outside [0, %d]", ErrInvalidConfig, cfg.PreparedInstances, MaxPreparedInstances)
	}
	if cfg.InitTimeout < 0 {
		return nil, fmt.Errorf("%w: negative InitTimeout", ErrInvalidConfig)
	}
	if cfg.InitFuel == 0 {
		cfg.InitFuel = DefaultInitFuel
	}
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = DefaultInitTimeout
	}
	if cfg.PrepareIdle == 0 {
		cfg.PrepareIdle = DefaultPrepareIdle
	}
	wt, info, err := e.compile(sum, read)
	if err != nil {
		return nil, err
	}
	m := &Module{e: e, wt: wt, sha: sum, cfg: cfg, cache: info}
	m.limits = cfg.Limits.withDefaults(defaultLimits)
	if err := m.inspect(); err != nil {
		wt.Close()
		return nil, err
	}
	m.target = m.limits.store()
	m.stop = make(chan struct{})
	m.prepCtx, m.prepCancel = context.WithCancel(context.Background())
	if err := e.addModule(m); err != nil {
		m.prepCancel()
		wt.Close()
		return nil, err
	}
	if n := cfg.PreparedInstances; n > 0 {
		m.pool = make(chan *instance, n)
		m.trash = make(chan *instance, 2*n+4)
		m.refill = make(chan struct{}, 1)
		switch {
		case cfg.IdlePreparedInstances < 0:
			m.idleWant = 0
		case cfg.IdlePreparedInstances == 0:
			m.idleWant = 1
		default:
			m.idleWant = int32(min(cfg.IdlePreparedInstances, n))
		}
		m.want.Store(1)
		m.lastCall.Store(time.Now().UnixNano())
		m.prepDone.Add(1)
		go m.prepareLoop()
	}
	return m, nil
}

// SHA256 returns the hex sha256 of the module's bytes.
func (m *Module) SHA256() string { return hex.EncodeToString(m.sha[:]) }

// Entrypoint returns the name of the export each call runs.
func (m *Module) Entrypoint() string { return m.entry }

// ReadyInstances returns how many prepared instances are waiting for a
// call now (always 0 when ModuleConfig.PreparedInstances is 0).
func (m *Module) ReadyInstances() int {
	if m.pool == nil {
		return 0
	}
	return len(m.pool)
}

// Cache reports how the module's compiled code was obtained.
func (m *Module) Cache() CacheInfo { return m.cache }

// Close stops the preparer and waits for it, waits for in-flight calls
// (bounded by their deadlines), discards prepared instances and frees the
// compiled module. It is idempotent and returns nil. After Close, Invoke
// returns ErrClosed.
func (m *Module) Close() error {
	m.once.Do(func() {
		m.mu.Lock()
		m.closed = true
		m.mu.Unlock()
		close(m.stop)
		m.prepCancel()
		m.prepDone.Wait()
		m.inflight.Wait()
		if m.pool != nil {
			drain(m.pool)
			drain(m.trash)
		}
		m.e.removeModule(m)
		m.wt.Close()
	})
	return nil
}

func drain(c chan *instance) {
	for {
		select {
		case inst := <-c:
			inst.discard()
		default:
			return
		}
	}
}

// retire disposes of an instance that served its call. With a preparer,
// closing the store (about as costly as the call itself) happens on the
// preparer's goroutine, after Invoke has returned.
func (m *Module) retire(inst *instance) {
	if m.trash != nil {
		select {
		case m.trash <- inst:
			return
		default:
		}
	}
	inst.discard()
}

// enter registers an in-flight call; the caller must call m.inflight.Done.
func (m *Module) enter() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return fmt.Errorf("%w: module", ErrClosed)
	}
	m.inflight.Add(1)
	return nil
}

func kindsEqual(a []*wasmtime.ValType, b []wasmtime.ValKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind() != b[i] {
			return false
		}
	}
	return true
}

func sigString(params, results []*wasmtime.ValType) string {
	f := func(ts []*wasmtime.ValType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = t.Kind().String()
		}
		return "(" + strings.Join(s, ", ") + ")"
	}
	return f(params) + " -> " + f(results)
}

// inspect checks imports and exports and picks the entrypoint.
func (m *Module) inspect() error {
	usesMemory, importsHost := false, false
	for _, imp := range m.wt.Imports() {
		name := ""
		if n := imp.Name(); n != nil {
			name = *n
		}
		where := fmt.Sprintf("%q %q", imp.Module(), name)
		hf := hostFuncIndex[[2]string{imp.Module(), name}]
		if hf == nil {
			return fmt.Errorf("%w: import %s is not provided by the host", ErrLinkError, where)
		}
		ft := imp.Type().FuncType()
		if ft == nil {
			return fmt.Errorf("%w: import %s must be a function", ErrLinkError, where)
		}
		if !kindsEqual(ft.Params(), hf.params) || !kindsEqual(ft.Results(), hf.results) {
			return fmt.Errorf("%w: import %s has signature %s, the host provides %s", ErrLinkError, where,
				sigString(ft.Params(), ft.Results()), sigString(valTypes(hf.params), valTypes(hf.results)))
		}
		usesMemory = usesMemory || hf.usesMemory
		importsHost = importsHost || imp.Module() == ModuleHost
	}
	exports := map[string]*wasmtime.ExternType{}
	for _, ex := range m.wt.Exports() {
		exports[ex.Name()] = ex.Type()
	}
	isFunc := func(name string, results ...wasmtime.ValKind) (exported, ok bool) {
		t, found := exports[name]
		if !found {
			return false, false
		}
		ft := t.FuncType()
		return true, ft != nil && len(ft.Params()) == 0 && kindsEqual(ft.Results(), results)
	}
	switch {
	case m.cfg.Entrypoint != "":
		m.entry = m.cfg.Entrypoint
	case exports["palyra_plugin_main"] != nil:
		m.entry = "palyra_plugin_main"
	default:
		m.entry = "run"
	}
	exported, ok := isFunc(m.entry, wasmtime.KindI32)
	if !exported {
		return fmt.Errorf("%w: entrypoint %q is not exported", ErrMissingExport, m.entry)
	}
	if !ok {
		return fmt.Errorf("%w: entrypoint %q is not a function () -> i32", ErrMissingExport, m.entry)
	}
	if exported, ok := isFunc("_initialize"); exported {
		if !ok {
			return fmt.Errorf("%w: _initialize is not a function () -> ()", ErrMissingExport)
		}
		m.hasInit = true
	}
	if usesMemory {
		if t, ok := exports["memory"]; !ok || t.MemoryType() == nil {
			return fmt.Errorf("%w: the module imports pointer-taking host functions but exports no memory named \"memory\"", ErrMissingExport)
		}
	}
	m.legacy = !importsHost
	return nil
}

// instance is one fresh store + instance, instantiated and initialized,
// serving at most one call.
type instance struct {
	e        *Engine
	store    *wasmtime.Store
	st       *instState
	entry    *wasmtime.Func
	limits   storeLimits
	initFuel uint64 // fuel used by instantiation and _initialize
	prepared bool
}

func (inst *instance) discard() {
	inst.e.unregister(inst.store)
	inst.store.Close()
}

// newInstance creates a store with limits, instantiates the module and runs
// _initialize, all under InitFuel and an epoch deadline set before any guest
// code runs. On error the returned instance is already discarded; only its
// state (logs) may be read.
func (m *Module) newInstance(ctx context.Context, limits storeLimits, deadline time.Time, ctxDeadline bool) (inst *instance, err error) {
	store := wasmtime.NewStore(m.e.wt)
	store.Limiter(limits.memory, limits.tableElements, limits.instances, limits.tables, limits.memories)
	st := &instState{e: m.e, ctx: ctx, deadline: deadline, ctxDeadline: ctxDeadline}
	m.e.register(store, st)
	inst = &instance{e: m.e, store: store, st: st, limits: limits}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("runtime: host function panicked during initialization: %v", p)
		}
		if left, ferr := store.GetFuel(); ferr == nil && left <= m.cfg.InitFuel {
			inst.initFuel = m.cfg.InitFuel - left
		}
		if err != nil {
			// The instance is returned, discarded, so that the caller can
			// still report what _initialize logged.
			inst.discard()
		}
	}()
	if err := store.SetFuel(m.cfg.InitFuel); err != nil {
		return inst, fmt.Errorf("runtime: set fuel: %w", err)
	}
	store.SetEpochDeadline(m.e.deadlineTicks(time.Until(deadline)))
	m.e.acquire()
	defer m.e.release()
	wi, err := m.e.linker.Instantiate(store, m.wt)
	if err != nil {
		return inst, classify(err, st, "instantiation")
	}
	if ex := wi.GetExport(store, "memory"); ex != nil {
		if mem := ex.Memory(); mem != nil {
			st.mem = mem
		}
	}
	inst.entry = wi.GetFunc(store, m.entry)
	if inst.entry == nil { // checked by inspect; fail closed anyway
		return inst, fmt.Errorf("%w: entrypoint %q", ErrMissingExport, m.entry)
	}
	if m.hasInit {
		if _, err := wi.GetFunc(store, "_initialize").Call(store); err != nil {
			switch {
			case st.exited && st.exitCode == 0:
				// The instance cannot serve a call after exiting.
				return inst, &TrapError{Code: "proc_exit", Message: "_initialize called proc_exit(0)"}
			case st.exited:
				return inst, &ToolError{ExitCode: st.exitCode, Code: "tool_error",
					Message: fmt.Sprintf("_initialize called proc_exit(%d)", st.exitCode)}
			}
			return inst, classify(err, st, "_initialize")
		}
	}
	return inst, nil
}

// take returns a prepared instance whose store limits equal limits, or nil.
// Prepared instances with other limits are discarded and the preparer is
// retargeted to the limits calls now use. A call that finds the pool empty
// raises its target by one (calls come faster than the preparer refills).
func (m *Module) take(limits storeLimits) *instance {
	if m.pool == nil {
		return nil
	}
	m.lastCall.Store(time.Now().UnixNano())
	for {
		select {
		case inst := <-m.pool:
			if inst.limits == limits {
				return inst
			}
			m.retire(inst)
			m.targetMu.Lock()
			m.target = limits
			m.targetMu.Unlock()
		default:
			m.grow()
			return nil
		}
	}
}

// grow raises the pool's target by one, up to its capacity.
func (m *Module) grow() {
	for {
		w := m.want.Load()
		if int(w) >= cap(m.pool) || m.want.CompareAndSwap(w, w+1) {
			return
		}
	}
}

// PreparedTarget returns how many prepared instances the module currently
// aims to keep (0 when ModuleConfig.PreparedInstances is 0).
func (m *Module) PreparedTarget() int {
	if m.pool == nil {
		return 0
	}
	return m.poolTarget()
}

// poolTarget is the pool's target: the calls' share (want) plus the call
// rate's (batch), at most the pool's capacity.
func (m *Module) poolTarget() int {
	return min(int(m.want.Load())+int(m.batch.Load()), cap(m.pool))
}

// refillGap is how often, at most, the preparer aims to be woken while
// calls come steadily. A wake hands the preparer's goroutine to its
// locked, low-priority thread and back (several futex calls and context
// switches in both directions, about as much CPU as preparing a small
// instance), so each wake should serve a batch of calls: as long as wakes
// come closer together than this, the pool's target grows by one per
// wake, and the batch with it (the preparer is woken only once the pool
// is down to a quarter of its target). Wakes more than refillShrinkGaps
// times this apart shrink it again, one per wake. The batch grows about
// as the call rate times refillGap.
const (
	refillGap        = time.Millisecond
	refillShrinkGaps = 4
)

// Refill wakes the module's preparer to replace the prepared instances
// calls used and close their stores, once the pool is down to a quarter
// of its target (so that one wake serves a batch of calls). Invoke does it
// itself unless the Invocation set DeferRefill; Refill is for the caller
// that did, after it has sent the reply. It never blocks, and it is a
// no-op for a module that keeps no prepared instances.
func (m *Module) Refill() {
	if m.pool != nil && len(m.pool) <= m.poolTarget()/4 {
		m.signalRefill()
	}
}

// adjustBatch applies the call rate's part of the pool's sizing (see
// refillGap) at a refill wake at now, the previous one having been at
// last (zero for the first).
func (m *Module) adjustBatch(now, last time.Time) {
	if last.IsZero() {
		return
	}
	switch gap := now.Sub(last); {
	case gap < refillGap:
		if m.poolTarget() < cap(m.pool) {
			m.batch.Add(1)
		}
	case gap > refillShrinkGaps*refillGap:
		if m.batch.Load() > 0 {
			m.batch.Add(-1)
		}
	}
}

func (m *Module) signalRefill() {
	select {
	case m.refill <- struct{}{}:
	default:
	}
}

// prepareHook, when set (by tests, before Load), runs on the preparer's
// goroutine before each preparation: a test blocks it to hold preparation
// back while calls run.
var prepareHook func()

// prepareLoop keeps the pool at its target and closes retired instances.
// It is owned by the Module and stopped by Close. It is woken after a call
// that leaves the pool at its low-water mark (Refill), so that it works
// between calls rather than competing with them, a batch at a time.
// Refilling comes first (a call may come any time), then closing used
// stores, then shrinking the pool after PrepareIdle without a call.
func (m *Module) prepareLoop() {
	defer m.prepDone.Done()
	backgroundThread()
	var idle *time.Timer
	var idleC <-chan time.Time
	var lastWake time.Time
	defer func() {
		if idle != nil {
			idle.Stop()
		}
	}()
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		if len(m.pool) < m.poolTarget() && m.prepFails.Load() < maxPrepFailures {
			if !m.prepareOne() {
				return
			}
			continue
		}
		select {
		case inst := <-m.trash:
			inst.discard()
			continue
		default:
		}
		if len(m.pool) > m.poolTarget() {
			select {
			case inst := <-m.pool:
				inst.discard()
			default:
			}
			continue
		}
		if m.cfg.PrepareIdle > 0 && m.poolTarget() > int(m.idleWant) && idleC == nil {
			if idle == nil {
				idle = time.NewTimer(m.cfg.PrepareIdle)
			} else {
				idle.Reset(m.cfg.PrepareIdle)
			}
			idleC = idle.C
		}
		select {
		case <-m.stop:
			return
		case <-m.refill:
			now := time.Now()
			m.adjustBatch(now, lastWake)
			lastWake = now
			m.wakes.Add(1)
		case <-idleC:
			idleC = nil
			if since := time.Since(time.Unix(0, m.lastCall.Load())); since >= m.cfg.PrepareIdle {
				m.want.Store(m.idleWant)
				m.batch.Store(0)
			}
		}
	}
}

// prepareOne prepares one instance into the pool. It returns false when
// the module is closing.
func (m *Module) prepareOne() bool {
	if prepareHook != nil {
		prepareHook()
	}
	m.targetMu.Lock()
	target := m.target
	m.targetMu.Unlock()
	inst, err := m.newInstance(m.prepCtx, target, time.Now().Add(m.cfg.InitTimeout), false)
	if err != nil {
		m.prepFails.Add(1)
		return true
	}
	m.prepFails.Store(0)
	inst.prepared = true
	select {
	case m.pool <- inst:
		return true
	case <-m.stop:
		inst.discard()
		return false
	}
}
