// Package client is the Go client of the palyra-host HTTP JSON API
// (host/daemon). The palyra CLI uses it when given --url, so the CLI and the
// daemon act on the same state through the same code paths.
//
// Errors the daemon returns are *Error values: they carry the stable code,
// and unwrap to the one sentinel of that code (errcode.Lookup) when the
// package that defines it is linked, so a remote skill_quarantined is
// errors.Is(err, host.ErrQuarantined) as a local one is. FromGRPC turns a
// failed call of the daemon's gRPC API into the same *Error.
package client
