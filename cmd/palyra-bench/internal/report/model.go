package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrInvalid is wrapped by the errors of [Report.Validate], and so by every
// renderer given an invalid report.
var ErrInvalid = errors.New("report: invalid report")

// Goal kinds, the values of [Goal.On].
const (
	// OnRatio compares the row's ratio ours/peer with the target.
	OnRatio = "ratio"
	// OnValue compares the median of our measurement with the target.
	OnValue = "value"
)

// Goal operators, the values of [Goal.Op].
const (
	// AtMost is met when the compared figure is ≤ the target.
	AtMost = "<="
	// AtLeast is met when the compared figure is ≥ the target.
	AtLeast = ">="
)

// Machine describes the computer and the toolchain a report was measured on.
// It deliberately has no host name.
type Machine struct {
	OS        string `json:"os"`         // runtime.GOOS
	Arch      string `json:"arch"`       // runtime.GOARCH
	Cores     int    `json:"cores"`      // runtime.NumCPU
	CPUModel  string `json:"cpu_model"`  // "model name" of /proc/cpuinfo, or "unknown"
	GoVersion string `json:"go_version"` // runtime.Version
	// Versions maps a module path to the version used, for the runtimes and
	// libraries compared (wasmtime-go, wazero, Extism go-sdk, go-plugin, grpc).
	Versions map[string]string `json:"versions,omitempty"`
}

// Measurement is one summarised figure: the median and 99th percentile of N
// observations in Unit.
type Measurement struct {
	// Name says whose figure this is, e.g. "palyra" or "wasmtime-go"; it
	// may be empty.
	Name string `json:"name,omitempty"`
	// Unit is appended to the numbers when shown, e.g. "µs", "ms",
	// "calls/s", "MiB".
	Unit   string  `json:"unit"`
	Median float64 `json:"median"`
	// P99 is the 99th percentile; 0 means not applicable (a single figure
	// such as a throughput or a memory size) and is not shown.
	P99 float64 `json:"p99,omitempty"`
	// N is the number of observations summarised.
	N int `json:"n"`
}

// Goal is a project target for one row.
type Goal struct {
	// Text is how the goal is shown, e.g. "≤ 0.6 × in-process wasmtime".
	// When empty, [Goal.String] builds one from Op and Target.
	Text string `json:"text,omitempty"`
	// On is OnRatio or OnValue.
	On string `json:"on"`
	// Op is AtMost or AtLeast.
	Op string `json:"op"`
	// Target is the bound, a ratio for OnRatio and a value in the unit of
	// the row's measurement for OnValue.
	Target float64 `json:"target"`
}

// Row is one line of the report: our figure, optionally a peer's, their
// ratio and a goal.
type Row struct {
	// Scenario is the scenario letter, "A" to "F"; several rows may share one.
	Scenario string `json:"scenario"`
	// Title says what was measured, e.g. "Go-guest tool call vs
	// in-process wasmtime-go".
	Title string       `json:"title"`
	Ours  Measurement  `json:"ours"`
	Peer  *Measurement `json:"peer,omitempty"` // nil for an absolute figure
	// Ratio is Ours.Median / Peer.Median, set by NewRow and Compute; 0
	// when there is no ratio. See the package documentation.
	Ratio float64 `json:"ratio,omitempty"`
	Goal  *Goal   `json:"goal,omitempty"` // nil: a context row without a goal
	// Note is an optional remark shown with the report's notes.
	Note string `json:"note,omitempty"`
}

// Report is the result of one palyra-bench run.
type Report struct {
	Machine Machine `json:"machine"`
	// Command is the command line that produced the report.
	Command string `json:"command"`
	// Quick reports a --quick run, whose figures are indicative only.
	Quick   bool      `json:"quick"`
	Started time.Time `json:"started"`
	// Duration is the wall time of the whole run, written to JSON as
	// "duration_seconds".
	Duration time.Duration `json:"-"`
	Rows     []Row         `json:"rows"`
	// Notes are free-form remarks listed after the table.
	Notes []string `json:"notes,omitempty"`
}

// NewRow returns a row with its ratio computed. peer and goal may be nil.
func NewRow(scenario, title string, ours Measurement, peer *Measurement, goal *Goal) Row {
	r := Row{Scenario: scenario, Title: title, Ours: ours, Peer: peer, Goal: goal}
	r.Compute()
	return r
}

// Compute sets r.Ratio from the medians of Ours and Peer.
func (r *Row) Compute() {
	r.Ratio = r.ratio()
}

// ratio returns Ours.Median / Peer.Median, or 0 when there is no peer or the
// quotient is not a finite number.
func (r Row) ratio() float64 {
	if r.Peer == nil || !(r.Peer.Median > 0) {
		return 0
	}
	q := r.Ours.Median / r.Peer.Median
	if math.IsNaN(q) || math.IsInf(q, 0) || q < 0 {
		return 0
	}
	return q
}

