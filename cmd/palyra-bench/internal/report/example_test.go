package report_test

import (
	"fmt"
	"os"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
)

func ExampleReport_Markdown() {
	rep := &report.Report{
		Machine: report.Machine{
			OS: "linux", Arch: "amd64", Cores: 8, CPUModel: "AMD EPYC 7B13", GoVersion: "go1.24.0",
			Versions: map[string]string{"github.com/bytecodealliance/wasmtime-go/v25": "v25.0.0"},
		},
		Command:  "go run ./cmd/palyra-bench",
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Duration: 4*time.Minute + 12*time.Second,
		Rows: []report.Row{
			report.NewRow("A", "Go-guest tool call vs in-process wasmtime-go",
				report.Measurement{Name: "palyra", Unit: "µs", Median: 41.2, P99: 77.9, N: 5000},
				&report.Measurement{Name: "wasmtime-go", Unit: "µs", Median: 98.1, P99: 130, N: 5000},
				&report.Goal{Text: "≤ 0.6 × in-process wasmtime", On: report.OnRatio, Op: report.AtMost, Target: 0.6}),
			report.NewRow("D", "Host calls per second",
				report.Measurement{Unit: "calls/s", Median: 5210.4, N: 1}, nil,
				&report.Goal{On: report.OnValue, Op: report.AtLeast, Target: 4000}),
		},
	}
	if err := rep.Markdown(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// # palyra-bench report
	//
	// - Machine: linux/amd64, 8 cores, AMD EPYC 7B13
	// - Go: go1.24.0
	// - Versions:
	//   - github.com/bytecodealliance/wasmtime-go/v25 v25.0.0
	// - Command: `go run ./cmd/palyra-bench`
	// - Mode: full
	// - Started: 2026-01-02 03:04:05 UTC
	// - Duration: 4m12s
	//
	// | Scenario | What | Ours (median / p99) | Peer (median / p99) | Ratio ours/peer | Goal | Met |
	// |---|---|---|---|--:|---|:-:|
	// | A | Go-guest tool call vs in-process wasmtime-go | palyra: 41.2 µs / 77.9 µs | wasmtime-go: 98.1 µs / 130 µs | 0.42× | ≤ 0.6 × in-process wasmtime | ✓ |
	// | D | Host calls per second | 5,210 calls/s | — | — | ≥ 4,000 calls/s | ✓ |
	//
	// Ratio = our median ÷ the peer's median: for times and sizes below 1× is better, for rates (calls/s) above 1× is better. Met: ✓ goal met, ✗ goal missed, — no goal or no ratio.
}
