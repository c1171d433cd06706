// Command palyra-bench is the project's performance claim as one command: it runs
// Palyra-Go and the systems a user would pick instead side by side, in one
// process run, and reports the ratios ours/peer next to the project's goals.
//
//	go run ./cmd/palyra-bench            # full run, a few minutes
//	go run ./cmd/palyra-bench --quick    # smoke run, under a minute (CI runs it)
//	go run ./cmd/palyra-bench --json     # the report as JSON
//	go run ./cmd/palyra-bench --out DIR  # also report.md, report.json, ratios.svg
//	go run ./cmd/palyra-bench --only A,B --cpuprofile cpu.pprof
//
// The command is its own Go module (cmd/palyra-bench/go.mod) so that the
// peers' dependencies (wazero, the Extism go-sdk) never enter the main
// module; the repository's go.work puts both in one workspace, which is what
// lets `go run ./cmd/palyra-bench` work from the root. It needs the
// repository's source tree and the Go toolchain: it builds palyra-sidecar,
// the raw go-plugin baseline (host/supervisor/testdata/rawplugin), the echo
// example twice and the Extism guest before it starts.
//
// The scenarios (every call's output is checked, on every side):
//
//   - A, Go-guest tool call: the echo example through host.Call (its own
//     sidecar, a fresh instance per call from the prepared pool) against the
//     same module in-process on wasmtime-go and on wazero, and the same logic
//     on the Extism go-sdk (internal/peers), each with a fresh instance per
//     call; plus the echo example built with the SDK as it was before the
//     profiled change (build tag palyra_sdk_json_envelope), the before/after.
//   - B, trivial WAT tool: host.Call against a raw hashicorp/go-plugin gRPC
//     unary call with the same payload size.
//   - C, cold start: spawn to first reply, precompiled and with the cache
//     cleared, against a raw go-plugin start to first RPC.
//   - D, throughput: 8 concurrent callers over 4 skills for a fixed time,
//     against the same load on 4 raw go-plugin plugins.
//   - E, density: RSS of idle sidecars and of a host-embedding process
//     (internal/densityapp) with 1, 10 and 50 installed skills once their
//     idle sidecars were reaped.
//   - F, admission: verify + audit + install of a 4 MiB artifact, with and
//     without the precompile step.
//   - G, daemon API: the trivial WAT tool through palyra-host's HTTP JSON
//     API, its gRPC API and its MCP endpoint (tools/call from the official
//     go-sdk client over streamable HTTP at /mcp) (in-process daemon,
//     loopback TCP, token auth) against host.Call on the daemon's own host,
//     the same sidecar.
//
// Contenders run interleaved, call by call with the order rotated each
// round, after warm-up rounds, so the noise of a shared machine falls on
// every side alike; medians and p99 come from internal/stats, the rendering
// from internal/report. The bench reports; it never fails on a goal.
//
// Profiling: --cpuprofile profiles this process (the supervisor side), and
// PALYRA_SIDECAR_CPUPROFILE_DIR=DIR makes every sidecar write
// DIR/sidecar-<pid>.pprof when it is stopped.
package main
