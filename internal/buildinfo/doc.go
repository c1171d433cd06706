// Package buildinfo says what a Palyra-Go binary is: its version, the
// commit it was built from, the Go toolchain, the wasmtime-go module, the
// skills ABI and the sidecar protocol. palyra, palyra-host and
// palyra-sidecar print it for `version` and `--version`, and `palyra
// doctor` compares the sidecar's with its own.
//
// # Where the values come from
//
// The commit, the commit time and whether the tree was modified come from
// the build's version-control stamp (runtime/debug.ReadBuildInfo, the
// vcs.* settings `go build` records in a git checkout); the commit is
// "unknown" when the binary carries none (go test, -buildvcs=false, a
// build outside a checkout). The version is the main module's version
// when the binary was built by `go install MODULE@VERSION`, else "devel".
// The wasmtime-go version is that of the linked module, else (a binary
// that does not link it, like palyra-host) the version this module
// requires, WasmtimeGoRequired.
//
// A release build sets the version and the commit with the linker, which
// wins over the build info:
//
//	go build -ldflags "-X github.com/palyra-go/palyra/internal/buildinfo.version=v0.2.0 \
//	  -X github.com/palyra-go/palyra/internal/buildinfo.commit=$(git rev-parse HEAD)" ./cmd/...
package buildinfo
