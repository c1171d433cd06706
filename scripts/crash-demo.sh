#!/usr/bin/env bash
# Crash demo: one sidecar per skill, and a crash stays in its skill.
# Builds palyra and palyra-sidecar, generates a signing key, packages and
# installs the echo and report example skills, then runs
#   palyra skills loop --call palyra.echo:... --call palyra.report:...
# in the background, kill -9s the echo skill's sidecar while the loop runs,
# and checks the loop's log: report's calls never fail; echo's calls fail
# only with sidecar_crashed (the one in flight, if any) and then succeed
# again in a new sidecar. Exits non-zero otherwise. Needs only Go.
set -euo pipefail
cd "$(dirname "$0")/.."

work=${PALYRA_DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/palyra-crash-demo.XXXXXX")}
mkdir -p "$work"
export PALYRA_STATE_DIR="$work/state"
unset PALYRA_SKILLS_TRUST_STORE PALYRA_SIDECAR
palyra="$work/bin/palyra"
log="$work/loop.log"

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
fail() { printf 'crash-demo: %s\n' "$*" >&2; exit 1; }
loop_pid=
cleanup() { if [[ -n "$loop_pid" ]] && kill -0 "$loop_pid" 2>/dev/null; then kill "$loop_pid" 2>/dev/null || true; wait "$loop_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

step "build palyra and palyra-sidecar (side by side, so palyra finds the sidecar)"
go build -o "$palyra" ./cmd/palyra
go build -ldflags=-extldflags=-Wl,--gc-sections -o "$work/bin/palyra-sidecar" ./cmd/palyra-sidecar

step "generate a signing key"
"$palyra" keys generate --out "$work/signing.key"

# build_install <example> <module name>: build, package, sign and install.
build_install() {
  local ex=sdk/examples/$1
  GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$work/$2.wasm" "./$ex"
  "$palyra" skills package build --manifest "$ex/skill.toml" --module "$work/$2.wasm" \
    --sbom "$ex/sbom.cdx.json" --provenance "$ex/provenance.json" \
    --signing-key "$work/signing.key" --output "$work/$1.palyra-skill"
  "$palyra" skills install --artifact "$work/$1.palyra-skill" --allow-tofu
}

step "build, package and install the echo and report examples"
build_install echo echo
build_install report report

step "start the loop: echo and report, round-robin, every 20 ms"
"$palyra" skills loop --interval 20ms \
  --call 'palyra.echo:palyra.echo:{"text":"hello"}' \
  --call 'palyra.report:palyra.report:{"title":"demo","rows":[{"label":"a","value":1}]}' \
  >"$log" 2>"$work/loop.stderr" &
loop_pid=$!

pid_of() { grep "^sidecar skill=$1 " "$log" | tail -n1 | sed 's/.*pid=//'; }
for _ in $(seq 1 300); do
  [[ -n "$(pid_of palyra.echo)" && -n "$(pid_of palyra.report)" ]] && break
  kill -0 "$loop_pid" 2>/dev/null || { cat "$log" "$work/loop.stderr"; fail "the loop ended early"; }
  sleep 0.1
done
echo_pid=$(pid_of palyra.echo)
report_pid=$(pid_of palyra.report)
[[ -n "$echo_pid" && -n "$report_pid" ]] || fail "the sidecars did not start"
echo "echo sidecar pid=$echo_pid, report sidecar pid=$report_pid"
sleep 1

step "kill -9 the echo sidecar (pid $echo_pid) while the loop runs"
kill_line=$(wc -l <"$log")
kill -9 "$echo_pid"
for _ in $(seq 1 100); do
  new=$(pid_of palyra.echo)
  [[ -n "$new" && "$new" != "$echo_pid" ]] && break
  sleep 0.1
done
sleep 1

step "stop the loop"
kill -INT "$loop_pid"
wait "$loop_pid" || true
loop_pid=

step "the loop's log around the kill"
sed -n "$((kill_line > 8 ? kill_line - 8 : 1)),$((kill_line + 24))p" "$log"
echo "..."
tail -n 4 "$log"

step "check"
grep -q 'ok=false' <(grep '^call=.* skill=palyra.report ' "$log") && fail "a report call failed"
if grep '^call=.* skill=palyra.echo ' "$log" | grep 'ok=false' | grep -vq 'code=sidecar_crashed'; then
  fail "an echo call failed with another code than sidecar_crashed"
fi
new_pid=$(pid_of palyra.echo)
[[ -n "$new_pid" && "$new_pid" != "$echo_pid" ]] || fail "no new echo sidecar after the kill"
grep -q "skill=palyra.echo tool=palyra.echo ok=true code=ok sidecar_pid=$new_pid " "$log" || fail "echo did not recover in sidecar $new_pid"
[[ "$(grep -c "^call=.* skill=palyra.report .*sidecar_pid=$report_pid " "$log")" == "$(grep -c '^call=.* skill=palyra.report ' "$log")" ]] || fail "the report sidecar changed"
crashed=$(grep '^call=.* skill=palyra.echo ' "$log" | grep -c 'code=sidecar_crashed' || true)
echo "report: $(grep -c 'skill=palyra.report .*ok=true' "$log") calls, all ok, one sidecar (pid $report_pid)"
echo "echo: $crashed call(s) failed with sidecar_crashed, then recovered in sidecar pid $new_pid (was $echo_pid)"
echo "crash-demo: OK (log: $log)"
