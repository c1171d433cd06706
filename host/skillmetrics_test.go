package host

import (
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/supervisor"
)

func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name string
		ds   []time.Duration
		want DurationSummary
	}{
		{"none", nil, DurationSummary{}},
		{"one", []time.Duration{3 * ms}, DurationSummary{Mean: 3, P50: 3, P95: 3, Max: 3}},
		{"four", []time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, DurationSummary{Mean: 2.5, P50: 2, P95: 4, Max: 4}},
		{"twenty", func() []time.Duration {
			var ds []time.Duration
			for i := 20; i >= 1; i-- {
				ds = append(ds, time.Duration(i)*ms)
			}
			return ds
		}(), DurationSummary{Mean: 10.5, P50: 10, P95: 19, Max: 20}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := summarize(tt.ds); got != tt.want {
				t.Fatalf("summarize = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCallSummary(t *testing.T) {
	s := newCallSummary()
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	res := &Result{Stats: supervisor.Stats{FuelConsumed: 100, PeakMemoryBytes: 65536}}
	s.observe(CallRecord{SkillID: "a", ToolID: "a.x", Duration: 2 * time.Millisecond, Result: res}, at)
	s.observe(CallRecord{SkillID: "a", ToolID: "a.y", Code: "invalid_input", Duration: 4 * time.Millisecond}, at.Add(time.Second))
	for i := 0; i < recentCalls+10; i++ {
		s.observe(CallRecord{SkillID: "b", ToolID: "b.x", Duration: time.Millisecond}, at)
	}
	a := s.get("a")
	if a.CallsTotal != 2 || a.ErrorsTotal != 1 || a.ByCode["ok"] != 1 || a.ByCode["invalid_input"] != 1 ||
		a.ByTool["a.x"] != 1 || a.ByTool["a.y"] != 1 || a.FuelConsumedTotal != 100 || a.PeakMemoryBytesMax != 65536 ||
		!a.LastCallAt.Equal(at.Add(time.Second)) || a.DurationMS.Max != 4 || a.DurationMS.Mean != 3 {
		t.Fatalf("summary of a: %+v", a)
	}
	a.ByCode["ok"] = 99 // a copy: the summary keeps its own
	if s.get("a").ByCode["ok"] != 1 {
		t.Fatal("get returned the summary's own map")
	}
	if b := s.get("b"); b.CallsTotal != recentCalls+10 || len(s.skills["b"].recent) != recentCalls {
		t.Fatalf("summary of b: %+v, %d durations kept", b, len(s.skills["b"].recent))
	}
	if none := s.get("none"); none.SkillID != "none" || none.CallsTotal != 0 || none.ByCode == nil || none.ByTool == nil {
		t.Fatalf("summary of a skill without calls: %+v", none)
	}
}
