// Package daemon is palyra-host: the long-running service that owns a state
// directory and serves its skills to other programs.
//
// One port serves both APIs: gRPC (palyra.host.v1.HostService, HTTP/2,
// content-type application/grpc) and an HTTP JSON API with the same
// operations (list, info, install by upload, verify, audit, quarantine,
// enable, disable, remove, re-audit, call a tool, A2UI form submits, hook
// bindings and firing, an event stream as server-sent events or a
// server-streaming RPC). Both sit on the library (package host): a call
// through the daemon passes exactly the gates of host.Host.Call. The same
// port serves the active skills' tools over MCP's streamable HTTP at /mcp
// (host/mcpserver; mcp.go), the per-skill call summary
// (/v1/skills/{id}/metrics) and, on every path outside the API, the web
// console (host/console), whose static files are public while its API calls
// carry the token.
//
// A2UI. A tool result that is an A2UI document is validated and kept (at
// most 1024, for an hour) so that a form submit can be checked against the
// form and delivered to the tool that returned it; a reply that is an
// update ({"a2ui_update": ...}) is applied to that document, validated, and
// kept in its place, and its patch is returned for the client to apply.
//
// Safety. The daemon binds loopback unless TLS is configured (CheckListen),
// and a state directory has one daemon (an flock on daemon/daemon.lock).
// Every request but /healthz, /readyz and the gRPC health service needs the
// admin token as `Authorization: Bearer <token>` (gRPC metadata
// `authorization`), compared in constant time; the token is generated on
// first start into daemon/admin-token (0600) and re-read when `palyra-host
// token rotate` replaces it. A token anywhere else (query string, another
// header) is refused. Bodies and messages are capped (max_request_bytes,
// max_artifact_bytes) and the errors name the limit and the size seen.
// x-palyra-principal names who acts and is recorded in status changes.
//
// Events. The inventory's journal is the one source of events: a follower
// reads it (woken by the installer's in-process events, and every 500 ms
// for changes other processes make, such as the CLI working on the state
// directory) and publishes each event once, in journal order, to the event
// streams and to the hooks (host/hooks). Streams resume with ?after= or
// Last-Event-ID; a stream that falls behind re-reads the journal rather than
// skipping events. Hook outcomes (hook:dispatched, hook:failed) join the
// stream without a journal id.
//
// Schedules. The re-audit runs every reaudit_interval (default 6 h, 0
// disables) and quarantines what no longer verifies, audits or fits the
// policy; the anomaly policy (host/anomaly) quarantines a skill whose calls
// keep failing with fuel exhaustion, traps, timeouts or denials.
//
// A2UI. A tool result that is an A2UI document is validated (host/a2ui)
// before it is returned; an invalid one is refused with the path of the
// offending component. Valid documents are kept (1,024 at most, one hour)
// under a document id, so that a form submit posted back is validated
// against the form's fields and delivered to the tool that returned the
// document, as {"a2ui_submit": {document_id, surface, component_id,
// values}}.
//
// Shutdown. On SIGTERM/SIGINT (cmd/palyra-host cancels Serve's context) the
// daemon stops accepting, ends event streams, lets in-flight calls finish
// up to shutdown_timeout (then cancels them), stops hooks, schedules and
// every sidecar, removes daemon.json and releases the lock.
package daemon