// GoalMet reports whether the row's goal is met: nil when the row has no goal
// or the goal cannot be evaluated (a goal on the ratio of a row without a
// ratio, or an invalid goal).
func (r Row) GoalMet() *bool {
	if r.Goal == nil {
		return nil
	}
	met, ok := r.Goal.evaluate(r)
	if !ok {
		return nil
	}
	return &met
}

// Met reports whether r meets the goal. It is false whenever the goal cannot
// be evaluated for r; use [Row.GoalMet] to tell that case apart.
func (g Goal) Met(r Row) bool {
	met, ok := g.evaluate(r)
	return met && ok
}

// evaluate compares the figure the goal is on with the target. ok is false
// when the goal is invalid or the figure is missing.
func (g Goal) evaluate(r Row) (met, ok bool) {
	var v float64
	switch g.On {
	case OnRatio:
		v = r.ratio()
		if v == 0 {
			return false, false
		}
	case OnValue:
		v = r.Ours.Median
	default:
		return false, false
	}
	if !finite(v) || !finite(g.Target) {
		return false, false
	}
	switch g.Op {
	case AtMost:
		return v <= g.Target, true
	case AtLeast:
		return v >= g.Target, true
	default:
		return false, false
	}
}

// validate checks the goal's kind, operator and target.
func (g Goal) validate() error {
	if g.On != OnRatio && g.On != OnValue {
		return fmt.Errorf("goal kind %q is not %q or %q", g.On, OnRatio, OnValue)
	}
	if g.Op != AtMost && g.Op != AtLeast {
		return fmt.Errorf("goal operator %q is not %q or %q", g.Op, AtMost, AtLeast)
	}
	if !finite(g.Target) {
		return fmt.Errorf("goal target %v is not a finite number", g.Target)
	}
	if g.On == OnRatio && g.Target <= 0 {
		return fmt.Errorf("ratio goal target %v is not positive", g.Target)
	}
	return nil
}

// validate checks that the measurement's figures are finite.
func (m Measurement) validate() error {
	if !finite(m.Median) || !finite(m.P99) {
		return fmt.Errorf("figures median %v, p99 %v are not finite numbers", m.Median, m.P99)
	}
	if m.N < 0 {
		return fmt.Errorf("observation count %d is negative", m.N)
	}
	return nil
}

// Validate reports the first problem that keeps r from being rendered
// faithfully, wrapped with [ErrInvalid] and naming the row; nil if none.
func (r *Report) Validate() error {
	for i, row := range r.Rows {
		if err := row.validate(); err != nil {
			return fmt.Errorf("%w: row %d (scenario %q): %w", ErrInvalid, i, row.Scenario, err)
		}
	}
	return nil
}

// validate checks one row.
func (r Row) validate() error {
	if r.Scenario == "" {
		return errors.New("scenario is empty")
	}
	if err := r.Ours.validate(); err != nil {
		return fmt.Errorf("ours: %w", err)
	}
	if r.Peer != nil {
		if err := r.Peer.validate(); err != nil {
			return fmt.Errorf("peer: %w", err)
		}
		if r.Peer.Unit != r.Ours.Unit {
			return fmt.Errorf("peer unit %q differs from our unit %q", r.Peer.Unit, r.Ours.Unit)
		}
	}
	if r.Goal != nil {
		if err := r.Goal.validate(); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes the row with its ratio recomputed and its computed
// "goal_met" (true, false or null).
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row // drops the methods, so no recursion
	r.Compute()
	return marshal(struct {
		plain
		GoalMet *bool `json:"goal_met"`
	}{plain(r), r.GoalMet()})
}

// reportJSON is the JSON shape of a Report: the fields of Report plus the
// duration in seconds.
type reportJSON struct {
	plainReport
	DurationSeconds float64 `json:"duration_seconds"`
}

// plainReport is Report without its methods.
type plainReport Report

// MarshalJSON writes the report with Duration as "duration_seconds".
func (r Report) MarshalJSON() ([]byte, error) {
	if r.Rows == nil {
		r.Rows = []Row{} // "rows": [] rather than null
	}
	return marshal(reportJSON{plainReport(r), r.Duration.Seconds()})
}

// marshal is json.Marshal without HTML escaping, so that goal operators read
// "<=" rather than "\u003c=" in the output.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads the form written by MarshalJSON.
func (r *Report) UnmarshalJSON(data []byte) error {
	var v reportJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("report: decode: %w", err)
	}
	if !finite(v.DurationSeconds) || math.Abs(v.DurationSeconds) > math.MaxInt64/float64(time.Second) {
		return fmt.Errorf("report: decode: duration_seconds %v out of range", v.DurationSeconds)
	}
	*r = Report(v.plainReport)
	r.Duration = time.Duration(math.Round(v.DurationSeconds * float64(time.Second)))
	return nil
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}
