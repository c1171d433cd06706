#!/usr/bin/env bash
# Quickstart: the whole supply chain of a skill, end to end, on this machine.
# Builds the palyra CLI and the echo example skill, generates a signing key,
# packages and signs the skill, verifies it (trust on first use, then pinned),
# shows that a tampered copy is refused, then admits skills into a state
# directory: a good one goes active, one that imports a WASI filesystem call
# it never declared is kept quarantined (and stays so even with --override),
# and an upgrade that asks for a new HTTP host needs --accept-capabilities.
# The echo skill's tools run, each call in the skill's own sidecar process.
# Needs only Go.
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

step "build the palyra CLI and the palyra-sidecar process it runs skills in"
go build -o "$work/bin/" ./cmd/palyra ./cmd/palyra-sidecar

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

step "install http-fetch 0.1.0, then an upgrade that adds an HTTP host"
GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$work/http_fetch.wasm" ./sdk/examples/http-fetch
package sdk/examples/http-fetch/skill.toml "$work/http_fetch.wasm" "$work/http-fetch-0.1.0.palyra-skill"
"$palyra" skills install --artifact "$work/http-fetch-0.1.0.palyra-skill"
sed -e 's/^version = "0.1.0"/version = "0.2.0"/' \
    -e 's/^http_egress_allowlist = \["api.example.com"\]/http_egress_allowlist = ["api.example.com", "api2.example.com"]/' \
    sdk/examples/http-fetch/skill.toml > "$work/http-fetch-0.2.0.skill.toml"
package "$work/http-fetch-0.2.0.skill.toml" "$work/http_fetch.wasm" "$work/http-fetch-0.2.0.palyra-skill"
if out=$("$palyra" skills install --artifact "$work/http-fetch-0.2.0.palyra-skill" 2>&1); then
  fail "the escalating upgrade installed without --accept-capabilities"
fi
echo "$out"
grep -q 'capability_escalation' <<<"$out" || fail "expected capability_escalation"
grep -q 'api2.example.com' <<<"$out" || fail "expected the diff to name the new host"

step "the same upgrade with --accept-capabilities"
"$palyra" skills install --artifact "$work/http-fetch-0.2.0.palyra-skill" --accept-capabilities

step "what is installed"
"$palyra" skills list

step "done"
echo "state dir:    $PALYRA_STATE_DIR"
echo "trust store:  $PALYRA_STATE_DIR/skills/trust-store.json"
