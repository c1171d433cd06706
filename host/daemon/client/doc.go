// Package client is the Go client of the palyra-host HTTP JSON API
// (host/daemon). A *Client implements host.Service: code written against
// the Service (the palyra CLI with --url, an embedding application) runs
// the same against a local *host.Host and against a daemon, through the
// same verbs and the same gates.
//
// Who acts travels in the context, as with the local host: the principal
// host.WithPrincipal names is sent as X-Palyra-Principal; a context that
// names nobody sends the client's WithPrincipal default, and without one
// the daemon records host.DefaultPrincipal.
//
// Errors the daemon returns are *Error values: they carry the stable code,
// the readable message, the detail (the daemon's whole error chain, when
// it says more; Error returns it, else the message, as a local error reads),
// the request id (to find the daemon's log line) and the
// details the daemon sent, and it unwraps to the one sentinel of that code
// (errcode.Lookup) when the package that defines it is linked, so a remote
// skill_quarantined is errors.Is(err, host.ErrQuarantined) as a local one
// is. Results travel with errors as they do locally: a failed call or form
// submit that reached a sidecar returns its result and a *host.CallError
// carrying it (host.CallResultOf), an install refused for a capability
// escalation returns the result with the diff, a re-audit that could not
// check everything returns its report.
//
// Events follows the daemon's server-sent event stream; a followed stream
// that breaks is resumed after the last journal event it delivered. A
// request that gets no answer is ErrTransport (daemon_unreachable).
// FromGRPC turns a failed call of the daemon's gRPC API into the same
// *Error.
package client
