package report

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestGoal(t *testing.T) {
	ours := func(median float64) Measurement { return Measurement{Unit: "µs", Median: median, N: 10} }
	peer := func(median float64) *Measurement { return &Measurement{Unit: "µs", Median: median, N: 10} }
	tests := []struct {
		name  string
		row   Row
		met   bool
		known bool // GoalMet is not nil
	}{
		{"ratio at most, met", NewRow("A", "", ours(50), peer(100), &Goal{On: OnRatio, Op: AtMost, Target: 0.6}), true, true},
		{"ratio at most, boundary", NewRow("A", "", ours(60), peer(100), &Goal{On: OnRatio, Op: AtMost, Target: 0.6}), true, true},
		{"ratio at most, missed", NewRow("A", "", ours(70), peer(100), &Goal{On: OnRatio, Op: AtMost, Target: 0.6}), false, true},
		{"ratio at least, met", NewRow("B", "", ours(300), peer(100), &Goal{On: OnRatio, Op: AtLeast, Target: 2}), true, true},
		{"ratio at least, missed", NewRow("B", "", ours(150), peer(100), &Goal{On: OnRatio, Op: AtLeast, Target: 2}), false, true},
		{"value at most, met", NewRow("E", "", ours(150), nil, &Goal{On: OnValue, Op: AtMost, Target: 200}), true, true},
		{"value at most, missed", NewRow("E", "", ours(250), nil, &Goal{On: OnValue, Op: AtMost, Target: 200}), false, true},
		{"value at least, met", NewRow("D", "", ours(5210), nil, &Goal{On: OnValue, Op: AtLeast, Target: 4000}), true, true},
		{"value at least, missed", NewRow("D", "", ours(3999), nil, &Goal{On: OnValue, Op: AtLeast, Target: 4000}), false, true},
		{"value goal on a row with a peer", NewRow("C", "", ours(2), peer(1), &Goal{On: OnValue, Op: AtMost, Target: 3}), true, true},
		{"no goal", NewRow("C", "", ours(2), peer(1), nil), false, false},
		{"ratio goal without peer", NewRow("F", "", ours(2), nil, &Goal{On: OnRatio, Op: AtMost, Target: 1}), false, false},
		{"ratio goal with zero peer median", NewRow("F", "", ours(2), peer(0), &Goal{On: OnRatio, Op: AtMost, Target: 1}), false, false},
		{"unknown kind", NewRow("F", "", ours(2), peer(1), &Goal{On: "speed", Op: AtMost, Target: 1}), false, false},
		{"unknown operator", NewRow("F", "", ours(2), peer(1), &Goal{On: OnRatio, Op: "<", Target: 3}), false, false},
		// A stale Ratio field is ignored: the goal uses the medians.
		{"stale ratio ignored", Row{Scenario: "A", Ours: ours(50), Peer: peer(100), Ratio: 9, Goal: &Goal{On: OnRatio, Op: AtMost, Target: 0.6}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.row.Goal != nil {
				if got := tt.row.Goal.Met(tt.row); got != tt.met {
					t.Errorf("Met() = %v, want %v", got, tt.met)
				}
			}
			got := tt.row.GoalMet()
			if (got != nil) != tt.known {
				t.Fatalf("GoalMet() = %v, want known=%v", got, tt.known)
			}
			if got != nil && *got != tt.met {
				t.Errorf("*GoalMet() = %v, want %v", *got, tt.met)
			}
		})
	}
}

func TestNewRowRatio(t *testing.T) {
	tests := []struct {
		name string
		ours float64
		peer *Measurement
		want float64
	}{
		{"ratio", 42, &Measurement{Median: 100}, 0.42},
		{"no peer", 42, nil, 0},
		{"zero peer", 42, &Measurement{Median: 0}, 0},
		{"zero ours", 0, &Measurement{Median: 5}, 0},
		{"overflow", math.MaxFloat64, &Measurement{Median: 0.5}, 0},
	}
	for _, tt := range tests {
		r := NewRow("A", "", Measurement{Median: tt.ours}, tt.peer, nil)
		if r.Ratio != tt.want {
			t.Errorf("%s: Ratio = %v, want %v", tt.name, r.Ratio, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	valid := func() *Report {
		return &Report{Rows: []Row{NewRow("A", "t", Measurement{Unit: "µs", Median: 1}, &Measurement{Unit: "µs", Median: 2},
			&Goal{On: OnRatio, Op: AtMost, Target: 1})}}
	}
	tests := []struct {
		name   string
		mutate func(r *Report)
	}{
		{"empty scenario", func(r *Report) { r.Rows[0].Scenario = "" }},
		{"NaN median", func(r *Report) { r.Rows[0].Ours.Median = math.NaN() }},
		{"infinite peer p99", func(r *Report) { r.Rows[0].Peer.P99 = math.Inf(1) }},
		{"negative count", func(r *Report) { r.Rows[0].Ours.N = -1 }},
		{"unit mismatch", func(r *Report) { r.Rows[0].Peer.Unit = "ms" }},
		{"unknown goal kind", func(r *Report) { r.Rows[0].Goal.On = "speed" }},
		{"unknown goal operator", func(r *Report) { r.Rows[0].Goal.Op = "<" }},
		{"NaN target", func(r *Report) { r.Rows[0].Goal.Target = math.NaN() }},
		{"non-positive ratio target", func(r *Report) { r.Rows[0].Goal.Target = 0 }},
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("Validate() of a valid report = %v", err)
	}
	if err := (&Report{}).Validate(); err != nil {
		t.Fatalf("Validate() of an empty report = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := valid()
			tt.mutate(r)
			if err := r.Validate(); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate() = %v, want ErrInvalid", err)
			}
			renderers := map[string]func(*bytes.Buffer) error{
				"Markdown": func(b *bytes.Buffer) error { return r.Markdown(b) },
				"JSON":     func(b *bytes.Buffer) error { return r.JSON(b) },
				"SVG":      func(b *bytes.Buffer) error { return r.SVG(b) },
			}
			for name, render := range renderers {
				var buf bytes.Buffer
				if err := render(&buf); !errors.Is(err, ErrInvalid) {
					t.Errorf("%s() = %v, want ErrInvalid", name, err)
				}
				if buf.Len() != 0 {
					t.Errorf("%s() wrote %d bytes for an invalid report", name, buf.Len())
				}
			}
		})
	}
}
