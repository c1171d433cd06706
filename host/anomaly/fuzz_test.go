package anomaly

import (
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// FuzzDecodePolicy decodes arbitrary TOML into a Policy as the daemon does
// and checks that Validate accepts only policies a Detector runs as given.
func FuzzDecodePolicy(f *testing.F) {
	for _, seed := range []string{
		"window = \"5m\"\nthresholds = { fuel_exhausted = 5, trap = 5 }\n",
		"window = \"24h\"\n[thresholds]\ncapability_denied = 1000000\n",
		"window = \"0s\"\n",
		"window = \"-1h\"\nthresholds = { trap = -1 }\n",
		"window = \"1µs\"\nthresholds = { bogus = 1 }\n",
		"window = 300\n",
		"window = \"9999999999h\"\n",
		"thresholds = { timeout = 1e9 }\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var p Policy
		if err := toml.Unmarshal([]byte(doc), &p); err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			return
		}
		if p.Window.Duration <= 0 || p.Window.Duration > MaxWindow {
			t.Fatalf("Validate accepted window %v", p.Window.Duration)
		}
		d := NewDetector(p, nil)
		if d.window != p.Window.Duration {
			t.Fatalf("detector window %v, policy %v", d.window, p.Window.Duration)
		}
		for k, n := range p.Thresholds {
			if !isKind[k] || n < 0 || n > MaxThreshold {
				t.Fatalf("Validate accepted %s = %d", k, n)
			}
			if n > 0 && d.thresholds[k] != n {
				t.Fatalf("detector threshold %s = %d, policy %d", k, d.thresholds[k], n)
			}
		}
		for code, kind := range kindOf {
			n := p.Thresholds[kind]
			if n == 0 || n > 50 {
				continue
			}
			d.Forget("s", "1")
			for i := 1; i <= n; i++ {
				_, ok := d.Observe("s", "1", code, time.Unix(0, 0))
				if ok != (i == n) {
					t.Fatalf("%s: observation %d of threshold %d: trip %v", code, i, n, ok)
				}
			}
		}
	})
}
