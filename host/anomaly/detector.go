package anomaly

import (
	"container/list"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Limits of a Detector.
const (
	// MaxTracked is the number of skill versions a Detector keeps counters
	// for; observing one more forgets the least recently observed.
	MaxTracked = 4096
	// MaxTripCodes caps Trip.Codes.
	MaxTripCodes = 8
	// MaxReasonBytes caps Trip.Reason.
	MaxReasonBytes = 512
)

// Trip is the evidence that a skill version reached a threshold.
type Trip struct {
	SkillID, Version string
	// Kind is the anomaly's kind (KindFuelExhausted, ...).
	Kind string
	// Count is the number of anomalies of Kind within Window, Threshold
	// the policy's threshold for it (Count reaches it when the trip
	// happens).
	Count, Threshold int
	// Window is the policy's window.
	Window time.Duration
	// First and Last are the times (UTC) of the first and last anomaly
	// counted.
	First, Last time.Time
	// Codes are the distinct error codes seen for Kind since its counter
	// last started, at most MaxTripCodes, in the order first seen.
	Codes []string
}

// Reason returns the trip as a quarantine reason of at most MaxReasonBytes,
// such as:
//
//	anomaly: 5 fuel_exhausted in 2m13s (threshold 5 in 5m0s), first 2025-01-02T12:00:01Z, last 2025-01-02T12:02:14Z
//
// Codes other than the kind's own name are listed after it.
func (t Trip) Reason() string {
	span := t.Last.Sub(t.First)
	if span >= time.Second {
		span = span.Round(time.Second)
	} else {
		span = span.Round(time.Millisecond)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "anomaly: %d %s in %v (threshold %d in %v), first %s, last %s",
		t.Count, t.Kind, span, t.Threshold, t.Window,
		t.First.UTC().Format(time.RFC3339), t.Last.UTC().Format(time.RFC3339))
	if len(t.Codes) > 1 || (len(t.Codes) == 1 && t.Codes[0] != t.Kind) {
		fmt.Fprintf(&b, ", codes %s", strings.Join(t.Codes, ", "))
	}
	s := b.String()
	if len(s) > MaxReasonBytes {
		s = s[:MaxReasonBytes]
	}
	return s
}

// Detector counts anomalies per skill version and kind in a sliding window.
// Make one with NewDetector. It is safe for concurrent use.
type Detector struct {
	window     time.Duration
	thresholds map[string]int
	now        func() time.Time

	mu    sync.Mutex
	lru   *list.List // of *tracked; front is the most recently observed
	byKey map[versionKey]*list.Element
}

type versionKey struct{ skillID, version string }

// tracked holds the counters of one skill version.
type tracked struct {
	key   versionKey
	kinds map[string]*counter
}

// counter holds the anomalies of one kind within the window.
type counter struct {
	times []int64  // unix nanoseconds, ascending, at most the threshold
	codes []string // distinct codes since the counter started
}

// NewDetector returns a Detector for p. now supplies the time of an
// observation made with a zero time; nil means time.Now.
//
// p should have passed Validate. NewDetector does not fail on a policy that
// did not: a window out of range becomes DefaultWindow or MaxWindow,
// thresholds over MaxThreshold become MaxThreshold, and negative thresholds
// and unknown kinds are off.
func NewDetector(p Policy, now func() time.Time) *Detector {
	if now == nil {
		now = time.Now
	}
	w := p.Window.Duration
	switch {
	case w <= 0:
		w = DefaultWindow
	case w > MaxWindow:
		w = MaxWindow
	}
	th := map[string]int{}
	for k, n := range p.Thresholds {
		if n <= 0 || !isKind[k] {
			continue
		}
		th[k] = min(n, MaxThreshold)
	}
	return &Detector{window: w, thresholds: th, now: now, lru: list.New(), byKey: map[versionKey]*list.Element{}}
}

// Observe records that a call of skillID at version ended at time at with
// error code code (errcode.Of of its error), and reports a Trip when that
// makes the code's kind reach its threshold within the window. The kind's
// counter of that version then starts again from zero. A code that is no
// anomaly, or whose kind is off, is ignored. A zero at means now. An
// observation older than the window, as seen from the newest one of its
// kind, is ignored.
func (d *Detector) Observe(skillID, version, code string, at time.Time) (Trip, bool) {
	kind := KindOf(code)
	threshold := d.thresholds[kind]
	if kind == "" || threshold <= 0 {
		return Trip{}, false
	}
	if at.IsZero() {
		at = d.now()
	}
	t := at.UnixNano()

	d.mu.Lock()
	defer d.mu.Unlock()
	tr := d.track(versionKey{skillID, version})
	c := tr.kinds[kind]
	if c == nil {
		c = &counter{}
		tr.kinds[kind] = c
	}
	newest := t
	if n := len(c.times); n > 0 && c.times[n-1] > newest {
		newest = c.times[n-1]
	}
	cutoff := newest - int64(d.window)
	if t < cutoff {
		return Trip{}, false
	}
	c.prune(cutoff)
	c.insert(t)
	if len(c.codes) < MaxTripCodes && !slices.Contains(c.codes, code) {
		c.codes = append(c.codes, code)
	}
	if len(c.times) < threshold {
		return Trip{}, false
	}
	trip := Trip{
		SkillID: skillID, Version: version, Kind: kind,
		Count: len(c.times), Threshold: threshold, Window: d.window,
		First: time.Unix(0, c.times[0]).UTC(), Last: time.Unix(0, c.times[len(c.times)-1]).UTC(),
		Codes: c.codes,
	}
	delete(tr.kinds, kind)
	if len(tr.kinds) == 0 {
		d.drop(tr.key)
	}
	return trip, true
}

// Forget clears the counters of skillID at version, or of every version of
// skillID when version is "". The host calls it when an operator enables a
// quarantined version again, so old anomalies do not count twice.
func (d *Detector) Forget(skillID, version string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if version != "" {
		d.drop(versionKey{skillID, version})
		return
	}
	for k := range d.byKey {
		if k.skillID == skillID {
			d.drop(k)
		}
	}
}

// Tracked returns the number of skill versions with counters.
func (d *Detector) Tracked() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.byKey)
}

// track returns the counters of k, creating them (and forgetting the least
// recently observed version when MaxTracked are kept) if needed, and marks
// k as the most recently observed. d.mu is held.
func (d *Detector) track(k versionKey) *tracked {
	if e := d.byKey[k]; e != nil {
		d.lru.MoveToFront(e)
		return e.Value.(*tracked)
	}
	if len(d.byKey) >= MaxTracked {
		d.drop(d.lru.Back().Value.(*tracked).key)
	}
	tr := &tracked{key: k, kinds: map[string]*counter{}}
	d.byKey[k] = d.lru.PushFront(tr)
	return tr
}

// drop forgets k. d.mu is held.
func (d *Detector) drop(k versionKey) {
	if e := d.byKey[k]; e != nil {
		d.lru.Remove(e)
		delete(d.byKey, k)
	}
}

// prune drops the times before cutoff.
func (c *counter) prune(cutoff int64) {
	i := 0
	for i < len(c.times) && c.times[i] < cutoff {
		i++
	}
	if i > 0 {
		c.times = slices.Delete(c.times, 0, i)
	}
}

// insert adds t, keeping the times in order (observations arrive nearly in
// order, so the search from the end is short).
func (c *counter) insert(t int64) {
	i := len(c.times)
	for i > 0 && c.times[i-1] > t {
		i--
	}
	c.times = slices.Insert(c.times, i, t)
}
