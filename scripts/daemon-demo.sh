#!/usr/bin/env bash
# The README's daemon walk-through, checked: start ./scripts/run.sh in a
# throw-away state dir, list skills with curl and the admin token, call a
# tool over HTTP, quarantine a skill and see the event-log hook skill receive
# the event, then SIGTERM the daemon and check it exits 0 with no sidecar
# left. CI runs it. Needs Go and curl.
set -euo pipefail
cd "$(dirname "$0")/.."

work=${PALYRA_DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/palyra-daemon-demo.XXXXXX")}
export PALYRA_STATE_DIR="$work/state"
port=${PALYRA_DEMO_PORT:-7199}
url="http://127.0.0.1:$port"
fail() { printf 'daemon-demo: %s\n' "$*" >&2; exit 1; }
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "./scripts/run.sh --listen 127.0.0.1:$port (in the background)"
./scripts/run.sh --listen "127.0.0.1:$port" >"$work/daemon.out" 2>"$work/daemon.err" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  curl -fsS "$url/readyz" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { cat "$work/daemon.err" >&2; fail "palyra-host exited"; }
  sleep 0.2
done
curl -fsS "$url/readyz" || fail "palyra-host is not ready"
cat "$work/daemon.out"
token=$(cat "$PALYRA_STATE_DIR/daemon/admin-token")
auth="Authorization: Bearer $token"

step "without the token: 401"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/skills")
echo "HTTP $code"
[ "$code" = 401 ] || fail "expected 401 without the token"

step "list skills: curl -H \"Authorization: Bearer \$(cat $PALYRA_STATE_DIR/daemon/admin-token)\" $url/v1/skills"
out=$(curl -fsS -H "$auth" "$url/v1/skills")
echo "$out" | head -c 600; echo
for id in palyra.echo palyra.kv_counter palyra.report palyra.event_log; do
  grep -q "\"skill_id\":\"$id\"" <<<"$out" || fail "$id is not listed"
done

step "call a tool over HTTP"
out=$(curl -fsS -H "$auth" -d '{"input":{"text":"hello over HTTP"}}' "$url/v1/skills/palyra.echo/tools/palyra.echo/call")
echo "$out"
grep -q 'hello over HTTP' <<<"$out" || fail "the echo output is missing"

step "quarantine palyra.kv_counter; the event-log hook skill receives skill:quarantined"
curl -fsS -H "$auth" -H 'X-Palyra-Principal: user:demo' -d '{"reason":"demo: looks suspicious"}' "$url/v1/skills/palyra.kv_counter/quarantine"; echo
for _ in $(seq 1 100); do
  out=$(curl -fsS -H "$auth" -d '{"input":{"limit":5}}' "$url/v1/skills/palyra.event_log/tools/palyra.recent/call")
  grep -q 'demo: looks suspicious' <<<"$out" && break
  sleep 0.2
done
echo "$out"
grep -q '"event":"skill:quarantined"' <<<"$out" || fail "the hook skill did not record skill:quarantined"
grep -q 'demo: looks suspicious' <<<"$out" || fail "the hook skill did not get the event payload"

step "the quarantined skill is refused"
code=$(curl -s -o "$work/refused.json" -w '%{http_code}' -H "$auth" -d '{"input":{"name":"x"}}' "$url/v1/skills/palyra.kv_counter/tools/palyra.increment/call")
cat "$work/refused.json"
[ "$code" = 403 ] || fail "expected 403 for a quarantined skill, got $code"

step "SIGTERM: drain, stop the sidecars, exit 0"
kids=$(pgrep -P $pid || true)  # run.sh execs palyra-host: $pid is the daemon
kill -TERM $pid
wait $pid || fail "palyra-host did not exit 0"
trap - EXIT
sleep 0.2
for k in $kids; do
  if kill -0 "$k" 2>/dev/null; then fail "child $k outlived palyra-host"; fi
done
[ ! -e "$PALYRA_STATE_DIR/daemon/daemon.json" ] || fail "daemon.json left behind"
echo "palyra-host exited 0; no sidecar left"
