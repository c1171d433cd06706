// Package errcode gives every failure in Palyra-Go a stable snake_case code.
//
// Packages declare their sentinels with [New]; a sentinel is an ordinary
// error value that callers compare with errors.Is, and it also carries the
// code that the CLI, the daemon API and MCP report to users. Errors built on
// top of a sentinel (wrapped with %w, or typed errors whose Unwrap returns
// the sentinel) keep its code, so [Of] finds the code of any error chain
// without string matching.
//
// Codes are part of the public contract: once published, a code is never
// renamed or reused for a different failure.
//
// # One sentinel per code
//
// Every code has exactly one sentinel in the whole program, so errors.Is
// against it gives the same answer wherever the error came from: a local
// package, a sidecar over gRPC (sidecarplugin.Error) or the daemon over HTTP
// or gRPC (client.Error), whose Unwrap returns the sentinel [Lookup] finds
// for their code. [New] panics on a code that is already registered. A
// package that reports a failure another package owns re-exports that
// sentinel instead of declaring its own:
//
//	ErrNotFound = inventory.ErrNotFound // code skill_not_found
//
// The sentinel lives in the lowest package that needs it. A code needed by
// packages that do not import each other (the supervisor and the sidecar's
// runtime both time a call out) is declared here, in shared.go, and
// re-exported by each of them.
//
// # Messages
//
// A sentinel's message states the failure and nothing else: a short phrase
// that names its subject ("inventory database is busy", "invalid hook
// binding", "call timed out"), with no "pkg: " prefix and no trailing
// punctuation. Where it happened is context, added by whoever wraps it:
//
//	fmt.Errorf("install %s %s: %w", id, version, ErrLocked)
//
// A sentinel is returned by several packages through their re-exports, so a
// package prefix in it would name the wrong package half the time. A test
// of this package reads every errcode.New of the repository and fails on a
// message that breaks the rule; New itself does not check messages, so
// that no binary pays for the check at every start (the sidecar starts
// often).
package errcode
