// Package supervisor runs skills in palyra-sidecar processes, one sidecar
// per (skill, version), over hashicorp/go-plugin gRPC.
//
// A sidecar is started lazily on the first call of its skill version:
// an exec.Cmd with Pdeathsig SIGKILL (no sidecar outlives a supervisor that
// is SIGKILLed) and its own process group, a private 0700 go-plugin socket
// directory (PLUGIN_UNIX_SOCKET_DIR) removed when the sidecar ends, AutoMTLS,
// gRPC only. The module is then loaded with LoadSkill.
//
// Calls are bounded per sidecar (Config.MaxConcurrentCalls running, at most
// Config.QueueDepth waiting; beyond that ErrOverloaded). Each call has a
// deadline of its effective timeout plus Config.CallGrace: a sidecar that
// has not answered by then is SIGKILLed (its whole process group) by the
// supervisor and the call fails with ErrTimeout. A sidecar that dies fails
// only its own in-flight calls, with ErrSidecarCrashed; the next call
// restarts it after an exponential backoff, and a skill version that
// crashes Config.CrashLoopThreshold times within Config.CrashLoopWindow is
// crashlooping: its calls fail fast with ErrCrashLooping until Reset.
// Idle sidecars are stopped after Config.IdleTimeout by a reaper goroutine.
//
// Close stops every sidecar (graceful Stop, then Kill), removes their
// socket directories and waits for every goroutine the supervisor owns.
//
// The package is pure Go: it never imports sidecar/internal/wasmrt or wasmtime.
package supervisor
