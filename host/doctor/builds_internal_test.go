package doctor

import (
	"testing"

	"github.com/palyra-go/palyra/internal/buildinfo"
)

// TestBuildsDiffer: only stamps that can be compared make builds differ;
// an unstamped build (a test binary, -buildvcs=false) beside a stamped one
// is not a mismatch.
func TestBuildsDiffer(t *testing.T) {
	stamped := func(v, c string) buildinfo.Info { return buildinfo.Info{Version: v, Commit: c} }
	for _, tt := range []struct {
		name string
		a, b buildinfo.Info
		want bool
	}{
		{"same commit", stamped("v1.0.0", "abc"), stamped("v1.0.0", "abc"), false},
		{"other commit", stamped("v1.0.0", "abc"), stamped("v1.0.0", "def"), true},
		{"one unstamped devel", stamped(buildinfo.Devel, buildinfo.Unknown), stamped("v0.0.0-20261127075013-acc9b9a199e6", "acc9b9a199e6"), false},
		{"both unstamped devel", stamped(buildinfo.Devel, buildinfo.Unknown), stamped(buildinfo.Devel, buildinfo.Unknown), false},
		{"releases without commits", stamped("v1.0.0", buildinfo.Unknown), stamped("v1.1.0", buildinfo.Unknown), true},
		{"same release without commits", stamped("v1.0.0", buildinfo.Unknown), stamped("v1.0.0", buildinfo.Unknown), false},
	} {
		if got := buildsDiffer(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: buildsDiffer = %v, want %v", tt.name, got, tt.want)
		}
		if got := buildsDiffer(tt.b, tt.a); got != tt.want {
			t.Errorf("%s (swapped): buildsDiffer = %v, want %v", tt.name, got, tt.want)
		}
	}
}
