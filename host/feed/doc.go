// Package feed is the signed deny feed: a local file, signed by a
// publisher the trust store allowlists, that lists module and artifact
// SHA-256 digests and publisher keys which must not run, each with a
// reason and a reference. The audit (host/audit) checks every artifact
// against the installed feed at install and at every re-audit, and a match
// quarantines the version with the entry's reason and reference.
//
// # Format
//
// The file is a DSSE envelope (https://github.com/secure-systems-lab/dsse,
// JSON, unknown keys refused) whose payloadType is PayloadType and whose
// payload is the base64 of the feed document:
//
//	{"payloadType": "application/vnd.palyra-go.deny-feed.v1+json",
//	 "payload": "<base64 of the feed JSON>",
//	 "signatures": [{"keyid": "<64 hex: the Ed25519 public key>", "sig": "<base64 Ed25519 signature>"}]}
//
//	{"schema_version": 1, "issuer": "acme-security", "serial": 7,
//	 "issued_at": "2026-11-27T09:00:00Z",
//	 "entries": [{"kind": "module_sha256", "value": "<64 hex>", "reason": "CVE-2026-1234: ...", "reference": "https://..."}]}
//
// Each signature signs DSSE's pre-authentication encoding,
// "DSSEv1 <len(type)> <type> <len(payload)> <payload>", of the decoded
// payload. kind is module_sha256 (the SHA-256 of a module file,
// modules/*.wasm, as the artifact holds it), artifact_sha256 (the SHA-256
// of the .palyra-skill file) or publisher_key (the hex Ed25519 key that
// signed an artifact); value is 64 lower-case hex digits (upper case is
// folded); reason is required. The docs (docs/deny-feed.md) give the full
// format.
//
// # Trust
//
// The issuer is a publisher name of the trust store: a feed is trusted
// when one of its signatures verifies with a key the store allowlists for
// that publisher (`palyra trust add` it, ideally as a publisher of its
// own, such as acme-security). A TOFU pin never counts, nor does any other
// publisher's key, and there is no trust on first use: an unknown issuer
// or key is ErrUntrustedFeed. The installed feed is verified again
// whenever it is loaded, so a feed file changed in the state directory, or
// whose issuer the trust store no longer trusts, is refused (and the audit
// fails closed, see host/audit).
//
// # Serial
//
// serial is a positive integer that the issuer increases with every
// feed. Update refuses a feed whose serial is lower than the installed
// one's, or equal with a different payload (ErrFeedNotNewer); the same
// feed again is accepted and changes nothing.
//
// # Limits
//
// A feed file is at most MaxFileBytes (4 MiB) and holds at most MaxEntries
// (10,000) entries; a reason or reference is at most MaxTextBytes. The
// errors name the limit and the size seen.
//
// # Files
//
// The installed feed is <state>/feed/deny-feed.json
// (statedir.Layout.DenyFeed): the envelope as it was given, with the time
// and principal of the update, written atomically under the lock
// <state>/feed/deny-feed.json.lock.
package feed
