package stats

import (
	"math"
	"slices"
	"testing"
	"time"
)

// seq returns the values lo, lo+1, ..., hi.
func seq(lo, hi int) []float64 {
	var out []float64
	for v := lo; v <= hi; v++ {
		out = append(out, float64(v))
	}
	return out
}

// reversed returns a reversed copy of v, so that tests record out of order.
func reversed(v []float64) []float64 {
	out := slices.Clone(v)
	slices.Reverse(out)
	return out
}

func TestSampleStatistics(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		median float64
		p99    float64
	}{
		{name: "empty", values: nil},
		{name: "one value", values: []float64{7}, median: 7, p99: 7},
		{name: "two values", values: []float64{10, 20}, median: 15, p99: 19.9},
		{name: "odd count", values: []float64{3, 1, 2}, median: 2, p99: 2.98},
		{name: "1..100 reversed", values: reversed(seq(1, 100)), median: 50.5, p99: 99.01},
		{name: "1..101", values: seq(1, 101), median: 51, p99: 100},
		{name: "ties", values: []float64{5, 5, 5, 5}, median: 5, p99: 5},
		{name: "negative", values: []float64{-4, -2, 0, 2}, median: -1, p99: 1.94},
		{name: "NaN ignored", values: []float64{math.NaN(), 1, 3}, median: 2, p99: 2.98},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sample
			for _, v := range tt.values {
				s.AddValue(v)
			}
			wantLen := 0
			for _, v := range tt.values {
				if !math.IsNaN(v) {
					wantLen++
				}
			}
			if got := s.Len(); got != wantLen {
				t.Errorf("Len() = %d, want %d", got, wantLen)
			}
			checks := []struct {
				stat string
				got  float64
				want float64
			}{
				{"Median", s.Median(), tt.median},
				{"P99", s.P99(), tt.p99},
			}
			for _, c := range checks {
				if !approx(c.got, c.want) {
					t.Errorf("%s() = %v, want %v", c.stat, c.got, c.want)
				}
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	var s Sample
	for _, v := range reversed(seq(1, 100)) {
		s.AddValue(v)
	}
	tests := []struct {
		p    float64
		want float64
	}{
		{p: 0, want: 1},
		{p: 25, want: 25.75},
		{p: 50, want: 50.5},
		{p: 90, want: 90.1},
		{p: 99, want: 99.01},
		{p: 100, want: 100},
		{p: -5, want: 1},            // clamped to 0
		{p: 250, want: 100},         // clamped to 100
		{p: math.NaN(), want: 50.5}, // treated as the median
	}
	for _, tt := range tests {
		if got := s.Percentile(tt.p); !approx(got, tt.want) {
			t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

func TestAddDurationIsNanoseconds(t *testing.T) {
	var s Sample
	s.Add(3 * time.Microsecond)
	s.Add(time.Microsecond)
	s.Add(2 * time.Microsecond)
	if got, want := s.Median(), float64(2*time.Microsecond); got != want {
		t.Errorf("Median() = %v, want %v ns", got, want)
	}
	if got, want := s.Median()/float64(time.Microsecond), 2.0; got != want {
		t.Errorf("Median() in µs = %v, want %v", got, want)
	}
}

func TestSortedCacheFollowsAdds(t *testing.T) {
	var s Sample
	s.AddValue(10)
	s.AddValue(30)
	if got := s.Median(); got != 20 {
		t.Fatalf("Median() = %v, want 20", got)
	}
	// Recording after a rank query must invalidate the cached order.
	s.AddValue(1)
	if got := s.Median(); got != 10 {
		t.Errorf("Median() after Add = %v, want 10", got)
	}
}

func TestMerge(t *testing.T) {
	var a, b Sample
	for _, v := range seq(1, 50) {
		a.AddValue(v)
	}
	for _, v := range seq(51, 100) {
		b.AddValue(v)
	}
	_ = a.Median() // build the cache, which Merge must invalidate
	a.Merge(&b)
	a.Merge(nil)
	if got := a.Len(); got != 100 {
		t.Fatalf("Len() after Merge = %d, want 100", got)
	}
	if got := a.Median(); got != 50.5 {
		t.Errorf("Median() after Merge = %v, want 50.5", got)
	}
	if got := b.Len(); got != 50 {
		t.Errorf("merged-from sample Len() = %d, want 50 (unchanged)", got)
	}
}

func approx(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}
