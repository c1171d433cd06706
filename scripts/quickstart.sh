#!/usr/bin/env bash
# Quickstart: the whole supply chain of a skill, end to end, on this machine.
# Builds the palyra CLI and the echo example skill, generates a signing key,
# packages and signs the skill, verifies it (trust on first use, then pinned),
# shows that a tampered copy is refused, then admits skills into a state
# directory: a good one goes active, one that imports a WASI filesystem call
# it never declared is kept quarantined (and stays so even with --override),
# and an upgrade that asks for a new HTTP host needs --accept-capabilities.
# The echo skill's tools run, each call in the skill's own sidecar process.
# Then capabilities: http-fetch (default_sensitive: each call waits for an
# operator's approval) calls a local API with a token the host's broker
# injects from the encrypted vault (the skill never sees it), is denied a
# host outside its grant, and kv-counter keeps its counts in the skill's
# own storage across processes. Needs only Go.
set -euo pipefail
cd "$(dirname "$0")/.."

work=${PALYRA_QUICKSTART_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/palyra-quickstart.XXXXXX")}
mkdir -p "$work"
export PALYRA_STATE_DIR="$work/state"
unset PALYRA_SKILLS_TRUST_STORE
palyra="$work/bin/palyra"
example=sdk/examples/echo

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
fail() { printf 'quickstart: %s\n' "$*" >&2; exit 1; }

# approve SKILL TOOL INPUT REASON: calls the tool with --no-wait (it needs
# approval: exit 3 and the approval's id), approves that approval as the
# operator and prints its id, for `skills run ... --approval ID`.
approve() {
  local pending rc
  set +e
  pending=$("$palyra" skills run "$1" "$2" --input "$3" --no-wait)
  rc=$?
  set -e
  [ "$rc" -eq 3 ] || fail "expected $2 to wait for approval (exit 3), got exit $rc: $pending"
  local id
  id=$(head -n1 <<<"$pending")
  "$palyra" approvals approve "$id" --reason "$4" >&2
  printf '%s\n' "$id"
}

step "build the palyra CLI and the palyra-sidecar process it runs skills in"
go build -ldflags=-extldflags=-Wl,--gc-sections -o "$work/bin/" ./cmd/palyra ./cmd/palyra-sidecar

step "build the echo example skill (GOOS=wasip1 GOARCH=wasm, standard Go toolchain)"
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$work/echo.wasm" "./$example"
ls -l "$work/echo.wasm"

step "generate a signing key"
"$palyra" keys generate --out "$work/signing.key"

step "package and sign $example"
"$palyra" skills package build \
  --manifest "$example/skill.toml" \
  --module "$work/echo.wasm" \
  --sbom "$example/sbom.cdx.json" \
  --provenance "$example/provenance.json" \
  --signing-key "$work/signing.key" \
  --output "$work/echo.palyra-skill"

step "inspect it (structure and signature, no trust store)"
"$palyra" skills package inspect --artifact "$work/echo.palyra-skill"

step "verify with --allow-tofu: the publisher's key is pinned on first use"
out=$("$palyra" skills package verify --artifact "$work/echo.palyra-skill" --allow-tofu)
echo "$out"
grep -q 'trust_decision=tofu_newly_pinned' <<<"$out" || fail "expected tofu_newly_pinned"

step "verify again without --allow-tofu: the pinned key is recognised"
out=$("$palyra" skills package verify --artifact "$work/echo.palyra-skill")
echo "$out"
grep -q 'trust_decision=tofu_pinned' <<<"$out" || fail "expected tofu_pinned"

step "tamper: one byte of the module changed, the old signature.json kept"
go run ./internal/tools/tamper --artifact "$work/echo.palyra-skill" --entry modules/echo.wasm --output "$work/tampered.palyra-skill"
if out=$("$palyra" skills package verify --artifact "$work/tampered.palyra-skill" 2>&1); then
  fail "the tampered artifact verified"
fi
echo "$out"
grep -q 'payload_hash_mismatch' <<<"$out" || fail "expected payload_hash_mismatch"

# package <manifest> <module> <output>: sign with the quickstart key.
package() {
  "$palyra" skills package build --manifest "$1" --module "$2" \
    --sbom "$example/sbom.cdx.json" --provenance "$example/provenance.json" \
    --signing-key "$work/signing.key" --output "$3"
}

step "install the echo skill: verified, audited, within policy -> active"
"$palyra" skills install --artifact "$work/echo.palyra-skill"

step "run both tools of the echo skill, each call in the skill's own sidecar process"
"$palyra" skills run palyra.echo palyra.echo --input '{"text":"hello from a sandbox"}'
"$palyra" skills run palyra.echo palyra.upper --input '{"text":"hello"}' --json
if out=$("$palyra" skills run palyra.echo palyra.echo --input '{"wrong":1}' 2>&1); then
  fail "input that breaks the tool's input_schema was accepted"
fi
echo "$out"
grep -q 'invalid_input' <<<"$out" || fail "expected invalid_input"

step "install a skill whose module imports wasi_snapshot_preview1.path_open without a filesystem capability"
cp testdata/audit/wasi_path_open.wasm "$work/files_probe.wasm"
package testdata/quickstart/files-probe.skill.toml "$work/files_probe.wasm" "$work/files-probe.palyra-skill"
if out=$("$palyra" skills install --artifact "$work/files-probe.palyra-skill" 2>&1); then
  fail "the path_open skill installed without complaint"
fi
echo "$out"
grep -q 'status=quarantined' <<<"$out" || fail "expected the skill to be kept quarantined"
grep -q 'wasi_snapshot_preview1.path_open' <<<"$out" || fail "expected the reason to name the import"

step "enable it with --override: refused, the audit still fails"
if out=$("$palyra" skills enable palyra.files_probe --override --reason "looked fine to me" 2>&1); then
  fail "enable --override succeeded"
fi
echo "$out"
grep -q 'audit_failed' <<<"$out" || fail "expected audit_failed"

step "start a local API that wants a bearer token (127.0.0.1, a free port)"
LC_ALL=C tr -dc 'a-z0-9' </dev/urandom | head -c 24 >"$work/api.token" || true
rm -f "$work/api.port"
go build -o "$work/bin/" ./internal/tools/tokenserver
"$work/bin/tokenserver" --token-file "$work/api.token" --port-file "$work/api.port" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 200); do [[ -s "$work/api.port" ]] && break; sleep 0.05; done
port=$(cat "$work/api.port")
echo "listening on 127.0.0.1:$port"

