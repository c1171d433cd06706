package sidecar

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// DefaultIdleTrim is the default of ServeConfig.IdleTrim.
const DefaultIdleTrim = 250 * time.Millisecond

// idleAllocBytes is how much a sidecar may allocate in one IdleTrim period
// and still count as idle: go-plugin's and gRPC's housekeeping allocate a
// little even when no call comes.
const idleAllocBytes = 64 << 10

// idleTrimmer returns the memory a sidecar no longer uses to the operating
// system once the sidecar goes quiet. Loading a skill reads the module and
// its precompiled image into the Go heap and a call's garbage waits for a
// GC that an idle process never starts; the runtime's background scavenger
// only releases what exceeds its heap goal, so an idle sidecar would keep
// all of that resident. The trimmer samples the bytes allocated every
// period; after two quiet periods in a row it runs debug.FreeOSMemory (a
// GC, then every free page released) once, and again only after the
// sidecar was busy in between. A busy sidecar is never trimmed.
type idleTrimmer struct {
	period  time.Duration
	samples []metrics.Sample
	// last is the allocation total at the previous tick; quiet counts the
	// quiet ticks since the last busy one; trimmed is set once trimmed
	// until the next busy tick.
	last    uint64
	quiet   int
	trimmed bool
	// trims counts the trims, for tests.
	trims int
	// free trims; debug.FreeOSMemory outside tests.
	free func()
}

func newIdleTrimmer(period time.Duration) *idleTrimmer {
	t := &idleTrimmer{
		period:  period,
		samples: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}},
		free:    debug.FreeOSMemory,
	}
	t.last = t.allocs()
	return t
}

func (t *idleTrimmer) allocs() uint64 {
	metrics.Read(t.samples)
	if t.samples[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return t.samples[0].Value.Uint64()
}

// tick takes one sample and trims when the sidecar has been quiet for two
// periods and was not trimmed since it was last busy. It reports whether it
// trimmed.
func (t *idleTrimmer) tick() bool {
	now := t.allocs()
	busy := now-t.last > idleAllocBytes
	t.last = now
	if busy {
		t.quiet, t.trimmed = 0, false
		return false
	}
	t.quiet++
	if t.quiet < 2 || t.trimmed {
		return false
	}
	t.free()
	t.trimmed = true
	t.trims++
	// What the collection itself allocated is not the sidecar's work.
	t.last = t.allocs()
	return true
}

// run ticks every period until done is closed.
func (t *idleTrimmer) run(done <-chan struct{}) {
	tk := time.NewTicker(t.period)
	defer tk.Stop()
	for {
		select {
		case <-done:
			return
		case <-tk.C:
			t.tick()
		}
	}
}
