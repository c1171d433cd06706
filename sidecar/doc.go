// Package sidecar is the per-skill sidecar process of Palyra-Go: it serves
// the palyra.sidecar.v1 contract (proto/palyra/sidecar/v1) over
// hashicorp/go-plugin with one runtime.Engine, and forwards every capability
// operation of its guest to the supervisor's broker over go-plugin's
// GRPCBroker. It holds handles only: no secret values, no sockets, no host
// files besides the module it is told to load and its compile cache.
//
// cmd/palyra-sidecar is just
//
//	func main() { sidecar.Main() }
//
// and an application can make its own binary act as the sidecar the same way
// (call Main, or Run with its own ServeConfig, when the process was started
// as a sidecar). The supervisor side lives in package sidecar/sidecarplugin, which
// does not link wasmtime.
//
// Build such a binary as the project builds palyra-sidecar, with the
// linker dropping the parts of wasmtime's static library nothing calls
// (a binary a quarter smaller, and less of it resident in an idle
// sidecar; RATIONALE.md):
//
//	go build -ldflags=-extldflags=-Wl,--gc-sections ./cmd/palyra-sidecar
//
// # Modes
//
// With no arguments (or only hardening flags) the process serves go-plugin
// over mutual TLS: with Ed25519 keys pinned at both ends when the supervisor
// passes its key in sidecarplugin.ClientKeyEnv (ServeConfig.TLSClientKey),
// else AutoMTLS, negotiated by go-plugin when its client asks for it. With
// `precompile --wasm FILE --cache-dir DIR [--sha256 HEX] [--cpu-seconds N]
// [--memory-bytes N]` it compiles the module into the runtime's precompiled
// cache, prints a PrecompileResult as JSON and exits: the supervisor runs this
// at install time, so compiling untrusted code never happens in the supervisor
// process. --cpu-seconds and --memory-bytes are the compile budget: before it
// reads the module the process sets RLIMIT_CPU (soft = hard, so the kernel
// kills it with SIGKILL when the time is spent) and RLIMIT_DATA (an
// allocation past it fails and wasmtime aborts), which the supervisor turns
// into compile_budget_exceeded.
//
// # Hardening
//
// Both modes first harden the process (package sidecar/internal/harden):
// rlimits, every capability dropped, no_new_privs, Landlock limited to the
// module, the compile cache and the private dir, and a seccomp allowlist,
// on every thread, before any module byte is read. The flags saying what
// to allow are sidecarplugin.HardenSpec's, built by the supervisor; with
// --harden=false nothing is applied and the report says so. The outcome,
// read back from the kernel, is in every LoadSkillResponse (hardening) and
// in PrecompileResult.Hardening. A process whose hardening fails exits with
// status 1 without serving. A build with the palyraprobe tag adds the
// escape probe's `probe` command (see internal/escapeprobe).
//
// # Serving
//
// LoadSkill reads the module (preferably from the installed module's path),
// verifies its sha256 against the request before using the bytes, compiles
// the tools' JSON Schemas, creates the engine with the request's cache dir and
// loads the module with its limits and prepared instances; a sidecar serves
// one skill. Invoke maps a request to a runtime.Invocation and the result back
// (output, tool error, trap code, stats, logs and a stable error code). Stop
// closes the module and engine, waiting for in-flight calls, answers, and then
// ends the process; go-plugin's Kill works as well.
//
// # Logs
//
// Logs go through go-hclog as JSON on stderr, which go-plugin forwards to the
// supervisor's logger. Records carry skill_id (and tool_id, invocation_id
// for calls), never tool input or output.
package sidecar
