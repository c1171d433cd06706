package host

import (
	"fmt"
	"testing"
	"time"
)

// TestRefusalsCoalesce: one refusal (skill, version, code) is journaled at
// most once per refusalInterval, the next one counting those that were
// not; other keys are independent; the memory stays bounded.
func TestRefusalsCoalesce(t *testing.T) {
	var r refusals
	t0 := time.Unix(1_700_000_000, 0)
	a, b := refusalKey{"acme.a", "1.0.0", "skill_quarantined"}, refusalKey{"acme.a", "1.0.0", "skill_disabled"}
	steps := []struct {
		k          refusalKey
		at         time.Duration
		journal    bool
		suppressed int
	}{
		{a, 0, true, 0},
		{a, time.Second, false, 0},
		{b, 2 * time.Second, true, 0}, // another code: its own record
		{a, 30 * time.Second, false, 0},
		{a, refusalInterval, true, 2}, // the two in between are counted
		{a, refusalInterval + time.Second, false, 0},
		{a, 3 * refusalInterval, true, 1},
	}
	for i, s := range steps {
		j, n := r.take(s.k, t0.Add(s.at))
		if j != s.journal || n != s.suppressed {
			t.Fatalf("step %d (%v at %s): journal %v suppressed %d, want %v %d", i, s.k, s.at, j, n, s.journal, s.suppressed)
		}
	}
	for i := range maxRefusalKeys + 10 {
		r.take(refusalKey{fmt.Sprintf("acme.s%d", i), "1.0.0", "skill_quarantined"}, t0.Add(4*refusalInterval))
	}
	if len(r.last) > maxRefusalKeys {
		t.Fatalf("%d keys remembered, over the bound %d", len(r.last), maxRefusalKeys)
	}
}
