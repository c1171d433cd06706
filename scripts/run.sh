#!/usr/bin/env bash
# Run: start the palyra-host daemon with the example skills installed.
#
# Builds palyra, palyra-host and palyra-sidecar into <state>/bin, builds the
# example skills (echo, kv-counter, report, event-log) with the standard Go
# toolchain, signs them with a key kept in <state>/examples (made once),
# installs each one not installed yet, binds the event-log skill to the
# skill:quarantined and skill:enabled hooks, then serves in the foreground
# until Ctrl-C / SIGTERM, printing the URL and the admin token file.
#
#   ./scripts/run.sh [palyra-host serve flags, e.g. --listen 127.0.0.1:7200]
#
# The state directory is $PALYRA_STATE_DIR, else the per-user default
# ($XDG_STATE_HOME/palyra or ~/.local/state/palyra). Needs Go and a C
# compiler (the sidecar links wasmtime with cgo).
set -euo pipefail
cd "$(dirname "$0")/.."

state=${PALYRA_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/palyra}
export PALYRA_STATE_DIR="$state"
unset PALYRA_DAEMON_URL
mkdir -p "$state/bin" "$state/examples"
chmod 700 "$state" "$state/examples"
bin="$state/bin"
palyra="$bin/palyra"

# The sidecar links wasmtime through cgo: without a C compiler the build
# fails later with "undefined: wasmtime.Caller", so say it first.
if ! command -v "${CC:-cc}" >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then
  echo "run.sh: palyra-sidecar links wasmtime with cgo and needs a C compiler: install gcc (Debian: apt-get install gcc) or set CC" >&2
  exit 1
fi

# progress CMD...: runs CMD and prints a line every 15 s while it runs (the
# first build compiles wasmtime's cgo bindings and takes a few minutes).
progress() {
  local what=$1; shift
  "$@" & local pid=$! start=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
      sleep 1
      kill -0 "$pid" 2>/dev/null || break 2
    done
    echo "    ... still $what ($((SECONDS - start)) s; the first build takes 2-3 minutes, later ones seconds)" >&2
  done
  wait "$pid"
}

echo "==> building palyra, palyra-host and palyra-sidecar into $bin" >&2
progress "building the binaries" go build -ldflags=-extldflags=-Wl,--gc-sections -o "$bin/" ./cmd/palyra ./cmd/palyra-host ./cmd/palyra-sidecar

key="$state/examples/signing.key"
if [ ! -f "$key" ]; then
  "$palyra" keys generate --out "$key" >&2
fi

for ex in echo kv-counter report event-log; do
  dir=sdk/examples/$ex
  id=$(sed -n 's/^skill_id = "\(.*\)"/\1/p' "$dir/skill.toml")
  if "$palyra" skills info "$id" >/dev/null 2>&1; then
    echo "==> $id is installed" >&2
    continue
  fi
  echo "==> building, signing and installing $id" >&2
  progress "building $id" env GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$state/examples/$ex.wasm" "./$dir"
  "$palyra" skills package build --manifest "$dir/skill.toml" --module "$state/examples/$ex.wasm" \
    --sbom "$dir/sbom.cdx.json" --provenance "$dir/provenance.json" \
    --signing-key "$key" --output "$state/examples/$ex.palyra-skill" >&2
  # The key is the operator's own: pinned on first use.
  "$palyra" skills install --artifact "$state/examples/$ex.palyra-skill" --allow-tofu >&2
done

for ev in skill:quarantined skill:enabled; do
  hook="event-log.${ev#skill:}"
  if ! "$palyra" hooks list --json | grep -q "\"hook_id\": *\"$hook\""; then
    "$palyra" hooks bind "$hook" --event "$ev" --skill palyra.event_log --tool palyra.on_event >&2
  fi
done

echo "==> starting palyra-host (Ctrl-C stops it; every sidecar stops with it)" >&2
exec "$bin/palyra-host" serve "$@"
