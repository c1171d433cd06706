// Package launch starts every child process of the host the same way: the
// serving palyra-sidecar processes (through go-plugin's RunnerFunc, see
// host/supervisor) and the `palyra-sidecar precompile` runs that compile
// untrusted modules. There is no other launcher in the host, so no child can
// be started with a laxer setup by mistake.
//
// A Child is made in two steps: New makes its private directory, then Start
// starts the process. Every child gets:
//
//   - A private directory (0700, made by New under a root the caller
//     names), the child's TMPDIR and the place for its sockets. Close
//     removes it, also when Start failed or was never called.
//   - Its own process group (Setpgid). Kill and Close SIGKILL the whole
//     group, so a process the child started dies with it.
//   - Pdeathsig SIGKILL: the child dies when the host dies, even by
//     SIGKILL. The kernel sends that signal when the OS thread that forked
//     the child ends, not the process, and Go ends a thread when a
//     goroutine locked to it exits. So Start forks from a goroutine locked
//     to its thread, and that goroutine keeps the thread until the child is
//     reaped: no other goroutine can run on the thread, so none can end it.
//   - An environment built from an allowlist, never inherited wholesale.
//
// # Environment
//
// A child's environment is, in this order (a later entry replaces an
// earlier one with the same name):
//
//  1. From the host's environment, only:
//     PATH (a shell or an embedding app's own binary acting as the sidecar
//     may need to find programs; it holds no secret);
//     TZ (log timestamps in the operator's zone);
//     GOMAXPROCS, GOGC, GOMEMLIMIT, GODEBUG, GOTRACEBACK (the Go runtime
//     settings an operator tunes the sidecars with);
//     PALYRA_SIDECAR_* (variables meant for the sidecar by name, such as
//     PALYRA_SIDECAR_CPUPROFILE_DIR).
//  2. TMPDIR, set to the child's private directory (never the host's).
//  3. Cmd.Env: variables the program itself sets for this child. For a
//     serving sidecar these are go-plugin's: the handshake cookie
//     (PALYRA_SIDECAR_PLUGIN), PLUGIN_PROTOCOL_VERSIONS, PLUGIN_MIN_PORT,
//     PLUGIN_MAX_PORT, PALYRA_SIDECAR_TLS_CLIENT_KEY (the supervisor's
//     TLS key, sidecarplugin.ClientKeyEnv) and
//     PLUGIN_UNIX_SOCKET_DIR (a directory inside the private one);
//     go-plugin adds nothing of the host's environment when SkipHostEnv is
//     set. Cmd.Env must never be copied from os.Environ.
//
// Everything else in the host's environment (PALYRA_VAULT_KEY, cloud
// credentials, tokens, HOME, which would only point a compromised child at
// ~/.aws and ~/.ssh) does not reach a child. The host's environment is the
// only one the launcher reads, and only to apply this allowlist.
//
// The package is Linux only, like the rest of the host's process handling.
package launch
