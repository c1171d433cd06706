#!/usr/bin/env bash
# Cluster demo: three palyra-host nodes with embedded NATS on loopback.
# Builds palyra, palyra-host and palyra-sidecar, generates a signing key,
# packages and signs the echo, report, kv-counter and event-log examples,
# then runs `palyra-bench --cluster-demo`, which starts the three nodes
# (palyra-host serve --cluster-embedded --cluster-routes ..., every node
# listing every route), installs the examples through node a, calls them
# through b and c, quarantines through b (refused on a and c), kills node c
# with SIGKILL while 8 callers call the 4 examples through a and b,
# restarts c to catch up, prints the figures and stops every node (no
# process, socket or file left: it checks). Exits non-zero when a figure is
# wrong (a call failing otherwise than node_lost in flight on c, a call
# hanging past its deadline, no catch-up). Needs only Go.
set -euo pipefail
cd "$(dirname "$0")/.."

work=${PALYRA_DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/palyra-cluster-demo.XXXXXX")}
mkdir -p "$work/bin"
unset PALYRA_STATE_DIR PALYRA_SKILLS_TRUST_STORE PALYRA_SIDECAR PALYRA_CLUSTER_TOKEN
palyra="$work/bin/palyra"
quick=${PALYRA_DEMO_QUICK:+--quick}

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
cleanup() { [[ -n "${PALYRA_DEMO_DIR:-}" ]] || rm -rf "$work"; }
trap cleanup EXIT

step "build palyra, palyra-host, palyra-sidecar and palyra-bench"
go build -ldflags=-extldflags=-Wl,--gc-sections -o "$work/bin/" ./cmd/palyra ./cmd/palyra-host ./cmd/palyra-sidecar
go build -o "$work/bin/palyra-bench" ./cmd/palyra-bench

step "generate a signing key"
"$palyra" keys generate --out "$work/signing.key"

step "build, package and sign the echo, report, kv-counter and event-log examples"
artifacts=()
for ex in echo report kv-counter event-log; do
  dir=sdk/examples/$ex
  GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$work/$ex.wasm" "./$dir"
  "$palyra" skills package build --manifest "$dir/skill.toml" --module "$work/$ex.wasm" \
    --sbom "$dir/sbom.cdx.json" --provenance "$dir/provenance.json" \
    --signing-key "$work/signing.key" --output "$work/$ex.palyra-skill" >/dev/null
  artifacts+=("$work/$ex.palyra-skill")
done

step "three nodes, install through a, calls through b and c, kill -9 c under load, restart c"
# palyra-bench starts and stops the nodes itself (its deferred cleanup runs
# on an error or SIGINT too); the trap removes the scratch directory.
"$work/bin/palyra-bench" --cluster-demo $quick --cluster-bin "$work/bin" \
  --cluster-artifacts "$(IFS=,; echo "${artifacts[*]}")"
echo "cluster-demo: OK"