step "operator profile: http allowed to that port, loopback reachable for it only"
cat >"$PALYRA_STATE_DIR/policy.toml" <<EOF
[http]
allowed_schemes = ["https", "http"]
allowed_ports = [443, $port]
# Non-public addresses stay refused, except the local API.
allowed_private_networks = ["127.0.0.1/32", "::1/128"]
EOF
"$palyra" policy show | sed -n '1,12p'

step "install http-fetch 0.1.0 (api.example.com); the vault lacks its api_token"
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$work/http_fetch.wasm" ./sdk/examples/http-fetch
package sdk/examples/http-fetch/skill.toml "$work/http_fetch.wasm" "$work/http-fetch-0.1.0.palyra-skill"
out=$("$palyra" skills install --artifact "$work/http-fetch-0.1.0.palyra-skill")
echo "$out"
grep -q 'missing_secret=skill:palyra.http_fetch/api_token' <<<"$out" || fail "expected the missing secret to be reported"

step "an upgrade that adds the host localhost: refused without --accept-capabilities"
sed -e 's/^version = "0.1.0"/version = "0.2.0"/' \
    -e 's/^http_egress_allowlist = \["api.example.com"\]/http_egress_allowlist = ["api.example.com", "localhost"]/' \
    sdk/examples/http-fetch/skill.toml > "$work/http-fetch-0.2.0.skill.toml"
package "$work/http-fetch-0.2.0.skill.toml" "$work/http_fetch.wasm" "$work/http-fetch-0.2.0.palyra-skill"
if out=$("$palyra" skills install --artifact "$work/http-fetch-0.2.0.palyra-skill" 2>&1); then
  fail "the escalating upgrade installed without --accept-capabilities"
fi
echo "$out"
grep -q 'capability_escalation' <<<"$out" || fail "expected capability_escalation"
grep -q 'localhost' <<<"$out" || fail "expected the diff to name the new host"

step "the same upgrade with --accept-capabilities"
"$palyra" skills install --artifact "$work/http-fetch-0.2.0.palyra-skill" --accept-capabilities

step "store the token in the encrypted vault (value on stdin, never in argv)"
"$palyra" secrets set skill:palyra.http_fetch/api_token <"$work/api.token"
"$palyra" secrets list

step "http-fetch is default_sensitive: the call waits for an operator's approval (--no-wait prints its id), which is given"
in="{\"url\":\"http://localhost:$port/\",\"use_token\":true}"
id=$(approve palyra.http_fetch palyra.http_fetch "$in" "quickstart: the local API")
"$palyra" approvals show "$id"

step "http-fetch calls the local API with that approval; the broker injects the token, the skill never sees it"
out=$("$palyra" skills run palyra.http_fetch palyra.http_fetch --input "$in" --approval "$id")
echo "$out"
grep -q 'authorized\\":true' <<<"$out" || grep -q '"authorized":true' <<<"$out" || fail "expected the API to accept the injected token"
if grep -qF "$(cat "$work/api.token")" <<<"$out"; then fail "the token reached the skill's output"; fi

step "the same skill asking for a host outside its grant (even approved): capability_denied"
evil='{"url":"https://evil.example.net/exfiltrate"}'
id=$(approve palyra.http_fetch palyra.http_fetch "$evil" "quickstart: show the egress check")
if out=$("$palyra" skills run palyra.http_fetch palyra.http_fetch --input "$evil" --approval "$id" 2>&1); then
  fail "a host outside the grant was reached"
fi
echo "$out"
grep -q 'capability_denied' <<<"$out" || fail "expected capability_denied"
grep -q 'evil.example.net' <<<"$out" || fail "expected the denial to name the host"

step "kv-counter: counters in the skill's own storage survive calls and processes"
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$work/kv_counter.wasm" ./sdk/examples/kv-counter
package sdk/examples/kv-counter/skill.toml "$work/kv_counter.wasm" "$work/kv-counter.palyra-skill"
"$palyra" skills install --artifact "$work/kv-counter.palyra-skill"
for n in 1 2 3; do
  # Each `skills run` is a new palyra process with a new sidecar.
  out=$("$palyra" skills run palyra.kv_counter palyra.increment --input '{"name":"visits"}')
  echo "$out"
  grep -q "\"count\":$n" <<<"$out" || fail "expected count $n"
done
"$palyra" skills run palyra.kv_counter palyra.get --input '{"name":"visits"}'

step "what is installed"
"$palyra" skills list

step "done"
echo "state dir:    $PALYRA_STATE_DIR"
echo "trust store:  $PALYRA_STATE_DIR/skills/trust-store.json"
