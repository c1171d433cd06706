package inventory

import "testing"

func TestParseSemver(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"1.2.3", "1.2.3", true},
		{" 1.2.3 ", "1.2.3", true},
		{"01.02.003", "1.2.3", true},
		{"+1.0.0", "1.0.0", true},
		{"4294967295.0.0", "4294967295.0.0", true},
		{"4294967296.0.0", "", false},
		{"1.2", "", false},
		{"1.2.3.4", "", false},
		{"1.2.3-rc.1", "", false},
		{"-1.0.0", "", false},
		{"1..0", "", false},
		{"1.+.0", "", false},
		{"1. 2.0", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		v, ok := parseSemver(tt.in)
		if ok != tt.ok || (ok && v.String() != tt.want) {
			t.Errorf("parseSemver(%q) = %v, %v; want %q, %v", tt.in, v, ok, tt.want, tt.ok)
		}
	}
}

func TestCompareVersionStrings(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.10.0", "1.9.0", 1},
		{"1.9.0", "1.10.0", -1},
		{"2.0.0", "1.99.99", 1},
		{"1.2.3", "01.2.3", 0},
		{"0.0.1", "0.0.0", 1},
		{"bogus", "0.0.0", -1},
		{"0.0.0", "bogus", 1},
	}
	for _, tt := range tests {
		if got := compareVersionStrings(tt.a, tt.b); got != tt.want {
			t.Errorf("compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
