package report

import (
	"testing"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/stats"
)

func TestFromSample(t *testing.T) {
	var durations, one, empty, values stats.Sample
	for i := 1; i <= 100; i++ {
		durations.Add(time.Duration(i) * time.Millisecond)
		values.AddValue(float64(i))
	}
	one.Add(1500 * time.Microsecond)
	tests := []struct {
		name string
		got  Measurement
		want Measurement
	}{
		{"milliseconds", FromDurations("palyra", &durations, time.Millisecond),
			Measurement{Name: "palyra", Unit: "ms", Median: 50.5, P99: 99.01, N: 100}},
		{"microseconds", FromDurations("", &one, time.Microsecond),
			Measurement{Unit: "µs", Median: 1500, N: 1}}, // one observation: no p99
		{"odd unit", FromDurations("", &one, 500*time.Microsecond),
			Measurement{Unit: "500µs", Median: 3, N: 1}},
		{"non-positive unit is ns", FromDurations("", &one, 0),
			Measurement{Unit: "ns", Median: 1.5e6, N: 1}},
		{"empty", FromDurations("", &empty, time.Second),
			Measurement{Unit: "s"}},
		{"values", FromValues("wazero", "calls/s", &values),
			Measurement{Name: "wazero", Unit: "calls/s", Median: 50.5, P99: 99.01, N: 100}},
	}
	for _, tt := range tests {
		g, w := tt.got, tt.want
		if g.Name != w.Name || g.Unit != w.Unit || g.N != w.N || !approx(g.Median, w.Median) || !approx(g.P99, w.P99) {
			t.Errorf("%s: got %+v, want %+v", tt.name, g, w)
		}
	}
}

func approx(got, want float64) bool {
	d := got - want
	return d < 1e-9 && d > -1e-9
}
