package errcode

import (
	"regexp"
	"strings"
	"testing"
)

// prefixRE matches a message that starts with a "pkg: " prefix.
var prefixRE = regexp.MustCompile(`^[A-Za-z0-9_./-]+: `)

// checkMessage returns why msg breaks the message rule, "" when it does not.
func checkMessage(msg string) string {
	switch {
	case msg == "":
		return "is empty"
	case strings.TrimSpace(msg) != msg:
		return "has leading or trailing space"
	case strings.HasSuffix(msg, ".") || strings.HasSuffix(msg, ":"):
		return "ends in punctuation"
	case prefixRE.MatchString(msg):
		return `starts with a "pkg: " prefix`
	}
	return ""
}

func TestCheckMessage(t *testing.T) {
	tests := []struct{ msg, want string }{
		{"thing failed", ""},
		{"enable needs override: true", ""}, // a colon after the first word is fine
		{"", "is empty"},
		{"pkg: thing failed", "prefix"},
		{"host/errcode: thing failed", "prefix"},
		{"thing failed.", "punctuation"},
		{"thing failed:", "punctuation"},
		{" thing failed", "space"},
	}
	for _, tt := range tests {
		got := checkMessage(tt.msg)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("checkMessage(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}
