// Package broker performs the capability operations of skills on the
// trusted side (sdk/ABI.md §5).
//
// A guest's capability-call travels from its sidecar to the supervisor over
// go-plugin's GRPCBroker and arrives here as a sidecarplugin.CapabilityRequest.
// The sidecar is untrusted once guest code ran in it, so the broker trusts
// nothing it says beyond the invocation id: before a call reaches the
// sidecar the host registers the invocation (Begin) with the grants and
// limits it computed itself (manifest ∩ operator policy), and every
// capability call is judged against that record. The handle is resolved
// again from those grants (the grant name the sidecar sent must agree), the
// request document is decoded strictly, and only then does an operation
// run:
//
//   - HTTP (handles 10000+): through host/broker/egress — allowlist,
//     scheme, port, resolve-then-pin against private addresses, redirects
//     re-checked, size caps, timeouts — under the invocation's request and
//     byte budgets. Secrets named in secret_headers / secret_query are
//     fetched from the vault and injected into the outgoing request here,
//     so the sidecar never holds a secret value.
//   - Secrets (20000+): describe (is a value stored?) and, only when the
//     operator's policy sets secrets.allow_read, read.
//   - Storage (30000+): the skill's own key space in host/storage, under
//     the handle's prefix (read roots are read-only), with per-skill key
//     and byte quotas.
//   - Channels (40000+): delivery through host/channels to a channel in
//     the grant that the host has registered.
//
// Every refusal is a *sidecarplugin.CapabilityError with an ABI code and a
// message that names what was refused (a host and the rule, a key and the
// quota) and never a secret value; it is logged with its reason, counted per
// skill (Stats) and recorded on the invocation, so that the host can report
// a tool that failed after a denial as capability_denied.
package broker
