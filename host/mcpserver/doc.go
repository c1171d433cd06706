// Package mcpserver serves the tools of a host's active skills over the
// Model Context Protocol, with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): any MCP client (an LLM agent)
// lists them with their schemas and calls them, and every call runs
// through the host's call path: status and trust re-checked, grants and
// limits recomputed, input and output validated, in the skill's sandbox.
//
// One Server type serves both transports. It is a thin adapter over a
// host.Service, of which it uses two verbs: Tools (the catalog of tools
// that can be called now, and a generation that changes when that set may
// have) and Call (run a tool through the host's call path). A local
// *host.Host is one; the daemon passes its service and serves Handler at
// /mcp behind its bearer token; `palyra-host mcp` opens a host itself and
// runs Serve on stdin and stdout.
//
//	srv, err := mcpserver.New(mcpserver.Options{Service: h, Wake: bus})
//	err = srv.Serve(ctx, &mcp.StdioTransport{}) // stdio: one session
//	http.Handle("/mcp", srv.Handler())          // or streamable HTTP
//
// # Which tools
//
// tools/list holds every tool of the current version of every skill that
// is active (status row active), eligible (its manifest's compat
// requirements met) and not crashlooping in the host's supervisor.
// Quarantined, disabled, removed and crashlooping skills' tools are
// absent. A tool whose input_schema declares a type other than "object"
// cannot take MCP arguments (always a JSON object) and is left out, with a
// warning in the log. A tool its manifest marks hooks_only (a Palyra-Go
// extension: a lifecycle-event handler, say) is left out too: hooks run
// it, and an agent must not be able to forge the events it records. A call
// of the name it would have is refused with tool_hooks_only (below).
//
// # Names
//
// MCP clients in the wild accept tool names matching ^[a-zA-Z0-9_-]{1,64}$,
// so a tool id becomes a name by a fixed rule (Names): every character
// outside that set becomes '_' ("palyra.echo" is "palyra_echo"). The set of
// (skill id, tool id) pairs is sorted by skill id then tool id; in that
// order each pair takes its plain name unless an earlier one has it; then
// every pair left (a collision, or a name over 64 characters) gets its name
// cut to 55 characters, "_" and the first 8 hex digits of
// sha256("<skill_id>/<tool_id>") (of "…#1", "#2", … in the unlikely case
// that is taken too). The same set of tools always gets the same names,
// whatever order they were installed in; the names change only when the
// set does (a second skill with the same tool id whose skill id sorts
// first takes the plain name). The original ids are in each tool's _meta:
// palyra/skill_id, palyra/tool_id, palyra/version, and
// palyra/requires_approval.
//
// # Schemas and annotations
//
// title is the manifest's tool name and description its description.
// inputSchema is the manifest's input_schema, with "type": "object" added
// when it names no type. outputSchema is the output_schema when its type is
// "object", else the tool advertises none. The annotations come from the
// risk and the skill's capabilities:
//
//	destructiveHint  risk.requires_approval or risk.default_sensitive
//	readOnlyHint     neither, and the skill has no write_roots, channels
//	                 or HTTP egress (so a sensitive tool is never read-only)
//	openWorldHint    the skill has HTTP egress or channels
//	idempotentHint   false (a manifest does not say)
//
// # Calls
//
// tools/call runs the tool through the service's Call with the arguments
// as input (none, or null, is {}). A success has structuredContent = the output
// when it is a JSON object, else {"result": output}, and one text content
// with the output's JSON. An output that is an A2UI document (or an A2UI
// update, applied) is validated and also returned as an embedded resource
// with MIME type application/vnd.palyra.a2ui+json (A2UIMIMEType), URI
// palyra-a2ui://<skill_id>/<surface> (A2UIURI; the surface path-escaped),
// the whole document as its text (after an update, the patched document:
// host.A2UIRef's Document) and the id under which the host keeps it in its
// _meta (palyra/a2ui_document_id), for a form submit (the daemon's POST
// /v1/a2ui/{id}/submit, host.Service's SubmitForm). A result's _meta names palyra/skill_id,
// palyra/version and palyra/invocation_id.
//
// A failure is a tool result, not a protocol error: isError true, one text
// content "<code>: <message>" and, in _meta under "palyra/error", {"code",
// "message"} with the stable code (errcode.Of; e.g. skill_quarantined,
// invalid_input, timeout, tool_error), plus "tool_error" {code, message}
// when the tool reported one (the result a failed call carries,
// host.CallResultOf); ErrorOf reads it. There is no
// structuredContent on a failure, so a client that checks structuredContent
// against the tool's outputSchema never sees an error shape there. A name the server does not serve (never, or
// no longer) is a protocol error (JSON-RPC -32602, as MCP asks for unknown
// tools) whose message starts with "unknown_tool:" and whose data is
// {"code": "unknown_tool"}; for the name of a hooks_only tool the code is
// tool_hooks_only instead.
//
// # Approval
//
// A call needs approval when the host holds it for one (host approvals:
// the tool's risk.requires_approval or risk.default_sensitive, a
// capability class the profile marks require_approval, a run hook asking
// for it): the Service's Call returns a pending approval. The server then
// asks the client's user by form elicitation, records the answer on that
// approval (Service.DecideApproval, with the principal, journaled; a
// refusal denies it) and, approved, runs the call with it
// (CallRequest.ApprovalID): one question per call, and the operator's
// approvals list shows it like any other. The elicitation is a message
// naming the skill, its version, the tool, the reasons and the input
// (compact JSON, cut to MaxSummaryBytes), and a form with one
// required boolean field "approve". Only accept with approve true runs
// the call; accept with false, decline and cancel are isError results with
// code approval_declined. A client that declared no elicitation capability
// is refused with approval_required and a message saying how to proceed,
// unless Options.ApprovalWithoutElicitation is FallbackAllow (the
// daemon's [mcp] approval_without_elicitation, the command's
// --approval-without-elicitation): then the call runs, logged at warn.
//
// # Cancellation and progress
//
// notifications/cancelled cancels the handler's context, which cancels the
// host's call: the supervisor cancels the sidecar's invoke and the sidecar
// interrupts the guest (epoch interruption), so a call spinning in a loop
// ends at once and the same sidecar serves the next call. Close cancels
// every call still running after its grace. Over streamable HTTP, a client
// that goes away without notifications/cancelled does not cancel its call:
// the SDK keeps it running so that the client may resume the stream; the
// call still ends at the skill's wall-clock quota, when the session is
// deleted, or at Close. A call whose request carries a
// progressToken and runs longer than ProgressInterval (1 s) gets a
// notifications/progress every interval until it ends: progress 1, 2, 3, …
// (no total), message "<name> running for <duration>".
//
// # The list follows the host
//
// Sync compares the catalog with what is served and adds (or replaces)
// and removes only what changed, so the SDK sends
// notifications/tools/list_changed exactly when the list changes (it
// batches the changes of one Sync into one notification). Watch syncs when
// Options.Wake publishes (the host's lifecycle events; in the daemon the
// journal follower's stream) and every PollInterval (500 ms) when the
// catalog's generation changed. A local host's generation is the
// inventory journal's last event id and the set of versions the supervisor
// holds as crashlooping (host.Host.Tools), so an install, enable, disable,
// quarantine or removal by any process on the state directory (the CLI, a
// second palyra-host) is seen within the poll interval. The SDK sends a notification 10 ms after
// the change to the sessions connected then, so a session that connects
// right after a change (the first Sync of Serve included) may get one
// list_changed for a list it already has; listing again is harmless.
//
// # Lifecycle
//
// New starts nothing. Watch and Serve run until their context ends. Close
// refuses new sessions, ends every session (calls in flight may finish
// until Close's context ends, then are cancelled) and returns once they are
// gone; no goroutine of the server outlives it.
package mcpserver
