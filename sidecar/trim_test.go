package sidecar

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// garbage keeps the compiler from dropping the allocations of TestIdleTrimmer.
var garbage [][]byte

// heapFree returns the bytes of the Go heap that are free but still held
// from the operating system.
func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestIdleTrimmer drives the trimmer tick by tick: it trims only after two
// quiet periods, once per quiet spell, never in a period with work, and
// its trim hands the garbage of the busy period back to the system.
func TestIdleTrimmer(t *testing.T) {
	tr := newIdleTrimmer(DefaultIdleTrim)
	busy := func() {
		garbage = nil
		for range 64 {
			garbage = append(garbage, make([]byte, 64<<10))
		}
		garbage = nil
		// Collected but not yet released: the heap holds the free pages.
		runtime.GC()
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
	}
	for _, st := range steps {
		if st.work {
			busy()
		}
		before := heapFree()
		if got := tr.tick(); got != st.trim {
			t.Fatalf("%s: tick() = %v, want %v", st.name, got, st.trim)
		}
		if st.trim {
			// The free pages the heap held (the busy period freed four
			// MiB) are released: at most three quarters stay held (the test
			// process has other goroutines that allocate meanwhile).
			if after := heapFree(); after > before/4*3 {
				t.Errorf("%s: %d bytes free but held after the trim, %d before", st.name, after, before)
			}
		}
	}
	if tr.trims != 2 {
		t.Errorf("trims = %d, want 2", tr.trims)
	}
}
