package textutil

import (
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"ascii cut", "hello world", 5, "hello"},
		{"ascii exact", "hello", 5, "hello"},
		{"n larger than s", "hello", 100, "hello"},
		{"empty", "", 3, ""},
		{"n zero", "hello", 0, ""},
		{"n negative", "hello", -1, ""},
		{"empty n negative", "", -1, ""},
		{"2-byte rune on boundary", "aé", 3, "aé"},
		{"inside 2-byte rune", "aéb", 2, "a"},
		{"inside 3-byte rune, 1st byte", "ab€", 3, "ab"},
		{"inside 3-byte rune, 2nd byte", "ab€", 4, "ab"},
		{"3-byte rune whole", "ab€c", 5, "ab€"},
		{"inside 4-byte rune, 1st byte", "a😀", 2, "a"},
		{"inside 4-byte rune, 3rd byte", "a😀", 4, "a"},
		{"4-byte rune whole", "a😀b", 5, "a😀"},
		{"only a multi-byte rune, cut inside", "😀", 3, ""},
		// Invalid UTF-8 is not repaired, only kept whole before the cut.
		{"invalid kept", "a\xffb", 3, "a\xffb"},
		{"invalid before cut", "\xffabc", 2, "\xffa"},
		// The cut backs up to a byte that starts a rune, so stray
		// continuation bytes before it go too, and what precedes them.
		{"stray continuation bytes back up", "a\x80\x80\x80", 3, ""},
		{"stray continuation bytes after a rune start", "ab\x80\x80", 3, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Truncate(tc.s, tc.n); got != tc.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func TestTruncateValid(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"ascii cut", "hello world", 5, "hello"},
		{"n larger than s", "hello", 100, "hello"},
		{"n zero", "hello", 0, ""},
		{"n negative", "hello", -1, ""},
		{"inside 2-byte rune", "aéb", 2, "a"},
		{"inside 3-byte rune", "ab€", 4, "ab"},
		{"inside 4-byte rune", "a😀", 4, "a"},
		{"invalid replaced", "a\xffb", 10, "a\uFFFDb"},
		{"invalid run replaced once", "a\xff\xfe\xfdb", 10, "a\uFFFDb"},
		// The replacement is 3 bytes: a cut inside it drops it whole.
		{"cut inside replacement", "a\xffb", 3, "a"},
		{"cut after replacement", "a\xffb", 4, "a\uFFFD"},
		{"split rune at end replaced", "ab\xe2\x82", 10, "ab\uFFFD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TruncateValid(tc.s, tc.n)
			if got != tc.want {
				t.Errorf("TruncateValid(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("TruncateValid(%q, %d) = %q, not valid UTF-8", tc.s, tc.n, got)
			}
		})
	}
}

func TestEllipsize(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		mark string
		want string
	}{
		{"under the limit", "hello", 10, "…", "hello"},
		{"at the limit", "hello", 5, "…", "hello"},
		{"over the limit", "hello world", 5, "…", "hello…"},
		{"over the limit, ascii mark", "hello world", 5, "...", "hello..."},
		{"cut inside a rune", "aéb", 2, "...", "a..."},
		{"cut inside a 4-byte rune", "ab😀c", 4, "…", "ab…"},
		{"n zero", "hello", 0, "...", "..."},
		{"empty mark", "hello", 2, "", "he"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Ellipsize(tc.s, tc.n, tc.mark); got != tc.want {
				t.Errorf("Ellipsize(%q, %d, %q) = %q, want %q", tc.s, tc.n, tc.mark, got, tc.want)
			}
		})
	}
}
