#!/usr/bin/env bash
# Console e2e: the web console in Debian's Chromium against a real daemon.
#
# Starts palyra-host with the example skills (scripts/run.sh, in a fresh
# temporary state directory, on a random loopback port), waits for it to
# serve, then runs host/console/e2e/console.e2e.mjs (playwright-core) with
# PALYRA_URL and PALYRA_TOKEN, and stops the daemon with SIGTERM. The
# console is the one embedded in the binary (the committed
# host/console/dist); nothing of the front end is built here. For the
# registry steps it makes a local registry directory holding
# palyra.registry_echo 1.0.0 (the echo example under another id, signed
# with the examples' key) and a program that publishes 1.1.0 there (its
# manifest allowlists api.example.com: an update with a capability diff),
# passed as PALYRA_E2E_REGISTRY and PALYRA_E2E_PUBLISH_NEXT. It installs
# palyra.approval_echo (the echo example whose tools require approval) for
# the Approvals page. Needs Go,
# Node.js, `npm ci` run in host/console, and /usr/bin/chromium.
# The e2e runs axe-core on every page and saves each page at 1400 and 420 px
# wide as screenshots in $E2E_ARTIFACTS (default host/console/e2e/artifacts/).
set -euo pipefail
cd "$(dirname "$0")/.."

[[ -d host/console/node_modules/playwright-core ]] || { echo "console-e2e: run 'npm ci' in host/console first" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/palyra-console-e2e.XXXXXX")
pid=
cleanup() {
  local rc=$?
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    # The daemon (run.sh execs it) leads its own process group; sidecars
    # have theirs and are stopped by the daemon.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if [[ $rc -ne 0 && -f "$tmp/daemon.log" ]]; then
    echo "console-e2e: daemon log (last 40 lines):" >&2
    tail -n 40 "$tmp/daemon.log" >&2
  fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "==> starting palyra-host with the example skills (state $tmp)" >&2
PALYRA_STATE_DIR="$tmp" setsid ./scripts/run.sh --listen 127.0.0.1:0 >"$tmp/daemon.log" 2>&1 &
pid=$!

info="$tmp/daemon/daemon.json"
for _ in $(seq 1 600); do
  [[ -s "$info" ]] && break
  kill -0 "$pid" 2>/dev/null || { echo "console-e2e: the daemon exited before serving" >&2; exit 1; }
  sleep 0.5
done
[[ -s "$info" ]] || { echo "console-e2e: no $info after 300 s" >&2; exit 1; }

url=$(node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).url)' "$info")
token=$(tr -d '\r\n' <"$tmp/daemon/admin-token")
echo "==> daemon at $url" >&2

echo "==> a local registry with palyra.registry_echo 1.0.0, and 1.1.0 ready to publish" >&2
reg="$tmp/registry"
src="$tmp/registry-src"
mkdir -p "$reg" "$src"
package_echo() { # VERSION OUTPUT [MANIFEST TEXT TO APPEND]
  sed -e 's/^skill_id = .*/skill_id = "palyra.registry_echo"/' -e "s/^version = .*/version = \"$1\"/" -e 's/^name = "Echo"/name = "Registry echo"/' \
    sdk/examples/echo/skill.toml >"$src/skill-$1.toml"
  printf '%s' "${3:-}" >>"$src/skill-$1.toml"
  "$tmp/bin/palyra" skills package build --manifest "$src/skill-$1.toml" --module "$tmp/examples/echo.wasm" \
    --sbom sdk/examples/echo/sbom.cdx.json --provenance sdk/examples/echo/provenance.json \
    --signing-key "$tmp/examples/signing.key" --output "$2" >&2
}
package_echo 1.0.0 "$reg/registry-echo-1.0.0.palyra-skill"
package_echo 1.1.0 "$src/registry-echo-1.1.0.palyra-skill" $'\n[capabilities]\nhttp_egress_allowlist = ["api.example.com"]\n'
"$tmp/bin/palyra" skills registry build --dir "$reg" --signing-key "$tmp/examples/signing.key" >&2
cat >"$tmp/publish-next.sh" <<NEXT
#!/usr/bin/env bash
set -euo pipefail
cp "$src/registry-echo-1.1.0.palyra-skill" "$reg/"
"$tmp/bin/palyra" skills registry build --dir "$reg" --signing-key "$tmp/examples/signing.key" >&2
NEXT
chmod +x "$tmp/publish-next.sh"

echo "==> palyra.approval_echo: the echo example whose tools require approval" >&2
sed -e 's/^skill_id = .*/skill_id = "palyra.approval_echo"/' -e 's/^name = "Echo"/name = "Approval echo"/' -e 's/^requires_approval = false/requires_approval = true/' \
  sdk/examples/echo/skill.toml >"$src/skill-approval.toml"
"$tmp/bin/palyra" skills package build --manifest "$src/skill-approval.toml" --module "$tmp/examples/echo.wasm" \
  --sbom sdk/examples/echo/sbom.cdx.json --provenance sdk/examples/echo/provenance.json \
  --signing-key "$tmp/examples/signing.key" --output "$src/approval-echo.palyra-skill" >&2
"$tmp/bin/palyra" skills install --url "$url" --token "$token" --artifact "$src/approval-echo.palyra-skill" --allow-tofu >&2

status=0
PALYRA_URL="$url" PALYRA_TOKEN="$token" PALYRA_E2E_REGISTRY="$reg" PALYRA_E2E_PUBLISH_NEXT="$tmp/publish-next.sh" PALYRA_E2E_REGISTRY_SKILL=palyra.registry_echo \
  node host/console/e2e/console.e2e.mjs || status=$?

echo "==> stopping the daemon" >&2
kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
wait "$pid" 2>/dev/null || true
pid=
exit $status
