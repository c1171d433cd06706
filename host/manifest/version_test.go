package manifest_test

import (
	"errors"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
)

func TestParseVersion(t *testing.T) {
	good := map[string]manifest.Version{
		"1.2.3":          {Major: 1, Minor: 2, Patch: 3},
		" 1.2.3\t":       {Major: 1, Minor: 2, Patch: 3},
		"01.002.0":       {Major: 1, Minor: 2},
		"+1.+0.+7":       {Major: 1, Patch: 7},
		"0.0.0":          {},
		"4294967295.0.1": {Major: 4294967295, Patch: 1},
	}
	for s, want := range good {
		got, err := manifest.ParseVersion(s)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{
		"", " ", "1", "1.2", "1.2.3.4", "1.2.3-rc.1", "1.2.3+build", "v1.2.3", "1..3", "1.2.",
		"1.-2.3", "1.2.4294967296", "1. 2.3", "++1.0.0", "+.0.0", "1.2.0x1", "1.2.1_0", "１.2.3",
	} {
		if v, err := manifest.ParseVersion(s); !errors.Is(err, manifest.ErrInvalidVersion) {
			t.Errorf("ParseVersion(%q) = %v, %v; want ErrInvalidVersion", s, v, err)
		}
	}
	if got := (manifest.Version{Major: 1, Minor: 2, Patch: 3}).String(); got != "1.2.3" {
		t.Errorf("String = %q", got)
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.0.0", "1.0.0", 0},
		{"1.02.0", "1.2.0", 0},
		{"1.10.0", "1.9.0", 1},
		{"0.9.9", "1.0.0", -1},
		{"1.0.1", "1.0.0", 1},
		{"2.0.0", "10.0.0", -1},
		{"4294967295.0.0", "4294967294.9.9", 1},
	}
	for _, tt := range tests {
		got, err := manifest.CompareVersions(tt.a, tt.b)
		if err != nil || got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d", tt.a, tt.b, got, err, tt.want)
		}
		if back, _ := manifest.CompareVersions(tt.b, tt.a); back != -tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.b, tt.a, back, -tt.want)
		}
	}
	if _, err := manifest.CompareVersions("1.0.0", "1.0"); !errors.Is(err, manifest.ErrInvalidVersion) {
		t.Errorf("bad version compared: %v", err)
	}
}
