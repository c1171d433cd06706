#!/usr/bin/env bash
# Runs every native Go fuzz target of the module (every func FuzzXxx(f
# *testing.F) in a _test.go file, found afresh each run) for a short while:
# a smoke test that the targets still run, and a few seconds of fuzzing
# each. CI calls it from .ci/run.
#
#   scripts/fuzz-smoke.sh [REGEXP]   only the targets whose package/name matches
#   FUZZTIME=100000x scripts/fuzz-smoke.sh   fuzz each target longer (default 1000x)
#
# The default is a count of executions, not a duration: with a duration,
# Go 1.26's fuzzing coordinator can report a spurious "context deadline
# exceeded" failure, with no failing input, when the time runs out
# (golang/go#75804, fixed in Go 1.27); a count never takes that path.
#
# A failing input is written by go test under the package's
# testdata/fuzz/<target>/; commit it with the fix as a regression seed.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-1000x}
filter=${1:-}

module=$(awk '/^module /{print $2; exit}' go.mod)
targets=()
while read -r dir pkg; do
  for name in $(grep -hoE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' "$dir"/*_test.go 2>/dev/null | sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' | sort -u); do
    if [ -z "$filter" ] || [[ "$pkg/$name" =~ $filter ]]; then
      targets+=("$pkg $name")
    fi
  done
done < <(go list -f '{{.Dir}} {{.ImportPath}}' ./...)

echo "fuzz-smoke: ${#targets[@]} targets, -fuzztime $fuzztime each"
failed=()
start=$SECONDS
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  t0=$SECONDS
  if out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
    printf '  ok    %4ds  %s %s\n' $((SECONDS - t0)) "${pkg#"$module"/}" "$name"
  else
    printf '  FAIL  %4ds  %s %s\n' $((SECONDS - t0)) "${pkg#"$module"/}" "$name"
    echo "$out" | tail -n 40 | sed 's/^/        /'
    failed+=("$pkg $name")
  fi
done
echo "fuzz-smoke: ${#targets[@]} targets in $((SECONDS - start))s, ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
  printf '  failed: %s\n' "${failed[@]}"
  exit 1
fi
