#!/usr/bin/env bash
# Regenerates the Go code of the wire contracts under proto/ with buf and the
# locally installed, version-pinned protoc-gen-go and protoc-gen-go-grpc.
# The tools are installed into .cache/bin (repo-local, git-ignored) with
# `go install`; nothing is fetched from the Buf Schema Registry.
#
#   scripts/gen-proto.sh           lint, then regenerate
#   scripts/gen-proto.sh --check   lint, regenerate, and fail when the
#                                  generated code differs from the tree
#                                  (the committed code is stale)
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned tool versions. protoc-gen-go must match google.golang.org/protobuf
# in go.mod, protoc-gen-go-grpc must support google.golang.org/grpc in go.mod.
BUF_VERSION=v1.75.0
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.0

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

bin="$PWD/.cache/bin"
mkdir -p "$bin"
export PATH="$bin:$PATH"
# `go install pkg@version` ignores the main module; keep GOFLAGS from making
# it fail (-mod=readonly is for the main module's builds).
install() { # name module@version version-probe-output
  local name=$1 pkg=$2 want=$3
  if [ -x "$bin/$name" ] && "$bin/$name" --version 2>/dev/null | grep -q -- "${want#v}"; then
    return
  fi
  echo "gen-proto: installing $pkg" >&2
  GOFLAGS= GOBIN="$bin" go install "$pkg"
}
install buf github.com/bufbuild/buf/cmd/buf@"$BUF_VERSION" "$BUF_VERSION"
install protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go@"$PROTOC_GEN_GO_VERSION" "$PROTOC_GEN_GO_VERSION"
install protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc@"$PROTOC_GEN_GO_GRPC_VERSION" "$PROTOC_GEN_GO_GRPC_VERSION"

snapshot() { find proto -type f -print0 | sort -z | xargs -0 sha256sum; }
before=$(snapshot)

buf lint
buf generate

if $check; then
  after=$(snapshot)
  if [ "$before" != "$after" ]; then
    echo "gen-proto: generated code under proto/ is stale; run scripts/gen-proto.sh and commit the result:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    git status --porcelain -- proto >&2 || true
    exit 1
  fi
  if git rev-parse --git-dir >/dev/null 2>&1; then
    dirty=$(git status --porcelain -- proto)
    if [ -n "$dirty" ]; then
      echo "gen-proto: warning: proto/ differs from the last commit (uncommitted changes):" >&2
      echo "$dirty" >&2
    fi
  fi
fi
