// Command palyra-bench is the project's performance claim as one command: it runs
// Palyra-Go and the systems a user would pick instead side by side, in one
// process run, and reports the ratios ours/peer next to the project's goals.
//
//	go run ./cmd/palyra-bench            # full run, a few minutes
//	go run ./cmd/palyra-bench --quick    # smoke run, under a minute (CI runs it)
//	go run ./cmd/palyra-bench --json     # the report as JSON
//	go run ./cmd/palyra-bench --out DIR  # also report.md, report.json, ratios.svg
//	go run ./cmd/palyra-bench --only A,B --cpuprofile cpu.pprof
//	go run ./cmd/palyra-bench --reliability          # the reliability suite, full run
//	go run ./cmd/palyra-bench --reliability --quick  # its quick mode (CI runs it)
//
// The command is its own Go module (cmd/palyra-bench/go.mod) so that the
// peers' dependencies (wazero, the Extism go-sdk) never enter the main
// module; the repository's go.work puts both in one workspace, which is what
// lets `go run ./cmd/palyra-bench` work from the root. It needs the
// repository's source tree and the Go toolchain: it builds palyra-sidecar
// (as the README does, with buildinfo.SidecarLDFlags, and once more without
// them for scenario E's before/after row), the raw go-plugin baseline (host/supervisor/testdata/rawplugin), the echo
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
//   - E, density: RSS of idle sidecars (and of the trivial WAT skill's on
//     a sidecar linked without --gc-sections, the before/after), the PSS of
//     1, 10 and 50 idle sidecars, and the RSS of a host-embedding process
//     (internal/densityapp) with 1, 10 and 50 installed skills once their
//     idle sidecars were reaped.
//   - F, admission: verify + audit + install of a 4 MiB artifact, with and
//     without the precompile step.
//   - G, daemon API: the trivial WAT tool through palyra-host's HTTP JSON
//     API, its gRPC API and its MCP endpoint (tools/call from the official
//     go-sdk client over streamable HTTP at /mcp) (in-process daemon,
//     loopback TCP, token auth) against host.Call on the daemon's own host,
//     the same sidecar. Two floors give the rows context: a bare net/http
//     handler calling host.Call (what loopback HTTP costs any HTTP API
//     here) and tools/call through host/mcpserver over the SDK's in-memory
//     transport (what the MCP go-sdk costs with no HTTP at all).
//   - H, cluster: real palyra-host processes, each a node with an embedded
//     nats-server on loopback (internal/clusterproc, as `serve
//     --cluster-embedded` runs them): the trivial tool through a node that
//     serves no skill (its calls are routed over NATS) against a node that
//     serves it against host.Call in this process; and calls/s of 8 callers
//     × 4 skills through three nodes' APIs against one node's (on one
//     machine the nodes share its cores: it shows the overhead, not scaling).
//
// --cluster-demo runs the cluster demo instead (scripts/cluster-demo.sh
// runs it): see clusterDemo.
//
// Contenders run interleaved, call by call with the order rotated each
// round, after warm-up rounds, so the noise of a shared machine falls on
// every side alike; medians and p99 come from internal/stats, the rendering
// from internal/report. The bench reports; it never fails on a goal.
//
// # The reliability suite
//
// --reliability runs scenarios R1 to R8 instead, as an attacker and an
// operator would try them, and prints a table of cases tried and held with
// each scenario's figures (--json: the same as JSON; --out DIR: also
// reliability.md and reliability.json; --only R1,R3). The command exits 1
// when a case did not hold; R1's recovery times are figures with a goal,
// not cases. It builds palyra-sidecar, palyra-host, palyra and the echo and
// http-fetch examples first.
//
//   - R1, kill a sidecar: 8 callers over 4 skills (two Go-guest echo, two
//     WAT) while each skill's sidecar, in turn, is SIGKILLed (its pid from
//     host.Sidecars; 40 kills, 20 of each kind, 4 in quick mode). Cases: after each kill the
//     victim answers again, no call of another skill failed and every
//     failure carried a code. Figures: the victim's codes, recovery time
//     (kill → the victim's next successful call, on a new sidecar) median
//     and max per guest kind, against the 100 ms goal.
//   - R2, SIGKILL the daemon: a real palyra-host (private TMPDIR) with two
//     running sidecars is killed 5 times (1 in quick mode), restarted each
//     time; no sidecar may be alive 1 s after a kill, and after a final
//     restart and clean stop nothing may be left in TMPDIR or in the state
//     dir's run/socket dirs. Entries left after each kill are figures.
//   - R3, hostile artifacts: about 30 crafted archives (not a zip, zip
//     bomb, oversized entries, path traversal in several spellings,
//     symlinks, devices, duplicates, too many entries, encryption, unknown
//     compression, tampered entries and signatures, an unknown key,
//     non-wasm, foreign imports, a module over 8 MiB, 300,000 functions)
//     installed on an install-only host whose state dir is deep in a
//     sandbox dir. Each must be refused with a code (a directory entry may
//     also be ignored); nothing may change in the sandbox outside the
//     state dir.
//   - R4, hostile guests: the testdata/wasm fixtures (loop, sleep, memory
//     and table bombs, stack overflow, trap, output, host-call and log
//     floods, bad pointers, non-JSON output) and an input over
//     host.MaxInputBytes, each with its expected code or bounded output,
//     while two callers call a good skill that must see no failure.
//   - R5, kill -9 during install/remove: the palyra CLI installs, upgrades
//     and removes a skill and is SIGKILLed after a random delay up to the
//     operation's unkilled time (60 trials, 8 in quick mode); the state
//     dir must then show the old or the new state. Then `install
//     --allow-tofu` on fresh state dirs (20 trials, 4 in quick mode): the
//     publisher's pin must exist exactly when the skill does.
//   - R6, SSRF: about 55 URLs (loopback, private, CGNAT, link-local and
//     metadata, multicast and broadcast in IPv4, IPv6, mapped, decimal,
//     octal, hex and short forms; names resolving to them; redirects to
//     them from an allowed server) through the egress client with a grant
//     of any host on the listener's port: each must be refused by the
//     rules (a DenyError), and a 127.0.0.1 and ::1 listener on that port
//     must see no connection.
//   - R7, secrets: the http-fetch example on an in-process daemon sends a
//     vault secret to a local server; its value (plain, base64, hex) is
//     searched for in the trace-level logs, every API response, the event
//     journal, /metrics and every file of the state dir.
//   - R8, escape probes of the hardened sidecar: not available in this
//     build (the row says so; relEscapeProbes is where the probes go).
//
// Profiling: --cpuprofile profiles this process (the supervisor side), and
// PALYRA_SIDECAR_CPUPROFILE_DIR=DIR makes every sidecar write
// DIR/sidecar-<pid>.pprof when it is stopped.
package main
