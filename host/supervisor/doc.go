// Package supervisor runs skills in palyra-sidecar processes, one sidecar
// per (skill, version), over hashicorp/go-plugin gRPC. It is the one owner
// of the host's child processes: the serving sidecars and the
// `palyra-sidecar precompile` runs (Precompile) that compile untrusted
// modules at install, each under a compile budget (Config.PrecompileCPUTime
// and PrecompileMemoryBytes, set as RLIMIT_CPU and RLIMIT_DATA by the child;
// exceeding either is ErrCompileBudgetExceeded, compile_budget_exceeded).
//
// Every child is started by the host's one launcher (host/internal/launch):
// an environment built from an allowlist (Go runtime settings, PATH, TZ,
// PALYRA_SIDECAR_*, go-plugin's own variables; never the host's secrets
// such as PALYRA_VAULT_KEY or cloud credentials), its own process group,
// Pdeathsig SIGKILL (no child outlives a supervisor that is SIGKILLed), and
// a private 0700 directory, its TMPDIR and the home of its sockets, removed
// when it ends or fails to start (made in Config.SocketDir: a host's
// runtime directory, host/rundir, whose leftovers after a SIGKILL the next
// host start removes). Killing a child kills its process group.
//
// A sidecar is started lazily on the first call of its skill version (or
// eagerly by Start), through go-plugin with a RunnerFunc and gRPC only,
// over mutual TLS with an Ed25519 key pinned per sidecar at each end
// (sidecarplugin.PinnedConfig, in place of go-plugin's AutoMTLS and its
// P-521 keys); every socket of both ends lives in the private directory. The
// module is then loaded with LoadSkill.
//
// Every child hardens itself before it reads a module (seccomp allowlist,
// Landlock, no capability, no_new_privs, rlimits; see RATIONALE.md,
// "Hardened sidecars"). The supervisor tells it what it may touch (the
// module, Config.CacheDir, its private directory) and its limits as flags
// (sidecarplugin.HardenSpec; Config.Hardening), may run it as Config.RunAs
// when the host is root, and keeps each sidecar's report in State.Hardening.
//
// Calls are bounded per sidecar (Config.MaxConcurrentCalls running, at most
// Config.QueueDepth waiting; beyond that ErrOverloaded). Each call has a
// deadline of its effective timeout plus Config.CallGrace: a sidecar that
// has not answered by then is SIGKILLed by the supervisor and the call
// fails with ErrTimeout. A sidecar that dies fails only its own in-flight
// calls, with ErrSidecarCrashed; the next call restarts it, at once after
// a first crash and after an exponential backoff from the second
// consecutive one (a good call resets the count), and a skill version that
// crashes Config.CrashLoopThreshold times within Config.CrashLoopWindow is
// crashlooping: its calls fail fast with ErrCrashLooping until Reset.
//
// Recovery takes neither a process start nor a module load: each running
// skill version in use (called again while its sidecar runs, started
// eagerly, or after a crash) has a standby sidecar with its module loaded
// (Config.Standby), promoted when the serving one dies, and the supervisor
// keeps a spare sidecar past its handshake with no skill yet
// (Config.SpareSidecars) for the next start of any skill. Both are made in
// the background once the skill version that started goes quiet (or a
// second after the start), so that their process starts do not delay the
// calls that waited for it. A sidecar's
// capability broker is bound to its skill at LoadSkill.
// Backoff, crash windows and idleness are measured on Config.Clock, which
// tests replace. Idle sidecars are stopped after Config.IdleTimeout by a
// reaper goroutine; a health checker kills sidecars that stop answering.
//
// Stop ends a skill version's sidecars (serving and standby) gracefully
// and returns once they are gone: the host calls it when a version is
// disabled, quarantined or removed. Close stops every sidecar (graceful
// Stop, then Kill), ends every precompile child, removes their private
// directories and waits for every goroutine the supervisor owns. An exit
// the supervisor causes (Stop, Close, an idle or replaced sidecar, a kill
// after a missed deadline) is not an error in the log: go-plugin reports
// it at info level; a sidecar that dies by itself is logged as an error.
//
// # Files
//
//   - supervisor.go: the Supervisor, its per-skill-version slots, New and
//     the state view (State, States).
//   - config.go: Config and its defaults; clock.go: the Clock.
//   - types.go: the public value types (Target, Limits, Grants, Tool,
//     CallOptions, Result, Stats, State, Status).
//   - errors.go: the sentinels, one per code.
//   - admit.go: admission and the per-sidecar queue.
//   - call.go: Call, its budget and the judgement of an invocation.
//   - process.go: sidecar start and stop (Start, Stop, the restart path:
//     spawn, then load).
//   - spare.go: the spare sidecars; standby.go: the standby per slot.
//   - runner.go: go-plugin's runner over a launched child.
//   - crash.go: crash accounting, restart backoff, crashloop, Reset.
//   - loops.go: the background loops (health checker, idle reaper).
//   - precompile.go: Precompile.
//   - close.go: Close.
//   - convert.go: conversion to and from the wire messages.
//   - broker.go: the capability broker as one sidecar sees it.
//   - harden.go: HardeningConfig, Credential (RunAs) and the Hardening
//     report; the hardening flags of each child.
//
// The package is pure Go: it never imports sidecar/internal/wasmrt or wasmtime.
package supervisor
