package stats

import (
	"math"
	"slices"
	"time"
)

// Sample is a collection of observations. The zero value is an empty sample
// ready to use. A Sample must not be copied after first use, and it is not
// safe for concurrent use (see the package documentation).
type Sample struct {
	values []float64 // in recording order
	sorted []float64 // ascending copy of values; valid only when !dirty
	dirty  bool      // values changed since sorted was built
}

// Add records one duration, stored as its count of nanoseconds.
func (s *Sample) Add(d time.Duration) {
	s.AddValue(float64(d))
}

// AddValue records one value. NaN is ignored, since it has no rank; the
// infinities are recorded and sort to the ends.
func (s *Sample) AddValue(v float64) {
	if math.IsNaN(v) {
		return
	}
	s.values = append(s.values, v)
	s.dirty = true
}

// Merge records every observation of other into s. other is left unchanged;
// merging a sample into itself doubles it.
func (s *Sample) Merge(other *Sample) {
	if other == nil || len(other.values) == 0 {
		return
	}
	s.values = append(s.values, other.values...)
	s.dirty = true
}

// Len returns the number of observations recorded.
func (s *Sample) Len() int {
	return len(s.values)
}

// Median returns the 50th percentile, or 0 for an empty sample.
func (s *Sample) Median() float64 {
	return s.Percentile(50)
}

// P99 returns the 99th percentile, or 0 for an empty sample.
func (s *Sample) P99() float64 {
	return s.Percentile(99)
}

// Percentile returns the p-th percentile by linear interpolation between the
// nearest ranks, as defined in the package documentation. p is clamped to
// [0, 100]; a NaN p yields the median. An empty sample yields 0.
func (s *Sample) Percentile(p float64) float64 {
	x := s.sortedValues()
	n := len(x)
	if n == 0 {
		return 0
	}
	switch {
	case math.IsNaN(p):
		p = 50
	case p < 0:
		p = 0
	case p > 100:
		p = 100
	}
	h := float64(n-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return x[n-1]
	}
	frac := h - float64(lo)
	if frac == 0 {
		return x[lo]
	}
	return x[lo] + frac*(x[lo+1]-x[lo])
}

// sortedValues returns the cached ascending copy of the observations,
// rebuilding it if observations were recorded since it was last built.
func (s *Sample) sortedValues() []float64 {
	if s.dirty {
		s.sorted = append(s.sorted[:0], s.values...)
		slices.Sort(s.sorted)
		s.dirty = false
	}
	return s.sorted
}
