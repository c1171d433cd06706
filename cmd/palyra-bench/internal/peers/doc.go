// Package peers holds the baselines of benchmark scenario A: what a user
// would write instead of Palyra-Go to run a WebAssembly tool in-process. Each
// peer runs the same logic as Palyra-Go's own measurement — the palyra.echo
// tool of the echo example skill (sdk/examples/echo), a Go wasip1 reactor —
// with a fresh instance per call, behind one interface, Runner:
//
//   - NewWasmtime: wasmtime-go v25 in-process, running the echo example
//     itself (Palyra skills ABI, sdk/ABI.md). Cranelift at OptLevelSpeed,
//     no fuel, no epoch interruption; the module is compiled and the linker
//     (wasmtime's own WASI preview1 plus hand-written palyra imports) defined
//     once; each call makes a Store with an empty WASI context, instantiates,
//     calls _initialize and palyra_plugin_main.
//   - NewWazero: wazero v1.9.0 in-process with its compiler, running the same
//     module. wasi_snapshot_preview1 and the two palyra import modules are
//     host modules instantiated once; each call instantiates the compiled
//     module anonymously with _initialize as start function, calls
//     palyra_plugin_main and closes the module. The call's state reaches the
//     host functions through the call's context.
//   - NewExtism: the Extism go-sdk v1.7.1. Extism's host functions cannot see
//     a guest's memory (data moves through the Extism kernel), so it cannot
//     run the palyra guest: it runs extismguest, the same tool logic written
//     against the Extism kernel ABI (built by BuildExtismGuest). The plugin is
//     compiled once; each call creates an instance, calls echo and closes it.
//
// The palyra imports are minimal but follow sdk/ABI.md: the input document
// (§3) has abi palyra.skills.abi.v1, a per-process invocation_id, skill and
// tool palyra.echo, the input verbatim, empty grants and a deadline that is
// not enforced; every *-count is 0 and *-handle -1; capability-call is
// not_granted (-1, nothing is granted) with its error detail as the pending
// response; log records are accepted and dropped; output-write appends to a
// per-call buffer of at most 1 MiB. No code is shared with sidecar/internal/wasmrt:
// these hosts are independent. This is the one package outside
// sidecar/internal/wasmrt that links wasmtime-go: as a peer measured beside the
// host, never as a part of it (the host stays pure Go).
//
// A guest's tool error (entrypoint result non-zero, sdk/ABI.md §4; for the
// Extism guest, the error it sets) is a *ToolError carrying the guest's
// code. All runners are safe for concurrent use: per-call state lives in a
// per-call struct, and Close waits for the calls in progress.
package peers
