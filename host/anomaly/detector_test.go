package anomaly

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 12, 0, 1, 0, time.UTC)

func policy(window time.Duration, th map[string]int) Policy {
	return Policy{Window: Duration{Duration: window}, Thresholds: th}
}

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

func TestObserveWindow(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name   string
		window time.Duration
		// offsets of the observations from t0
		offsets []time.Duration
		// trips lists the indexes of the observations that trip
		trips []int
	}{
		{"all inside", time.Minute, []time.Duration{0, 10 * s, 20 * s}, []int{2}},
		{"first falls out", time.Minute, []time.Duration{0, 30 * s, 61 * s, 70 * s}, []int{3}},
		{"exactly window apart counts", time.Minute, []time.Duration{0, 30 * s, 60 * s}, []int{2}},
		{"spread out never trips", time.Minute, []time.Duration{0, 40 * s, 90 * s, 140 * s, 190 * s}, nil},
		{"trips twice", time.Minute, []time.Duration{0, 1 * s, 2 * s, 3 * s, 4 * s, 5 * s}, []int{2, 5}},
		{"out of order inside", time.Minute, []time.Duration{30 * s, 10 * s, 20 * s}, []int{2}},
		{"late observation ignored", time.Minute, []time.Duration{100 * s, 110 * s, 0}, nil},
		{"same instant", time.Minute, []time.Duration{5 * s, 5 * s, 5 * s}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDetector(policy(tt.window, map[string]int{KindTrap: 3}), nil)
			var got []int
			for i, off := range tt.offsets {
				trip, ok := d.Observe("acme.echo", "1.0.0", "trap", at(off))
				if ok {
					got = append(got, i)
					if trip.Count != 3 || trip.Threshold != 3 || trip.Kind != KindTrap {
						t.Errorf("trip %d = %+v, want count 3 of trap", i, trip)
					}
				}
			}
			if !slices.Equal(got, tt.trips) {
				t.Errorf("tripped at %v, want %v", got, tt.trips)
			}
		})
	}
}

func TestObserveThresholdsPerKind(t *testing.T) {
	d := NewDetector(policy(time.Hour, map[string]int{
		KindFuelExhausted: 2, KindCapabilityDenied: 4, KindTimeout: 0, KindInvalidOutput: 1,
	}), nil)
	tests := []struct {
		code     string
		tripsAt  int // 1-based observation that trips first; 0 = never (in 6)
		wantKind string
	}{
		{"fuel_exhausted", 2, KindFuelExhausted},
		{"capability_denied", 4, KindCapabilityDenied},
		{"egress_denied", 4, KindCapabilityDenied},
		{"timeout", 0, ""}, // threshold 0: off
		{"trap", 0, ""},    // not listed: off
		{"output_too_large", 1, KindInvalidOutput},
		{"tool_error", 0, ""},    // not an anomaly
		{"invalid_input", 0, ""}, // the caller's fault
		{"no_such_code", 0, ""},  // unknown
		{"", 0, ""},              // success
	}
	for i, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			version := fmt.Sprintf("1.0.%d", i) // one version per case: no shared counters
			got := 0
			for n := 1; n <= 6; n++ {
				trip, ok := d.Observe("acme.echo", version, tt.code, at(time.Duration(n)*time.Second))
				if ok && got == 0 {
					got = n
					if trip.Kind != tt.wantKind {
						t.Errorf("kind = %q, want %q", trip.Kind, tt.wantKind)
					}
				}
			}
			if got != tt.tripsAt {
				t.Errorf("first trip at observation %d, want %d", got, tt.tripsAt)
			}
		})
	}
}

