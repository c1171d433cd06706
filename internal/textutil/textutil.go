package textutil

import (
	"strings"
	"unicode/utf8"
)

// Truncate returns s cut to at most n bytes on a rune boundary: a
// multi-byte UTF-8 sequence that would straddle byte n is dropped whole.
// It returns "" when n <= 0 and s when len(s) <= n. Invalid UTF-8 in s is
// not repaired, so the result is valid UTF-8 when s is. The cut is made
// before the last byte at or before s[n] that can start a rune, so on
// invalid input a run of stray continuation bytes there is dropped together
// with the byte before it.
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	cut := n
	// A rune is at most utf8.UTFMax bytes, so on valid UTF-8 the loop
	// stops within utf8.UTFMax-1 steps.
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// TruncateValid returns s with each run of invalid UTF-8 replaced by U+FFFD,
// cut to at most n bytes on a rune boundary. The result is always valid
// UTF-8 and at most max(n, 0) bytes long.
func TruncateValid(s string, n int) string {
	return Truncate(strings.ToValidUTF8(s, "\uFFFD"), n)
}

// Ellipsize returns s unchanged when len(s) <= n, else Truncate(s, n)
// followed by mark (such as "…" or "..."): the result may then be up to
// len(mark) bytes longer than n.
func Ellipsize(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	return Truncate(s, n) + mark
}
