package host

import (
	"context"
	"errors"
	"fmt"

	"slices"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host/inventory"

	"github.com/palyra-go/palyra/host/broker"
)

// unknownTool is the ByTool key of calls of a tool the skill does not have.
const unknownTool = "(unknown tool)"

// recentCalls is how many of a skill's latest call durations the summary
// keeps for its percentiles.
const recentCalls = 512

// SkillMetrics is the summary of a skill's calls since the host opened
// (Service.SkillMetrics; GET /v1/skills/{id}/metrics): what the console shows on a skill's page.
// Prometheus has the same counters at /metrics; this is the one-skill view.
type SkillMetrics struct {
	SkillID     string           `json:"skill_id"`
	CallsTotal  int64            `json:"calls_total"`
	ErrorsTotal int64            `json:"errors_total"`
	ByCode      map[string]int64 `json:"by_code"`
	ByTool      map[string]int64 `json:"by_tool"`
	// DurationMS summarizes the wall time of the latest calls (at most
	// 512): mean, p50, p95 and max, in milliseconds.
	DurationMS DurationSummary `json:"duration_ms"`
	// FuelConsumedTotal and PeakMemoryBytesMax cover the calls that
	// reached a sidecar.
	FuelConsumedTotal  uint64    `json:"fuel_consumed_total"`
	PeakMemoryBytesMax uint64    `json:"peak_memory_bytes_max"`
	LastCallAt         time.Time `json:"last_call_at,omitzero"`
	// Capabilities are the broker's counters for the skill.
	Capabilities broker.Stats `json:"capabilities"`
}

// DurationSummary is a summary of call durations in milliseconds.
type DurationSummary struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Max  float64 `json:"max"`
}

// callSummary keeps SkillMetrics per skill. It is safe for concurrent use.
type callSummary struct {
	mu     sync.Mutex
	skills map[string]*skillCalls
}

type skillCalls struct {
	m      SkillMetrics
	recent []time.Duration // ring of the latest durations
	next   int
}

func newCallSummary() *callSummary { return &callSummary{skills: map[string]*skillCalls{}} }

// observe records one call.
func (s *callSummary) observe(r CallRecord, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.skills[r.SkillID]
	if sc == nil {
		sc = &skillCalls{m: SkillMetrics{SkillID: r.SkillID, ByCode: map[string]int64{}, ByTool: map[string]int64{}}}
		s.skills[r.SkillID] = sc
	}
	m := &sc.m
	m.CallsTotal++
	code := r.Code
	if code == "" {
		code = "ok"
	} else {
		m.ErrorsTotal++
	}
	m.ByCode[code]++
	tool := r.ToolID
	if tool == "" {
		tool = unknownTool
	}
	m.ByTool[tool]++
	if r.Result != nil {
		m.FuelConsumedTotal += r.Result.Stats.FuelConsumed
		m.PeakMemoryBytesMax = max(m.PeakMemoryBytesMax, r.Result.Stats.PeakMemoryBytes)
	}
	m.LastCallAt = at.UTC()
	if len(sc.recent) < recentCalls {
		sc.recent = append(sc.recent, r.Duration)
	} else {
		sc.recent[sc.next] = r.Duration
		sc.next = (sc.next + 1) % recentCalls
	}
}

// get returns skillID's summary (zero counts when it has had no call).
func (s *callSummary) get(skillID string) SkillMetrics {
	s.mu.Lock()
	sc := s.skills[skillID]
	var out SkillMetrics
	var ds []time.Duration
	if sc != nil {
		out = sc.m
		out.ByCode, out.ByTool = copyCounts(sc.m.ByCode), copyCounts(sc.m.ByTool)
		ds = slices.Clone(sc.recent)
	}
	s.mu.Unlock()
	out.SkillID = skillID
	if out.ByCode == nil {
		out.ByCode, out.ByTool = map[string]int64{}, map[string]int64{}
	}
	out.DurationMS = summarize(ds)
	return out
}

func copyCounts(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// summarize returns the mean, nearest-rank p50 and p95, and max of ds.
func summarize(ds []time.Duration) DurationSummary {
	if len(ds) == 0 {
		return DurationSummary{}
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(ds))+0.999999) - 1
		return ds[min(max(i, 0), len(ds)-1)]
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return DurationSummary{Mean: ms(sum) / float64(len(ds)), P50: ms(rank(0.50)), P95: ms(rank(0.95)), Max: ms(ds[len(ds)-1])}
}

// SkillMetrics implements Service: the summary of a skill's calls since
// the host opened, with the broker's capability counters. An unknown
// skill is skill_not_found.
func (h *Host) SkillMetrics(ctx context.Context, skillID string) (*SkillMetrics, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	// One inventory read to refuse an unknown id (Info would also read and
	// inspect the artifact).
	e, err := h.in.Inventory().Skill(ctx, skillID, "")
	if err != nil {
		if errors.Is(err, inventory.ErrNotFound) {
			return nil, fmt.Errorf("host: %w: %s: %v", ErrSkillNotFound, skillID, err)
		}
		return nil, err
	}
	m := h.calls.get(e.SkillID)
	m.Capabilities = h.Stats(e.SkillID).Capabilities
	return &m, nil
}
