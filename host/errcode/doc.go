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
package errcode
