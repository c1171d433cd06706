package report

import (
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/stats"
)

// FromDurations summarises a sample filled with [stats.Sample.Add] as a
// measurement in unit: time.Nanosecond, time.Microsecond, time.Millisecond
// and time.Second are shown as "ns", "µs", "ms" and "s"; any other unit is
// shown as its String ("10ms") and the figures count multiples of it. P99 is
// left 0 (not applicable) for fewer than two observations. A unit ≤ 0 is
// treated as time.Nanosecond.
func FromDurations(name string, s *stats.Sample, unit time.Duration) Measurement {
	if unit <= 0 {
		unit = time.Nanosecond
	}
	m := FromValues(name, durationUnit(unit), s)
	scale := float64(unit)
	m.Median /= scale
	m.P99 /= scale
	return m
}

// FromValues summarises a sample filled with [stats.Sample.AddValue] as a
// measurement in unit. P99 is left 0 (not applicable) for fewer than two
// observations.
func FromValues(name, unit string, s *stats.Sample) Measurement {
	m := Measurement{Name: name, Unit: unit, Median: s.Median(), N: s.Len()}
	if m.N >= 2 {
		m.P99 = s.P99()
	}
	return m
}

// durationUnit names a duration unit.
func durationUnit(unit time.Duration) string {
	switch unit {
	case time.Nanosecond:
		return "ns"
	case time.Microsecond:
		return "µs"
	case time.Millisecond:
		return "ms"
	case time.Second:
		return "s"
	default:
		return unit.String()
	}
}
