// Package policy holds the operator's capability profile: the bound on what
// any skill may be granted. A skill gets what its manifest requests AND the
// profile allows (grants = manifest ∩ profile; RATIONALE.md, "Handles, not
// authority"); a request outside the profile is a policy violation, which
// makes the installer quarantine the skill with a reason naming the
// capability. The host evaluates again before each call (RATIONALE.md,
// "Checked at every call"), so a tightened profile applies to skills
// already installed.
//
// # Use
//
//	prof, err := policy.Load("/etc/palyra/profile.toml") // or policy.Default()
//	...
//	d, err := prof.Evaluate(m) // m from manifest.Parse
//	if err != nil { ... }      // an invalid profile, never a violation
//	if err := d.Err(); err != nil {
//		// errors.Is(err, policy.ErrViolation); quarantine with d.Reasons()
//	}
//	// d.Grants become handles; d.Limits configure the invocation.
//
// On an upgrade, Diff(installed, candidate) lists what the new version
// would get beyond the installed one (Escalation.Lines, Escalation.Err with
// ErrCapabilityEscalation).
//
// # The profile file
//
// TOML, at most MaxProfileBytes, strict: an unknown key at any level, or a
// value of the wrong type, is an error naming the key path
// ("http.allowed_hosts[1]"). Every key is optional; testdata/policy/example.toml
// in the repository is a commented example. Keys and defaults:
//
//	[http]
//	allowed_hosts      ["*"]       exact hosts, "*.<domain>", or "*" (any host the manifest declares)
//	allowed_schemes    ["https"]   "https" and/or "http"
//	allowed_ports      [443]       plus 80 when "http" is allowed; a list given replaces the default
//	allow_private      false       loopback, private, link-local, CGNAT, metadata addresses
//	max_redirects      5           each redirect is checked again; 0 follows none
//	max_request_bytes  1048576     request body (the ABI's request document is at most 1 MiB)
//	max_response_bytes 4194304     response body (the ABI's response is at most 4 MiB)
//	request_timeout_ms 10000       one request, redirects included
//	[secrets]
//	allowed            ["*/*"]     "<scope>/<key>" patterns, see below
//	[storage]
//	allowed_prefixes   ["*"]       prefixes (covering themselves and what is below), or "*"
//	max_bytes_per_skill 67108864   64 MiB of stored values per skill
//	[channels]
//	allowed            ["*"]       channel names, or "*"
//	[quotas]
//	max_fuel           100000000   cap on capabilities.quotas.fuel_budget
//	max_memory_bytes   268435456   cap on capabilities.quotas.max_memory_bytes (≥ 65536)
//	max_wall_clock_ms  60000       cap on capabilities.quotas.wall_clock_timeout_ms
//	max_table_elements 100000      per table; the manifest cannot set it
//	max_instances      16          per invocation; the manifest cannot set it
//	max_capability_calls 256       per invocation (the ABI's ceiling; may only be lowered)
//	[capabilities]
//	allow_device       false       manifest device_capabilities
//	allow_node         false       manifest node_capabilities
//	allow_wildcards    false       any wildcard_opt_in flag or '*' in a manifest
//	require_approval   []          capability classes (http, secrets, storage, channels,
//	                               device, node): a call of a skill granted any of them
//	                               waits for a human's approval (host approvals)
//	[dev]
//	allow_inline       false       run unsigned inline modules (palyra dev run); never on a hardened host
//
// # The default profile is safe
//
// With no file, Default applies: a skill gets exactly the exact hosts,
// secrets, storage prefixes and channels its manifest declares and nothing
// outside it; HTTP only over https to port 443, never to private or
// metadata addresses; no wildcard of any kind and no device or node
// capability (Palyra's audit policy refuses both too). The quota caps are
// ten times Palyra's defaults for fuel (100M), four times for memory
// (256 MiB) and twice for wall clock (60 s):
// every manifest that keeps the manifest defaults (10M fuel, 64 MiB, 30 s)
// fits with room, while a skill cannot ask for a runaway budget. Tables
// keep Palyra's 100,000 elements; instances are 16 (a skill is one module,
// Palyra's 256 is far more than any skill uses); capability calls are the
// ABI's 256.
//
// # Patterns and coverage
//
// A manifest entry is granted when one profile pattern covers it. Coverage
// is sound: a pattern covers an entry only if everything the entry stands
// for at the broker is also allowed by the pattern.
//
//   - Hosts are compared trimmed and lower-cased, without trailing dots.
//     "*" covers every host; "*.example.com" covers "api.example.com",
//     "a.b.example.com", and the manifest wildcards "*.example.com" and
//     "*.api.example.com", but not "example.com"; an exact host covers only
//     itself, never a wildcard.
//   - Secrets are "<scope>/<key>", the manifest's grant names
//     ("skill:acme.echo_http/api_token"). A profile pattern's scope is
//     global, principal:<id>, channel:<id>, skill:<id> or "*"; a '*' in the
//     id or the key matches any run of characters, so "skill:*/api_token"
//     covers each skill's own api_token. A key in another skill's scope
//     (acme.echo asking for skill:acme.billing/...) is covered only by a
//     pattern that names that scope without a '*', so no broad pattern (the
//     default "*/*" included) lets one skill use a neighbour's secrets.
//     Scoped secrets are first-class: the
//     ':' and '/' that Palyra's runner normalization rejected are part of
//     the grammar here. A manifest wildcard key ("api_*") is covered only by
//     a pattern that covers every key it can match ("api_*", "*").
//   - Storage prefixes (the manifest's write_roots, by the artifact path
//     rule): "*" covers everything; a prefix covers itself and the prefixes
//     below it ("skills" covers "skills/cache", not "skillset").
//   - Channels: "*" or the exact name.
//
// Wildcards in a manifest (any wildcard_opt_in flag, or a '*' in a host,
// secret key, write root, device or node capability) are violations unless
// [capabilities] allow_wildcards is true, and even then must be covered.
// There is no file access at run time (ABI §2.3): filesystem write_roots
// become read-write storage prefixes and read_roots read-only ones
// (Grants.StorageReadOnly), both covered by storage.allowed_prefixes; a read
// root that is also a write root adds nothing and is listed in
// Decision.Ignored.
//
// # From grants to handles
//
// Each list of Decision.Grants is canonical (trimmed, no empties, sorted
// byte-wise, no repeats), so the grant at position i is handle base+i of
// ABI §2.1: http 10000, secrets 20000, storage 30000, channels 40000. The
// sidecar gets only these handles; the broker resolves each capability
// call through the same Decision (HTTPRules for HTTP, Limits for quotas).
//
// # Violations
//
// Decision.Violations name the manifest field and entry at fault and the
// profile key that refused it; Decision.Reasons renders them as
//
//	policy_violation: capabilities.http_egress_allowlist[1] "evil.example.org": host not allowed by the operator profile (http.allowed_hosts)
//
// A quota above its cap is a violation too, and the Limits still carry the
// capped value.
//
// Profiles, Decisions and Escalations are plain values, safe for concurrent
// reads. Every error is prefixed "policy: "; a problem with a profile wraps
// ErrInvalidProfile, a refused manifest ErrViolation and an upgrade that asks
// for more ErrCapabilityEscalation (Load's I/O errors wrap the os error).
package policy
