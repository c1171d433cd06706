package stats_test

import (
	"fmt"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/stats"
)

func ExampleSample() {
	var s stats.Sample
	for i := 1; i <= 100; i++ {
		s.Add(time.Duration(i) * time.Microsecond)
	}
	us := float64(time.Microsecond)
	fmt.Printf("n=%d median=%.2fµs p99=%.2fµs p25=%.2fµs\n",
		s.Len(), s.Median()/us, s.P99()/us, s.Percentile(25)/us)
	// Output: n=100 median=50.50µs p99=99.01µs p25=25.75µs
}
