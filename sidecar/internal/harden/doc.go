// Package harden is the self-hardening a sidecar process applies to itself
// before it reads a module's bytes or runs guest code: the second wall
// around untrusted code, for the day a guest escapes wasmtime.
//
// On Linux, Apply does, in this order and for every thread of the process
// (the Go runtime and wasmtime's threads alike):
//
//   - rlimits: RLIMIT_CORE 0 (no core dumps of a process that may hold
//     guest data), RLIMIT_NOFILE and RLIMIT_NPROC bounded, RLIMIT_DATA
//     bounded when the Config asks (RLIMIT_AS is never set: wasmtime
//     reserves several GiB of address space per linear memory, so a cap on
//     it would refuse ordinary skills);
//   - capabilities: every capability dropped from the bounding and ambient
//     sets, then the effective, permitted and inheritable sets cleared
//     (through psx, so that each thread's sets are cleared, not only the
//     calling one's);
//   - no_new_privs.
//
// A psx broadcast costs milliseconds on a busy machine, so the
// palyra-sidecar binary does the capability steps and no_new_privs in a
// constructor, before the Go runtime starts a thread
// (cmd/palyra-sidecar/prestart_linux.go); Apply reads every thread's sets
// from /proc/self/task and skips a broadcast only when every thread shows
// its step done. Then:
//
//   - Landlock (best effort up to ABI 7): read-only the paths of
//     Config.ReadOnly, read-write only the directories of Config.ReadWrite,
//     nothing else of the file system, no TCP bind or connect (ABI >= 4),
//     no signals or abstract unix sockets outside the domain (ABI >= 6);
//   - seccomp-bpf with TSYNC: the allowlist of syscalls.go; every other
//     syscall fails with EPERM (clone3 with ENOSYS so that the C library
//     falls back to clone, whose flags the filter can read), so a denied
//     call fails cleanly instead of killing the process.
//
// The Report is read back from the kernel (/proc/self/status through a
// descriptor opened before Landlock applies), not assumed.
//
// On other systems Apply applies nothing and reports so (Supported false):
// the sidecar then runs with the operating system's process isolation only,
// which the report, the supervisor's sidecar state and the metrics say.
package harden