func TestKindsCountSeparately(t *testing.T) {
	d := NewDetector(policy(time.Hour, map[string]int{KindTrap: 2, KindFuelExhausted: 2}), nil)
	if _, ok := d.Observe("s", "1", "trap", at(0)); ok {
		t.Fatal("tripped on the first trap")
	}
	if _, ok := d.Observe("s", "1", "fuel_exhausted", at(time.Second)); ok {
		t.Fatal("a fuel exhaustion counted with a trap")
	}
	if _, ok := d.Observe("s", "2", "trap", at(2*time.Second)); ok {
		t.Fatal("version 2 counted with version 1")
	}
	if _, ok := d.Observe("other", "1", "trap", at(2*time.Second)); ok {
		t.Fatal("another skill counted with s")
	}
	trip, ok := d.Observe("s", "1", "trap", at(3*time.Second))
	if !ok || trip.SkillID != "s" || trip.Version != "1" || !trip.First.Equal(at(0)) || !trip.Last.Equal(at(3*time.Second)) {
		t.Fatalf("trip = %+v, %v", trip, ok)
	}
}

func TestResetAfterTrip(t *testing.T) {
	d := NewDetector(policy(time.Hour, map[string]int{KindCapabilityDenied: 3}), nil)
	var trips []Trip
	for i := range 9 {
		code := "capability_denied"
		if i%2 == 1 {
			code = "egress_denied"
		}
		if trip, ok := d.Observe("s", "1", code, at(time.Duration(i)*time.Second)); ok {
			trips = append(trips, trip)
		}
	}
	if len(trips) != 3 {
		t.Fatalf("%d trips, want 3 (one per 3 denials)", len(trips))
	}
	// The second trip counts only what came after the first.
	if want := at(3 * time.Second); !trips[1].First.Equal(want) {
		t.Errorf("second trip's first = %v, want %v", trips[1].First, want)
	}
	if want := []string{"egress_denied", "capability_denied"}; !slices.Equal(trips[1].Codes, want) {
		t.Errorf("codes = %v, want %v", trips[1].Codes, want)
	}
	if d.Tracked() != 0 {
		t.Errorf("Tracked = %d after the last trip, want 0", d.Tracked())
	}
}

func TestForget(t *testing.T) {
	d := NewDetector(policy(time.Hour, map[string]int{KindTrap: 2}), nil)
	for _, v := range []string{"1", "2"} {
		d.Observe("s", v, "trap", at(0))
	}
	d.Observe("keep", "1", "trap", at(0))

	d.Forget("s", "1")
	if _, ok := d.Observe("s", "1", "trap", at(time.Second)); ok {
		t.Error("s@1 tripped on its first trap after Forget")
	}
	if _, ok := d.Observe("s", "2", "trap", at(time.Second)); !ok {
		t.Error("Forget of s@1 cleared s@2")
	}

	d.Forget("s", "") // every version of s
	if _, ok := d.Observe("s", "1", "trap", at(2*time.Second)); ok {
		t.Error("s@1 tripped after Forget of every version")
	}
	if _, ok := d.Observe("keep", "1", "trap", at(2*time.Second)); !ok {
		t.Error("Forget of s cleared another skill")
	}
}

func TestEvictsLeastRecentlyObserved(t *testing.T) {
	d := NewDetector(policy(time.Hour, map[string]int{KindTrap: 2}), nil)
	d.Observe("first", "1", "trap", at(0))
	d.Observe("second", "1", "trap", at(0))
	d.Observe("first", "1", "trap", at(0)) // trips, first is no longer tracked
	d.Observe("first", "1", "trap", at(0)) // and is now the most recent
	for i := range MaxTracked - 1 {
		d.Observe(fmt.Sprintf("filler%d", i), "1", "trap", at(0))
	}
	if got := d.Tracked(); got != MaxTracked {
		t.Fatalf("Tracked = %d, want %d", got, MaxTracked)
	}
	// "second" was the least recently observed: it was forgotten.
	if _, ok := d.Observe("second", "1", "trap", at(time.Second)); ok {
		t.Error("second kept its counter past MaxTracked")
	}
	if got := d.Tracked(); got != MaxTracked {
		t.Errorf("Tracked = %d, want %d", got, MaxTracked)
	}
}

