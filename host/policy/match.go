package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/internal/skillpath"
)

// This file holds the pattern languages of the profile and the coverage
// relations between a profile pattern and a manifest entry. Every relation
// is sound: a pattern covers an entry only when everything the entry can
// stand for at the broker is also something the pattern stands for.

// normHost returns the form hosts are compared in: trimmed and ASCII
// lower-cased; trailing dots are removed from a host without '*', as the
// manifest does ("api.example.com." is "api.example.com").
func normHost(h string) string {
	t := asciiLower(strings.TrimSpace(h))
	if !strings.Contains(t, "*") {
		t = strings.TrimRight(t, ".")
	}
	return t
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// hostReason checks a normalized host without '*': the manifest's rule (a-z,
// 0-9, '.' and '-'; no empty label; not starting or ending with '.' or '-').
// It returns "" for a valid host.
func hostReason(t string) string {
	if t == "" {
		return "host must not be empty"
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return fmt.Sprintf("must be a bare host name (a-z, 0-9, '.' and '-'; no scheme, port or path), found %q", r)
		}
	}
	if strings.Contains(t, "..") {
		return "host has an empty label"
	}
	if strings.HasPrefix(t, ".") || strings.HasPrefix(t, "-") || strings.HasSuffix(t, ".") || strings.HasSuffix(t, "-") {
		return "host must not start or end with '.' or '-'"
	}
	return ""
}

// hostPatternReason checks a normalized host pattern: "*", "*.<host>" or a
// host. It returns "" for a valid pattern.
func hostPatternReason(t string) string {
	if t == Wildcard {
		return ""
	}
	if rest, ok := strings.CutPrefix(t, "*."); ok && !strings.Contains(rest, "*") {
		if r := hostReason(rest); r != "" {
			return "wildcard domain: " + r
		}
		return ""
	}
	if strings.Contains(t, "*") {
		return `a wildcard host must be "*" or "*.<domain>"`
	}
	return hostReason(t)
}

// hostCovers reports whether the normalized, valid host pattern p covers
// the normalized, valid manifest host or host pattern t. "*" covers
// everything; "*.d" covers the hosts strictly below d and the patterns
// "*.d" and "*.<below d>"; an exact host covers only itself.
func hostCovers(p, t string) bool {
	switch {
	case p == Wildcard:
		return true
	case strings.HasPrefix(p, "*."):
		suffix := p[1:] // ".d"
		if rest, ok := strings.CutPrefix(t, "*"); ok {
			return rest == suffix || strings.HasSuffix(rest, suffix)
		}
		return strings.HasSuffix(t, suffix)
	default:
		return p == t
	}
}

// secretKinds are the scope kinds that carry an id.
var secretKinds = []string{"principal:", "channel:", "skill:"}

// isIdentByte reports whether c may appear in a Palyra identifier
// ([a-z0-9._:-]).
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-'
}

// globReason checks s as an identifier in which '*' may also appear when
// star is true. It returns "" when s is one.
func globReason(what, s string, star bool) string {
	if s == "" {
		return what + " must not be empty"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isIdentByte(c) && !(star && c == '*') {
			if star {
				return fmt.Sprintf("%s must contain only a-z, 0-9, '.', '_', ':', '-' and '*', found %q", what, rune(c))
			}
			return fmt.Sprintf("%s must contain only a-z, 0-9, '.', '_', ':' and '-', found %q", what, rune(c))
		}
	}
	return ""
}

// scopeReason checks a secret scope: global, principal:<id>, channel:<id>
// or skill:<id>; with star, '*' may also appear in id or be the whole scope.
func scopeReason(s string, star bool) string {
	if s == "global" || star && s == Wildcard {
		return ""
	}
	for _, kind := range secretKinds {
		if id, ok := strings.CutPrefix(s, kind); ok {
			return globReason("scope id", id, star)
		}
	}
	return `scope must be "global", "principal:<id>", "channel:<id>" or "skill:<id>"`
}

// secretPattern is a compiled secrets.allowed entry.
type secretPattern struct {
	scope, key string
}

// splitSecret splits "<scope>/<key>" at its only '/'.
func splitSecret(s string) (scope, key string, ok bool) {
	scope, key, ok = strings.Cut(s, "/")
	if !ok || strings.Contains(key, "/") {
		return "", "", false
	}
	return scope, key, true
}

// covers reports whether the pattern covers the manifest scope and key
// (each of which may itself hold a '*'; see glob).
func (p secretPattern) covers(scope, key string) bool {
	return glob(p.scope, scope) && glob(p.key, key)
}

// glob reports whether pattern, in which '*' matches any run of bytes,
// matches s. A '*' in s is an ordinary byte to glob, so it is matched only
// by a '*' of the pattern: the pattern then covers every string s can stand
// for when s is itself a pattern ("api_*" covers "api_*x", "*" covers
// "api_*", "api_token" never covers "api_*").
func glob(pattern, s string) bool {
	px, sx := 0, 0
	starPx, starSx := -1, 0
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			c := pattern[px]
			if c == '*' {
				starPx, starSx = px, sx+1
				px++
				continue
			}
			if sx < len(s) && s[sx] == c {
				px++
				sx++
				continue
			}
		}
		if starPx >= 0 && starSx <= len(s) {
			px, sx = starPx+1, starSx
			starSx++
			continue
		}
		return false
	}
	return true
}

// prefixReason checks a storage prefix pattern: "*" or a path that passes
// the artifact path rule with no '*'. It returns the normalized prefix.
func prefixReason(s string) (string, string) {
	if strings.TrimSpace(s) == Wildcard {
		return Wildcard, ""
	}
	p, err := skillpath.Normalize(s)
	if err != nil {
		return "", "invalid prefix: " + pathReason(err)
	}
	if strings.Contains(p, "*") {
		return "", `a wildcard prefix must be "*" alone`
	}
	return p, ""
}

// pathReason returns the reason of a skillpath error without its prefix.
func pathReason(err error) string {
	if pe := (*skillpath.Error)(nil); errors.As(err, &pe) {
		return pe.Reason
	}
	return err.Error()
}

// prefixCovers reports whether the storage prefix pattern p covers the
// manifest prefix t: "*" covers everything, a prefix covers itself and the
// prefixes below it ("skills" covers "skills/cache" and "skills/*", not
// "skillset").
func prefixCovers(p, t string) bool {
	return p == Wildcard || t == p || strings.HasPrefix(t, p+"/")
}

// channelReason checks a channel name: [a-z0-9._-]+, or "*" when star.
func channelReason(s string, star bool) string {
	if star && s == Wildcard {
		return ""
	}
	if s == "" {
		return "channel must not be empty"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Sprintf("channel must contain only a-z, 0-9, '.', '_' and '-', found %q", rune(c))
		}
	}
	return ""
}

// exactCovers is the coverage of lists without pattern syntax (channels,
// device and node capabilities): "*" covers everything, a name itself.
func exactCovers(p, t string) bool {
	return p == Wildcard || p == t
}
