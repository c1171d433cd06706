#!/usr/bin/env bash
# Publishing and installing skills, end to end (the README's walkthrough):
# sign with a key kept in the encrypted vault, push to a local OCI registry
# (Debian's docker-registry on 127.0.0.1), install by digest on another
# state dir, publish 1.1.0 with a new HTTP host, see it in `outdated`, update
# with the capability diff shown (refused, then accepted); then drive the
# same host with one `palyra apply -f` document: diff, apply, apply again
# (no change). Fails when a step does not show what it should.
set -euo pipefail
cd "$(dirname "$0")/.."

work=${PALYRA_DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/palyra-publish.XXXXXX")}
mkdir -p "$work"
unset PALYRA_SKILLS_TRUST_STORE PALYRA_VAULT_KEY PALYRA_VAULT_KEY_COMMAND PALYRA_OCI_PLAIN_HTTP
palyra="$work/bin/palyra"
example=sdk/examples/http-fetch
registry_pid=

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
fail() { printf 'publish-demo: %s\n' "$*" >&2; exit 1; }
cleanup() {
  if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

command -v docker-registry >/dev/null || fail "needs Debian's docker-registry package (apt-get install docker-registry)"

step "build the palyra CLI, its sidecar and the http-fetch example skill"
go build -ldflags=-extldflags=-Wl,--gc-sections -o "$work/bin/" ./cmd/palyra ./cmd/palyra-sidecar
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$work/http-fetch.wasm" "./$example"

step "start a local OCI registry (docker-registry on 127.0.0.1, storage in $work/registry)"
port=$(( 20000 + RANDOM % 20000 ))
cat >"$work/registry.yml" <<YML
version: 0.1
log: { level: warn }
storage: { filesystem: { rootdirectory: $work/registry } }
http: { addr: 127.0.0.1:$port }
YML
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 100); do
  curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null || { cat "$work/registry.log"; fail "the registry did not start"; }
repo="oci://127.0.0.1:$port/demo/http-fetch"

# The publisher's machine: its own state dir, whose vault holds the key.
publisher() { PALYRA_STATE_DIR="$work/publisher" "$palyra" "$@"; }
# The operator's host: another state dir.
operator() { PALYRA_STATE_DIR="$work/host" "$palyra" "$@"; }

step "a signing key kept in the publisher's encrypted vault (printed: its public half only)"
publisher keys generate --vault-ref signing/demo

# package VERSION HOSTS builds http-fetch at VERSION granted HOSTS, signed
# with the vault key.
package() {
  sed -e "s/^version = .*/version = \"$1\"/" -e "s/^http_egress_allowlist = .*/http_egress_allowlist = [$2]/" \
    "$example/skill.toml" >"$work/skill-$1.toml"
  publisher skills package build --manifest "$work/skill-$1.toml" --module "$work/http-fetch.wasm" \
    --sbom "$example/sbom.cdx.json" --provenance "$example/provenance.json" \
    --signing-key-vault-ref signing/demo --output "$work/http-fetch-$1.palyra-skill"
}

step "package 1.0.0 and push it (the tag is the version)"
package 1.0.0 '"api.example.com"'
out=$(publisher skills push "$work/http-fetch-1.0.0.palyra-skill" "$repo" --plain-http --json)
echo "$out"
digest=$(sed -n 's/.*"digest": *"\(sha256:[0-9a-f]*\)".*/\1/p' <<<"$out")
[ -n "$digest" ] || fail "push printed no digest"

step "install by digest on the operator's host (the publisher's key pinned on first use)"
operator skills install "$repo@$digest" --plain-http --allow-tofu
operator skills list | grep -q 'palyra.http_fetch' || fail "not installed"

step "publish 1.1.0, which asks for a new HTTP host"
package 1.1.0 '"api.example.com", "status.example.com"'
publisher skills push "$work/http-fetch-1.1.0.palyra-skill" "$repo" --plain-http

step "outdated: the registry has a newer version"
out=$(operator skills outdated --plain-http)
echo "$out"
grep -Eq 'palyra\.http_fetch +1\.0\.0 +1\.1\.0 +outdated' <<<"$out" || fail "outdated does not show 1.0.0 -> 1.1.0"

step "update --dry-run: the version change and the capability diff; nothing changes, and the escalation is refused (exit 1) without --accept-capabilities"
if out=$(operator skills update palyra.http_fetch --dry-run --plain-http 2>&1); then fail "an escalating update was not refused"; fi
echo "$out"
grep -q 'palyra.http_fetch 1.0.0 -> 1.1.0' <<<"$out" || fail "the dry run shows no version change"
grep -q 'capability_diff=+ http host status.example.com' <<<"$out" || fail "the dry run shows no capability diff"
grep -q 'capability_escalation' <<<"$out" || fail "the refusal is not capability_escalation"
operator skills info palyra.http_fetch | grep -q '1.0.0' || fail "the dry run changed the current version"

step "update --accept-capabilities"
operator skills update palyra.http_fetch --plain-http --accept-capabilities
operator skills info palyra.http_fetch | grep -q '1.1.0' || fail "1.1.0 is not current"

step "the same host, declared: one palyra.toml"
cat >"$work/palyra.toml" <<TOML
version = 1

[[skill]]
id = "palyra.http_fetch"
oci = "$repo"
version = "^1.0"
plain_http = true

[skill.accept]
http_hosts = ["api.example.com", "status.example.com"]
secrets = ["skill:palyra.http_fetch/api_token"]
TOML
cat "$work/palyra.toml"

step "publish 1.2.0 (the same capabilities), then palyra diff: the plan, nothing changed"
package 1.2.0 '"api.example.com", "status.example.com"'
publisher skills push "$work/http-fetch-1.2.0.palyra-skill" "$repo" --plain-http
out=$(operator diff -f "$work/palyra.toml")
echo "$out"
grep -q '~ update palyra.http_fetch 1.1.0 -> 1.2.0' <<<"$out" || fail "diff does not plan the update"

step "palyra apply: converge"
operator apply -f "$work/palyra.toml"
operator skills info palyra.http_fetch | grep -q '1.2.0' || fail "1.2.0 is not current after apply"

step "palyra apply again: nothing to do"
out=$(operator apply -f "$work/palyra.toml")
echo "$out"
grep -q 'no changes' <<<"$out" || fail "a second apply changed something"

step "done: the files are in $work"
