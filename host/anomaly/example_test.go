package anomaly_test

import (
	"fmt"
	"time"

	"github.com/palyra-go/palyra/host/anomaly"
)

func Example() {
	p := anomaly.DefaultPolicy()
	if err := p.Validate(); err != nil {
		panic(err)
	}
	d := anomaly.NewDetector(p, nil)

	start := time.Date(2025, 1, 2, 12, 0, 1, 0, time.UTC)
	for i := range 5 {
		// The host observes every failed call with errcode.Of(err).
		at := start.Add(time.Duration(i) * 33 * time.Second)
		trip, ok := d.Observe("acme.fetch", "1.2.0", "fuel_exhausted", at)
		if ok {
			// The host quarantines acme.fetch 1.2.0 with this reason.
			fmt.Println(trip.SkillID, trip.Version)
			fmt.Println(trip.Reason())
		}
	}
	// A tool error is the tool's answer, not an anomaly.
	_, ok := d.Observe("acme.fetch", "1.2.0", "tool_error", start)
	fmt.Println("tool_error trips:", ok)
	// Output:
	// acme.fetch 1.2.0
	// anomaly: 5 fuel_exhausted in 2m12s (threshold 5 in 5m0s), first 2025-01-02T12:00:01Z, last 2025-01-02T12:02:13Z
	// tool_error trips: false
}

func ExampleKindOf() {
	for _, code := range []string{"egress_denied", "memory_limit_exceeded", "tool_error"} {
		fmt.Printf("%s -> %q\n", code, anomaly.KindOf(code))
	}
	// Output:
	// egress_denied -> "capability_denied"
	// memory_limit_exceeded -> "memory_limit"
	// tool_error -> ""
}
