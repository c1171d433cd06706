// Package report holds the results of one palyra-bench run and renders them
// as Markdown, JSON and an SVG bar chart of the ratios.
//
// A [Report] is a list of [Row] values, one per scenario figure. A row pairs
// our [Measurement] with a peer's (wasmtime-go in process, wazero, Extism,
// ...) and carries the ratio ours/peer; a row without a peer is an absolute
// figure such as calls per second or resident memory. Either kind may carry
// a project [Goal], either on the ratio ("≤ 0.6 × in-process wasmtime") or on
// our value ("≥ 4,000 calls/s"), and the renderers show whether it was met.
//
// Typical use from the benchmark's main:
//
//	rep := &report.Report{
//		Machine: report.DetectMachine(versions),
//		Command: "go run ./cmd/palyra-bench --quick",
//		Quick:   true,
//		Started: start,
//	}
//	ours := report.FromDurations("palyra", &oursSample, time.Microsecond)
//	peer := report.FromDurations("wasmtime-go", &peerSample, time.Microsecond)
//	rep.Rows = append(rep.Rows, report.NewRow("A", "Go-guest tool call vs in-process wasmtime-go",
//		ours, &peer, &report.Goal{On: report.OnRatio, Op: report.AtMost, Target: 0.6}))
//	rep.Duration = time.Since(start)
//	err := rep.WriteFiles(outDir) // report.md, report.json, ratios.svg
//
// # Ratios
//
// Row.Ratio is always Ours.Median / Peer.Median, whatever the unit: for a
// latency a ratio below 1 means we are faster, for a throughput a ratio above
// 1 does. The goal's operator says which way is good. The ratio is derived
// data: [NewRow] and [Row.Compute] set it, and every renderer recomputes it,
// so a stale value is never shown. It is 0 when there is no peer or the
// peer's median is not positive.
//
// # Goals
//
// A goal is met, not met, or not evaluable. It is not evaluable when the row
// has no goal, or when the goal is on the ratio and the row has no ratio (for
// example because the peer could not be measured). The Markdown shows ✓, ✗
// and — for the three cases and the JSON has "goal_met": true, false or null.
//
// # Validation
//
// [Report.Validate] rejects reports the renderers cannot show faithfully:
// unknown goal kinds or operators, NaN or infinite figures (JSON cannot encode
// them), a peer measured in another unit than ours, and rows without a
// scenario. Markdown, JSON, SVG and WriteFiles validate first and return an
// error wrapping [ErrInvalid] instead of writing a misleading report.
//
// # JSON
//
// The JSON form (see [Report.JSON]) is the --json output of palyra-bench and
// is kept stable: field names are snake_case, Report.Duration is written as
// "duration_seconds" (a number of seconds), and every row has a computed
// "goal_met". Reading a report back with encoding/json restores every field;
// goal_met is ignored on input since it is recomputed.
//
// # Output
//
// Every renderer is deterministic: the same Report gives the same bytes, so
// the outputs can be diffed between runs and checked against golden files.
// A Report is not safe for concurrent modification; rendering does not modify
// it, so concurrent renders of an unchanging Report are safe.
package report