func TestZeroTimeUsesNow(t *testing.T) {
	now := at(0)
	d := NewDetector(policy(time.Minute, map[string]int{KindTimeout: 2}), func() time.Time { return now })
	d.Observe("s", "1", "timeout", time.Time{})
	now = at(2 * time.Minute) // the first one is out of the window
	if _, ok := d.Observe("s", "1", "timeout", time.Time{}); ok {
		t.Error("tripped on observations two minutes apart in a one-minute window")
	}
	now = at(2*time.Minute + time.Second)
	trip, ok := d.Observe("s", "1", "timeout", time.Time{})
	if !ok || !trip.Last.Equal(now) {
		t.Errorf("trip = %+v, %v; want one ending at %v", trip, ok, now)
	}
}

func TestNewDetectorClampsInvalidPolicy(t *testing.T) {
	d := NewDetector(Policy{Thresholds: map[string]int{KindTrap: -1, "bogus": 1, KindFuelExhausted: MaxThreshold + 10}}, nil)
	if d.window != DefaultWindow {
		t.Errorf("window = %v, want %v", d.window, DefaultWindow)
	}
	if want := map[string]int{KindFuelExhausted: MaxThreshold}; len(d.thresholds) != 1 || d.thresholds[KindFuelExhausted] != MaxThreshold {
		t.Errorf("thresholds = %v, want %v", d.thresholds, want)
	}
	if d := NewDetector(policy(48*time.Hour, nil), nil); d.window != MaxWindow {
		t.Errorf("window = %v, want %v", d.window, MaxWindow)
	}
}

func TestTripReason(t *testing.T) {
	trip := Trip{
		SkillID: "acme.echo", Version: "1.0.0", Kind: KindFuelExhausted, Count: 5, Threshold: 5,
		Window: 5 * time.Minute, First: t0, Last: t0.Add(2*time.Minute + 13*time.Second + 400*time.Millisecond),
		Codes: []string{"fuel_exhausted"},
	}
	want := "anomaly: 5 fuel_exhausted in 2m13s (threshold 5 in 5m0s), first 2025-01-02T12:00:01Z, last 2025-01-02T12:02:14Z"
	if got := trip.Reason(); got != want {
		t.Errorf("Reason =\n%s\nwant\n%s", got, want)
	}

	trip = Trip{Kind: KindCapabilityDenied, Count: 10, Threshold: 10, Window: time.Minute,
		First: t0, Last: t0.Add(250 * time.Millisecond), Codes: []string{"egress_denied", "capability_denied"}}
	want = "anomaly: 10 capability_denied in 250ms (threshold 10 in 1m0s), first 2025-01-02T12:00:01Z, last 2025-01-02T12:00:01Z, codes egress_denied, capability_denied"
	if got := trip.Reason(); got != want {
		t.Errorf("Reason =\n%s\nwant\n%s", got, want)
	}

	long := Trip{Kind: strings.Repeat("k", 1000), Codes: []string{"x"}}
	if got := long.Reason(); len(got) != MaxReasonBytes {
		t.Errorf("len(Reason) = %d, want %d", len(got), MaxReasonBytes)
	}
}

func TestObserveConcurrent(t *testing.T) {
	const (
		workers   = 8
		each      = 500
		threshold = 7
	)
	d := NewDetector(policy(time.Hour, map[string]int{KindTrap: threshold, KindFuelExhausted: threshold}), nil)
	var (
		mu    sync.Mutex
		trips = map[string]int{}
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code := "trap"
			if w%2 == 1 {
				code = "fuel_exhausted"
			}
			for i := range each {
				// every observation is inside the window, so no
				// anomaly is lost and the trips are exact
				trip, ok := d.Observe("s", "1", code, at(time.Duration(i)*time.Millisecond))
				if ok {
					if trip.Count != threshold {
						t.Errorf("trip count %d, want %d", trip.Count, threshold)
					}
					mu.Lock()
					trips[trip.Kind]++
					mu.Unlock()
				}
				if i%100 == 0 {
					d.Tracked()
				}
			}
		}()
	}
	wg.Wait()
	perKind := workers / 2 * each
	for _, k := range []string{KindTrap, KindFuelExhausted} {
		if want := perKind / threshold; trips[k] != want {
			t.Errorf("%s tripped %d times, want %d", k, trips[k], want)
		}
	}
}
