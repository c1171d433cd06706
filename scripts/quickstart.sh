#!/usr/bin/env bash
# Quickstart: the whole supply chain of a skill, end to end, on this machine.
# Builds the palyra CLI and the echo example skill, generates a signing key,
# packages and signs the skill, verifies it (trust on first use, then pinned),
# and shows that a tampered copy is refused. Needs only Go.
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

step "build the palyra CLI"
go build -o "$palyra" ./cmd/palyra

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

step "done"
echo "artifact:     $work/echo.palyra-skill"
echo "trust store:  $PALYRA_STATE_DIR/skills/trust-store.json"
"$palyra" trust show
