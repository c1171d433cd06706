package sidecar

import (
	"runtime/debug"
	"testing"
)

// garbage keeps the compiler from dropping the allocations of TestIdleTrimmer.
var garbage [][]byte

// TestIdleTrimmer drives the trimmer tick by tick: it trims only after two
// quiet periods, once per quiet spell, never in a period with work, and
// only the trim frees memory. Whether debug.FreeOSMemory then hands every
// free page back is the Go runtime's business and not asserted here: a
// before/after reading of the heap's free pages raced with the runtime's
// own background work (it failed 1 run in 1,000 on a loaded machine); bench
// E measures the idle sidecar's resident size instead.
func TestIdleTrimmer(t *testing.T) {
	tr := newIdleTrimmer(DefaultIdleTrim)
	freed := 0
	tr.free = func() { freed++; debug.FreeOSMemory() }
	busy := func() {
		garbage = nil
		for range 64 {
			garbage = append(garbage, make([]byte, 64<<10))
		}
		garbage = nil
	}
	steps := []struct {
		name string
		work bool
		trim bool
	}{
		{"busy", true, false},
		{"first quiet period", false, false},
		{"second quiet period", false, true},
		{"still quiet: trimmed already", false, false},
		{"busy again", true, false},
		{"quiet once more", false, false},
		{"second quiet period again", false, true},
		{"third quiet period", false, false},
	}
	for _, st := range steps {
		if st.work {
			busy()
		}
		was := freed
		if got := tr.tick(); got != st.trim {
			t.Fatalf("%s: tick() = %v, want %v", st.name, got, st.trim)
		}
		if want := was + map[bool]int{true: 1}[st.trim]; freed != want {
			t.Fatalf("%s: freed %d times, want %d", st.name, freed, want)
		}
	}
	if tr.trims != 2 {
		t.Errorf("trims = %d, want 2", tr.trims)
	}
}
