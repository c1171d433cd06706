package errcode

import (
	"errors"
	"strings"
)

// Readable is the part of err a person needs: errors are wrapped on their
// way up with where they happened ("install: inventory: skill not found:
// acme.x"), and what failed starts at the error's code sentence (its
// sentinel's message) and runs to the end, with the specifics the sentinel
// was wrapped with ("skill not found: acme.x"). An error whose code
// sentence is not in its text loses only its leading "pkg: " prefixes (a
// lower-case word each); an error without a code is returned whole. The
// daemon's API answers with it as message (the whole text is its detail);
// the CLI may print it the same way for a local error and a remote one.
func Readable(err error) string {
	if err == nil {
		return ""
	}
	full := err.Error()
	var c Coder
	if !errors.As(err, &c) {
		return full
	}
	if s := c.Error(); s != "" {
		if i := segmentIndex(full, s); i >= 0 {
			return full[i:]
		}
	}
	return stripPrefixes(full)
}

// segmentIndex is the first index of sub in s that starts s or follows
// ": " (where a wrapper's context ends), -1 when there is none.
func segmentIndex(s, sub string) int {
	for off := 0; off <= len(s); {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return -1
		}
		i += off
		if i == 0 || strings.HasSuffix(s[:i], ": ") {
			return i
		}
		off = i + 1
	}
	return -1
}

// stripPrefixes drops leading "word: " context prefixes (a package or
// verb name: lower-case letters, digits, _ and -), keeping the rest.
func stripPrefixes(s string) string {
	for {
		word, rest, ok := strings.Cut(s, ": ")
		if !ok || rest == "" || !prefixWord(word) {
			return s
		}
		s = rest
	}
}

func prefixWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
