package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSummary: the input summary an approval request shows (from the
// client's arguments) is bounded, cut on a rune boundary, and the whole
// compact input when it fits.
func FuzzSummary(f *testing.F) {
	f.Add([]byte(`{"text":"hi"}`))
	f.Add([]byte(`{ "a" : [1, 2, 3] }`))
	f.Add([]byte(`{"t":"` + strings.Repeat("é", 400) + `"}`))
	f.Add([]byte("not json \xff"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := summary(in)
		if len(s) > MaxSummaryBytes+len("…") {
			t.Fatalf("summary of %d bytes is %d bytes", len(in), len(s))
		}
		if utf8.Valid(in) && !utf8.ValidString(s) {
			t.Fatalf("summary %q of valid UTF-8 is not valid UTF-8", s)
		}
		if json.Valid(in) && !strings.HasSuffix(s, "…") && !json.Valid([]byte(s)) {
			t.Fatalf("uncut summary %q of valid JSON is not JSON", s)
		}
	})
}
