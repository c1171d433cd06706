// Package wasmrt is the WebAssembly sandbox of a Palyra-Go sidecar: it runs
// a skill's core WebAssembly module with wasmtime, one fresh instance per
// call, behind the host ABI of sdk/ABI.md (palyra.skills.abi.v1).
//
// # Role
//
// A skill is isolated twice. The supervisor runs each skill in its own
// sidecar OS process (crash isolation, a process it can kill), and inside
// that process this package runs the skill's code in a WebAssembly sandbox
// with fuel, wall-clock, memory and table limits and no ambient authority:
// the guest sees only the imports of sdk/ABI.md §2, and every capability
// (HTTP, secrets, storage, channels) is a request handed to a [Broker],
// which in the sidecar forwards it to the supervisor. This is the only
// package of the repository that links wasmtime-go.
//
// # Use
//
// A sidecar creates one [Engine], loads its modules, and invokes them:
//
//	e, err := runtime.NewEngine(runtime.Config{CacheDir: dir})
//	...
//	defer e.Close()
//	m, err := e.Load(wasm, runtime.ModuleConfig{PreparedInstances: 2, Limits: limits})
//	...
//	res, err := m.Invoke(ctx, runtime.Invocation{ToolID: "acme.echo", Input: in, Grants: g, Broker: b})
//
// At install time the supervisor runs [Precompile] in a sidecar, so that a
// later [Engine.Load] maps verified machine code from the cache instead of
// compiling: for a Go guest, a few ms (mostly checking the MAC of its
// 14 MB of compiled code, an AES-GMAC) against about a second or more.
// [Engine.LoadSHA256] does not even read the module on a cache hit.
//
// # Limits
//
// Every call runs in a new wasmtime store with a store limiter
// ([Limits].MemoryBytes per memory, TableElements per table, and counts of
// instances, tables and memories), a fuel budget ([Limits].Fuel) and an
// epoch deadline. The deadline is the earliest of the ctx deadline,
// [Invocation].Timeout and [Limits].Timeout (or [Config].DefaultTimeout): a
// call always has one. It is set before any guest code runs, including the
// start function and _initialize, and enforced by the engine's epoch ticker
// (granularity [Config].EpochTick). memory.grow past the limit returns -1
// as WebAssembly specifies; a declared minimum over it, or a Go guest that
// runs out of memory, ends the call with [ErrMemoryLimit]. The ABI's own caps
// apply too: input document, output buffer, request and response sizes, log
// volume and the number of capability calls.
//
// # Context
//
// The ctx of [Module.Invoke] governs that call only: its deadline bounds the
// call as above, and its cancellation is observed at every host function
// (including while poll_oneoff sleeps and while the Broker works, which
// receives a ctx carrying the call's deadline). Guest code that makes no
// host calls runs until its deadline or fuel ends it. Load and Close take
// no ctx: Load compiles (bounded by the module's size) and Close waits for
// in-flight calls, which are bounded by their deadlines.
//
// # Prepared instances
//
// A Go guest's _initialize (its runtime start-up) costs far more than a
// typical call. With [ModuleConfig].PreparedInstances > 0 a module keeps up
// to that many instances instantiated and initialized ahead of calls,
// prepared by a goroutine the module owns. The pool is sized by the calls:
// one instance after Load (the first call's, so that it is not delayed by
// the preparation of others), one more for each call that finds the pool
// empty, one more for each wake of the preparer that comes within a
// millisecond of the previous one (and one less for each that comes over
// 4 ms after it), and back to [ModuleConfig].IdlePreparedInstances after
// [ModuleConfig].PrepareIdle without a call (which also returns the idle
// instances' memory). The preparer is woken once the pool is down to a
// quarter of its target, so that at a high call rate one wake (a hand-off
// to its low-priority thread and back) serves a batch of calls. It refills
// before it closes used stores.
// Load does not wait for them, and no call
// ever waits for the preparer: a call that finds no prepared instance (the
// first calls after Load, a burst) instantiates its own, so a new sidecar
// answers its first call while its spares are still being prepared
// (TestFirstCallWhilePreparing). Each serves exactly one call, then is
// discarded; nothing crosses calls. An instance prepared with other store
// limits than a call's is not used for it. _initialize runs with its own fuel
// and deadline ([ModuleConfig].InitFuel and InitTimeout) both when prepared
// and when run on the call's path, so a call is charged the same either way;
// during _initialize no invocation is bound (sdk/ABI.md §1). On Linux the
// preparer's OS thread runs at nice [PreparerNice], so that refilling the
// pool and closing used stores yield the CPU to calls in flight.
//
// # Concurrency
//
// Engine and Module are safe for concurrent use. Concurrent calls share the
// compiled code and the linker, nothing else. Host functions find their
// call's state through the store's context pointer. wasmtime-go serializes
// the lookup of host functions behind a global lock, so host-call-heavy
// guests scale less well across goroutines than pure computation.
//
// # Terminal states
//
// [Engine.Close] closes every Module it loaded, then stops the epoch ticker
// and waits for it. [Module.Close] stops its preparer and waits for it,
// waits for in-flight calls, and frees everything. Both are idempotent;
// afterwards Load and Invoke return [ErrClosed]. A call ends in exactly one
// outcome, reported by the error of Invoke ([ErrFuelExhausted], [ErrTimeout],
// [ErrMemoryLimit], [ErrTrap], [ErrToolError], [ErrInvalidInput],
// [ErrInvalidOutput], [ErrOutputTooLarge], [ErrCanceled], or nil for
// success); [Engine.Load] reports [ErrLinkError], [ErrMissingExport] and
// [ErrInvalidModule]. Every error carries a stable code for errcode.Of, and
// every call reports its fuel, peak memory and wall time in [Result].Stats.
package wasmrt
