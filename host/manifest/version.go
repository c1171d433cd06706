package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a MAJOR.MINOR.PATCH version as Palyra reads it: three
// dot-separated unsigned 32-bit integers, ordered numerically. There are no
// pre-release or build suffixes.
type Version struct {
	Major, Minor, Patch uint32
}

// ParseVersion parses s the way Palyra does: s is trimmed, then it must be
// exactly three '.'-separated parts, each an unsigned 32-bit decimal
// integer. Like Rust's u32 parser it accepts leading zeros and one leading
// '+' ("01", "+1"); it rejects signs '-', spaces inside, empty parts and
// suffixes such as "-rc.1". The error wraps ErrInvalidVersion.
func ParseVersion(s string) (Version, error) {
	v, reason := parseVersion(s)
	if reason != "" {
		return Version{}, fmt.Errorf("%w %q: %s", ErrInvalidVersion, s, reason)
	}
	return v, nil
}

// parseVersion returns the version, or a reason when s is not one.
func parseVersion(s string) (Version, string) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Version{}, "must not be empty"
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return Version{}, "must be MAJOR.MINOR.PATCH (three dot-separated numbers)"
	}
	var n [3]uint32
	for i, p := range parts {
		u, ok := parseU32(p)
		if !ok {
			return Version{}, fmt.Sprintf("part %q is not an unsigned 32-bit integer", p)
		}
		n[i] = u
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2]}, ""
}

// parseU32 follows Rust's u32::from_str: one optional '+', then one or more
// ASCII digits, at most 4294967295.
func parseU32(s string) (uint32, bool) {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	u, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return uint32(u), true
}

// String returns the canonical form "MAJOR.MINOR.PATCH".
func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// Compare returns -1, 0 or +1 as v is below, equal to or above w.
func (v Version) Compare(w Version) int {
	switch {
	case v.Major != w.Major:
		return cmpU32(v.Major, w.Major)
	case v.Minor != w.Minor:
		return cmpU32(v.Minor, w.Minor)
	default:
		return cmpU32(v.Patch, w.Patch)
	}
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CompareVersions parses a and b with ParseVersion and compares them: the
// result is -1, 0 or +1 as a is below, equal to or above b. So "1.02.0"
// equals "1.2.0", and "1.10.0" is above "1.9.0".
func CompareVersions(a, b string) (int, error) {
	va, err := ParseVersion(a)
	if err != nil {
		return 0, err
	}
	vb, err := ParseVersion(b)
	if err != nil {
		return 0, err
	}
	return va.Compare(vb), nil
}
