package report

import (
	"time"
)

// fixture returns a report exercising every kind of row: ratio goals met and
// missed, a value goal on a charted row, a context row, absolute rows with
// and without goals, a ratio goal whose peer is missing, a clamped ratio, and
// names with characters that need escaping in Markdown and XML.
func fixture() *Report {
	us := func(name string, median, p99 float64) *Measurement {
		return &Measurement{Name: name, Unit: "µs", Median: median, P99: p99, N: 2000}
	}
	ratioAtMost := func(text string, target float64) *Goal {
		return &Goal{Text: text, On: OnRatio, Op: AtMost, Target: target}
	}
	return &Report{
		Machine: Machine{
			OS: "linux", Arch: "amd64", Cores: 2, CPUModel: "Intel(R) Xeon(R) Processor",
			GoVersion: "go1.26.8",
			Versions: map[string]string{
				"github.com/bytecodealliance/wasmtime-go/v25": "v25.0.0",
				"github.com/tetratelabs/wazero":               "v1.9.0",
				"github.com/extism/go-sdk":                    "v1.7.1",
			},
		},
		Command:  "go run ./cmd/palyra-bench --quick --out /tmp/bench",
		Quick:    true,
		Started:  time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC),
		Duration: 83*time.Second + 250*time.Millisecond,
		Rows: []Row{
			NewRow("A", "Go-guest tool call vs in-process wasmtime-go",
				*us("palyra", 41.2, 77.9), us("wasmtime-go", 98.1, 130), ratioAtMost("≤ 0.6 × in-process wasmtime", 0.6)),
			NewRow("B", "Cold start vs wazero",
				*us("palyra", 12500, 14100), us("wazero", 9800, 11020.6), ratioAtMost("", 1.1)),
			NewRow("C", "gRPC round trip vs direct call",
				*us("", 250, 400), us("direct", 0.8, 1.2), nil),
			NewRow("C", `Skill <b>&"pipe|'`,
				Measurement{Unit: "ms", Median: 2.5, N: 1}, &Measurement{Unit: "ms", Median: 5, N: 1},
				&Goal{On: OnValue, Op: AtMost, Target: 3}),
			NewRow("D", "Host calls per second",
				Measurement{Name: "palyra", Unit: "calls/s", Median: 5210.4, N: 1},
				nil, &Goal{Text: "≥ 4,000 calls/s", On: OnValue, Op: AtLeast, Target: 4000}),
			NewRow("E", "Resident memory with 10 skills",
				Measurement{Unit: "MiB", Median: 212.25, N: 1}, nil,
				&Goal{On: OnValue, Op: AtMost, Target: 200}),
			NewRow("E", "Sidecar binary size", Measurement{Unit: "MiB", Median: 31.4, N: 1}, nil, nil),
			{
				Scenario: "F", Title: "Extism plug-in call",
				Ours: *us("palyra", 40, 60), Goal: ratioAtMost("", 1),
				Note: "Extism peer failed: plug-in \"echo\" did not load",
			},
		},
		Notes: []string{"Quick run: 200 calls per scenario.", "Times are wall clock | medians of interleaved rounds."},
	}
}
