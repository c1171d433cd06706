package main

// cliHints are what to do about an error, in the CLI's terms: the exact
// flag or setting that resolves it. The host's messages are shared with the
// HTTP API and the console, which have no flags, so the CLI adds these
// itself (reportError prints them as "hint:" and in the JSON error's hint).
var cliHints = map[string]string{
	"already_installed":              "use --force to reinstall this version",
	"override_required":              "use --override --reason R to enable a quarantined version",
	"capability_escalation":          "review the capability diff, then use --accept-capabilities",
	"capabilities_not_accepted":      "review the capability diff, then use --accept-capabilities",
	"untrusted_publisher":            "use --allow-tofu to pin the publisher's key on first use, or --trusted-publisher PUBLISHER=PUBLIC_KEY_HEX to allowlist it",
	"registry_trust_required":        "use --allow-tofu to pin the index key on first use, or allowlist it with --trusted-publisher PUBLISHER=PUBLIC_KEY_HEX",
	"purge_needs_all_versions":       "drop --version to remove every version, or drop --purge-storage to keep the storage",
	"skill_referenced_by_hook":       "use --force to disable those hook bindings in the same remove, or disable or remove them first (palyra hooks disable HOOK_ID)",
	"sidecar_not_found":              "give --sidecar PATH or set $PALYRA_SIDECAR (go build -ldflags=-extldflags=-Wl,--gc-sections -o bin/ ./cmd/palyra-sidecar builds it)",
	"state_dir_missing":              "give the right --state-dir (or $PALYRA_STATE_DIR)",
	"invalid_state_dir":              "give --state-dir DIR (or $PALYRA_STATE_DIR) as an absolute path",
	"daemon_unreachable":             "check --url (or $PALYRA_DAEMON_URL) and that palyra-host serve is running; unset it to work on the state directory",
	"unauthorized":                   "give the daemon's admin token with --token (or $PALYRA_ADMIN_TOKEN)",
	"vault_key_missing":              "set $PALYRA_VAULT_KEY (base64 of 32 bytes) or $PALYRA_VAULT_KEY_COMMAND",
	"vault_key_mismatch":             "set $PALYRA_VAULT_KEY (or $PALYRA_VAULT_KEY_COMMAND) to the key the vault was made with",
	"oci_plain_http_refused":         "--plain-http is for loopback registries only; use https",
	"oci_unauthorized":               "log in with docker login (the credentials come from $DOCKER_CONFIG/config.json)",
	"registry_insecure_url":          "use an https:// --registry-url, or --registry-dir for a local index",
	"key_exists":                     "choose another --out (an existing key is never overwritten)",
	"skill_quarantined":              "see why with palyra skills info SKILL_ID; once fixed, palyra skills enable SKILL_ID --override --reason R",
	"config_missing":                 "set the keys it names with palyra skills config set SKILL_ID KEY=VALUE (a sensitive one with --stdin KEY); palyra skills config get SKILL_ID shows them all",
	"config_invalid":                 "palyra skills config get SKILL_ID shows the schema's keys, their types and the values that no longer fit; set them again or unset them",
	"review_pending":                 "the version is builder output awaiting review; approve it with palyra skills review approve SKILL_ID --version V --reason R",
	"skill_disabled":                 "palyra skills enable SKILL_ID --reason R",
	"trusted_publisher_key_mismatch": "the artifact is signed by another key than the allowlisted one; if the publisher rotated it, apply its statement with palyra trust rotate --statement FILE",
	"trust_store_tampered":           "review what changed with palyra trust accept-changes (--trust-store T for another file; --yes when not at a terminal), or restore the file from a backup",
	"approval_pending":               "approve it with palyra approvals approve APPROVAL_ID --reason R, then run again with --approval APPROVAL_ID (or run without --no-wait to wait)",
	"approval_input_mismatch":        "an approval runs the call with exactly the input approved: give the same --input, or ask for a new approval",
	"approval_expired":               "run the call again without --approval to ask for a new approval",
	"approval_used":                  "an approval runs one call: run again without --approval to ask for a new one",
	"untrusted_deny_feed":            "allowlist the feed issuer's key (checked out of band) with palyra feed update FILE --trusted-publisher ISSUER=PUBLIC_KEY_HEX, or get a feed signed by a key the trust store allowlists",
	"deny_feed_not_newer":            "the installed feed is newer (palyra feed show); ask the issuer for its latest feed",
	"tofu_key_mismatch":              "the publisher's key changed since it was pinned; if it rotated it, apply its statement with palyra trust rotate --statement FILE",
	"run_hook_failed":                "a fail-closed run hook failed; fix its skill, or rebind it with palyra hooks bind HOOK_ID ... --on-failure open (or palyra hooks disable HOOK_ID)",
	"blocked_by_hook":                "a run hook refused the call; see its bindings with palyra hooks list -o wide",
}

// hintFor is the CLI's hint for an error code, "" when there is none.
func hintFor(code string) string { return cliHints[code] }
