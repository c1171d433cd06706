package textutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzTruncate(f *testing.F) {
	for _, seed := range []struct {
		s string
		n int
	}{
		{"", 0},
		{"hello", 3},
		{"aéb", 2},
		{"ab€c", 4},
		{"a😀b", 3},
		{"a\xffb", 2},
		{"a\x80\x80\x80", 3},
		{"ab\xe2\x82", 3},
		{"x", -1},
	} {
		f.Add(seed.s, seed.n)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		// Bound n so the fuzzer explores cuts within and around s rather
		// than huge values, which all behave like len(s).
		n %= 2*len(s) + 8
		limit := max(n, 0)

		got := Truncate(s, n)
		if !strings.HasPrefix(s, got) {
			t.Fatalf("Truncate(%q, %d) = %q, not a prefix", s, n, got)
		}
		if len(got) > limit {
			t.Fatalf("Truncate(%q, %d) = %q, %d bytes", s, n, got, len(got))
		}
		if len(s) <= n && got != s {
			t.Fatalf("Truncate(%q, %d) = %q, want s unchanged", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q, not valid UTF-8", s, n, got)
		}

		v := TruncateValid(s, n)
		if !utf8.ValidString(v) {
			t.Fatalf("TruncateValid(%q, %d) = %q, not valid UTF-8", s, n, v)
		}
		if len(v) > limit {
			t.Fatalf("TruncateValid(%q, %d) = %q, %d bytes", s, n, v, len(v))
		}
		if !strings.HasPrefix(strings.ToValidUTF8(s, "\uFFFD"), v) {
			t.Fatalf("TruncateValid(%q, %d) = %q, not a prefix of the repaired s", s, n, v)
		}
	})
}
