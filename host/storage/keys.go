package storage

import (
	"fmt"
	"strings"
)

// Size limits of the key space. Every text and value the guest controls is
// checked against one of these before the database sees it; the error
// names the limit and the size seen.
const (
	// MaxKeyBytes caps a guest key (sdk/ABI.md §5.3).
	MaxKeyBytes = 256
	// MaxFullKeyBytes caps a full key, prefix + "/" + guest key, and the
	// prefix and cursor given to List.
	MaxFullKeyBytes = 512
	// MaxPrefixBytes caps a grant's prefix: room is left for "/" and a
	// one-byte key.
	MaxPrefixBytes = MaxFullKeyBytes - 2
	// MaxValueBytes caps a stored value.
	MaxValueBytes = 1 << 20
	// MaxListLimit caps the number of keys one List call returns.
	MaxListLimit = 1000
	// DefaultListLimit is the number of keys List returns when asked for 0.
	DefaultListLimit = 100
	// MaxSkillIDBytes caps a skill id.
	MaxSkillIDBytes = 256
)

// keyByte reports whether c may appear in a key: [A-Za-z0-9._/-].
func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '/' || c == '-'
}

// ValidateKey checks a guest key against sdk/ABI.md §5.3: 1 to MaxKeyBytes
// bytes of [A-Za-z0-9._/-], made of '/'-separated segments none of which is
// empty, "." or "..". So a key has no leading or trailing '/' and no "//".
// A segment that merely starts with a dot (".hidden", "..x") is allowed.
// The error is a *KeyError wrapping ErrInvalidKey.
func ValidateKey(key string) error {
	return validatePath("key", key, MaxKeyBytes)
}

// ValidatePrefix checks a grant's prefix: the same rules as a key, at most
// MaxPrefixBytes. Prefixes come from the manifest already normalized; they
// are checked again here because a prefix decides which part of the key
// space a handle sees.
func ValidatePrefix(prefix string) error {
	return validatePath("prefix", prefix, MaxPrefixBytes)
}

// JoinKey returns the full key prefix + "/" + key after checking prefix
// with ValidatePrefix, key with ValidateKey and the result against
// MaxFullKeyBytes. The result always starts with prefix + "/".
func JoinKey(prefix, key string) (string, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return "", err
	}
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	full := prefix + "/" + key
	if len(full) > MaxFullKeyBytes {
		return "", newKeyError("full key", full,
			fmt.Sprintf("%d bytes is over the limit of %d bytes", len(full), MaxFullKeyBytes))
	}
	return full, nil
}

// validateFullKey checks a full key as the Store receives it: the key rules
// with MaxFullKeyBytes as the limit.
func validateFullKey(key string) error {
	return validatePath("full key", key, MaxFullKeyBytes)
}

// validatePath applies the key rules to s, naming it kind in errors.
func validatePath(kind, s string, limit int) error {
	switch {
	case s == "":
		return newKeyError(kind, s, "must not be empty")
	case len(s) > limit:
		return newKeyError(kind, s, fmt.Sprintf("%d bytes is over the limit of %d bytes", len(s), limit))
	}
	if reason := checkBytes(s); reason != "" {
		return newKeyError(kind, s, reason)
	}
	if reason := checkSegments(s, false); reason != "" {
		return newKeyError(kind, s, reason)
	}
	return nil
}

// validateListPrefix checks the prefix given to List. It is a string prefix
// of full keys, so it may be empty (every key of the skill) and its last
// segment may be partial: "counters/", "counters/a" and "counters/." are
// fine. Every complete segment (one followed by '/') must still be
// neither empty, "." nor "..".
func validateListPrefix(p string) error {
	const kind = "list prefix"
	if len(p) > MaxFullKeyBytes {
		return newKeyError(kind, p, fmt.Sprintf("%d bytes is over the limit of %d bytes", len(p), MaxFullKeyBytes))
	}
	if reason := checkBytes(p); reason != "" {
		return newKeyError(kind, p, reason)
	}
	if reason := checkSegments(p, true); reason != "" {
		return newKeyError(kind, p, reason)
	}
	return nil
}

// validateCursor checks a List cursor: empty (from the start) or at most
// MaxFullKeyBytes of the key alphabet. A cursor is only ever a bound of a
// range scan inside one skill's key space, so it needs no segment rule.
func validateCursor(c string) error {
	const kind = "list cursor"
	if len(c) > MaxFullKeyBytes {
		return newKeyError(kind, c, fmt.Sprintf("%d bytes is over the limit of %d bytes", len(c), MaxFullKeyBytes))
	}
	if reason := checkBytes(c); reason != "" {
		return newKeyError(kind, c, reason)
	}
	return nil
}

// checkBytes returns why s has a byte outside the key alphabet, or "".
func checkBytes(s string) string {
	for i := 0; i < len(s); i++ {
		if !keyByte(s[i]) {
			return fmt.Sprintf("byte 0x%02x at offset %d is not allowed (keys use only [A-Za-z0-9._/-])", s[i], i)
		}
	}
	return ""
}

// checkSegments returns why the '/'-separated segments of s break the
// rule, or "". With partialLast the last segment is not judged (a string
// prefix may end inside a segment, or with '/').
func checkSegments(s string, partialLast bool) string {
	if s == "" {
		return ""
	}
	if s[0] == '/' {
		return "leading '/' is not allowed"
	}
	off := 0
	for {
		i := strings.IndexByte(s[off:], '/')
		last := i < 0
		seg := s[off:]
		if !last {
			seg = s[off : off+i]
		}
		if last && partialLast {
			return ""
		}
		switch {
		case seg == "" && last:
			return "trailing '/' is not allowed"
		case seg == "":
			return fmt.Sprintf(`empty segment at offset %d ("//") is not allowed`, off)
		case seg == "." || seg == "..":
			return fmt.Sprintf("segment %q is not allowed", seg)
		}
		if last {
			return ""
		}
		off += i + 1
	}
}

// prefixUpperBound returns the smallest string greater than every string
// that starts with p, so that "starts with p" is the range
// [p, upper). ok is false when there is no such bound (p is empty or all
// 0xFF bytes): every string from p on starts with it then, or p is the
// whole space.
func prefixUpperBound(p string) (upper string, ok bool) {
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "", false
	}
	b[len(b)-1]++
	return string(b), true
}
