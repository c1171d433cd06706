// Package daemon is palyra-host: the long-running service that owns a state
// directory and serves its skills to other programs.
//
// One port serves both APIs: gRPC (palyra.host.v1.HostService, HTTP/2,
// content-type application/grpc) and an HTTP JSON API with the same
// operations (list, info, install by upload, verify, audit, quarantine,
// enable, disable, remove, re-audit, call a tool, A2UI form submits, the
// callable-tool catalog, sidecar states, per-skill call summaries, hook
// bindings and firing, an event stream as server-sent events or a
// server-streaming RPC). Both are adapters over host.Service: every route
// and RPC decodes its wire, makes one call on the daemon's Service (the
// *host.Host it opened) and encodes the answer, so a call through the
// daemon passes exactly the gates of a local call, and the Go client
// (host/daemon/client) is a host.Service too. The daemon adds what is
// about serving: the token, request ids, the principal header (carried to
// the Service with host.WithPrincipal), the mapping of error codes to HTTP
// statuses and gRPC codes (HTTPStatus, GRPCCode), SSE framing, limits,
// metrics, the schedules and shutdown. The same port serves the active
// skills' tools over MCP's streamable HTTP at /mcp (host/mcpserver over
// the same Service; mcp.go) and, on every path outside the API, the web
// console (host/console), whose static files are public while its API
// calls carry the token. On a plaintext port a connection whose first
// HTTP/2 request is gRPC is served by the gRPC server's own transport
// (cheaper per call than gRPC under net/http); the rest, and every TLS
// connection, go through net/http (demux.go).
//
// Routes (each one Service verb): GET /v1/skills (List), POST /v1/skills
// (Install; the artifact as body, allow_tofu, force, accept_capabilities
// and repeatable trusted_publisher=PUBLISHER=HEX as query), GET and DELETE
// /v1/skills/{id} (Info, Remove), POST /v1/skills/{id}/verify, /audit,
// /quarantine, /enable, /disable, GET /v1/skills/{id}/metrics
// (SkillMetrics), POST /v1/skills/{id}/tools/{tool}/call (Call), POST
// /v1/a2ui/{doc}/submit (SubmitForm), POST /v1/dev/run (RunInline; the
// module as base64 in a JSON body, refused unless the profile sets [dev]
// allow_inline = true), POST /v1/reaudit, PUT /v1/feed (UpdateDenyFeed;
// the signed feed as the body, repeatable trusted_publisher=ISSUER=HEX as
// query), GET /v1/feed (DenyFeed), GET /v1/tools
// (Tools), GET /v1/sidecars (Sidecars), GET /v1/cluster (Cluster),
// GET/POST /v1/hooks, POST
// /v1/hooks/{id}/enable|disable, DELETE /v1/hooks/{id}, POST
// /v1/hooks/fire, and GET /v1/events (Events). Palyra's admin routes POST
// /admin/v1/skills/{id}/quarantine and /enable (which needs override:
// true) are kept for Palyra's CLI.
//
// The routes are declared once, in the table of routes.go, each with its
// OpenAPI facts; the mux serves the table and GET /v1/openapi.json serves
// the OpenAPI 3.1 document generated from it, its request and response
// schemas (JSON Schema 2020-12) derived from the Go types on the wire. A
// test fails when a served route has no entry or an entry no route, and
// another validates real answers against the served document. A known
// path asked with another method answers 405 method_not_allowed with
// Allow; an unknown path under the API is 404 route_not_found (both only
// to a caller with the token).
//
// Errors. Every error answer is {"error": {"code", "message", "detail",
// "request_id"}, "details"}: code is the stable snake_case code (its HTTP
// status from HTTPStatus), message the sentence a person reads (from the
// code's sentence on, with its specifics: "skill not found: acme.x"),
// detail the whole error chain when it says more (where it happened:
// "install: skill not found: acme.x"; also in the log line of request_id),
// and details a result where the verb has one (a failed call's logs). An
// error without a code is "internal error", its text in detail. Values
// that are enumerations are lower-case words (a guest log record's level
// is info, not LOG_LEVEL_INFO).
//
// A2UI. The host keeps the A2UI documents tool results show (at most
// 1024, for an hour) so that a form submit is checked against the form and
// delivered to the tool that returned it; a reply that is an update
// ({"a2ui_update": ...}) is applied to that document and its patch is
// returned for the client to apply. An invalid document is refused with
// the path of the offending component.
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
// Deployment profiles. The configuration's deployment key (serve's
// --deployment) is "local" (the default: the configuration as written)
// or "hardened" (Deployment): TLS required, the sidecar hardening
// required and checked against the kernel before the host opens (the
// sidecar reports the kernel's Landlock, seccomp and no_new_privs,
// host.SidecarVersion), strict egress in the operator profile at start
// and on every SetPolicy, the anomaly quarantine on, a trust store
// without keys pinned on first use and every allow_tofu request refused
// (deployment_refused, 403), no inline modules. The Posture is reported
// by GET /readyz (without a token) and GET /v1/cluster, and checked by
// `palyra doctor` (host/doctor).
//
// Events. The inventory's journal is the one source of events: the host
// follows it (the daemon opens it with DispatchHooks) and publishes each
// event once, in journal order, to the event streams and to the hooks
// (host/hooks). Streams resume with ?after= or Last-Event-ID, and
// ?follow=false ends a stream after its replay; a stream that falls behind
// re-reads the journal rather than skipping events. Hook outcomes
// (hook:dispatched, hook:failed) join the stream without a journal id. The
// hooks bound to gateway:startup run once the daemon serves.
//
// Schedules. The re-audit runs every reaudit_interval (default 6 h, 0
// disables) and quarantines what no longer verifies, audits or fits the
// policy; the anomaly policy (host/anomaly) quarantines a skill whose calls
// keep failing with fuel exhaustion, traps, timeouts or denials.
//
// Shutdown. On SIGTERM/SIGINT (cmd/palyra-host cancels Serve's context) the
// daemon stops accepting, ends event streams, lets in-flight calls finish
// up to shutdown_timeout (then cancels them), stops hooks, schedules and
// every sidecar, removes daemon.json and releases the lock.
package daemon
