package inventory

import (
	"strconv"
	"strings"
)

// semver is a MAJOR.MINOR.PATCH version as Palyra reads it: three
// dot-separated unsigned 32-bit integers compared as a numeric tuple, so
// 1.10.0 is above 1.9.0. host/manifest exports the same
// rule as ParseVersion/CompareVersions; this small copy keeps the inventory
// free of a dependency on the manifest package.
type semver [3]uint32

// parseSemver parses s after trimming it. Each part is one optional '+'
// followed by ASCII digits, at most 4294967295, as Rust's u32 parser reads
// it; there are no pre-release or build suffixes.
func parseSemver(s string) (semver, bool) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) != 3 {
		return semver{}, false
	}
	var v semver
	for i, p := range parts {
		p = strings.TrimPrefix(p, "+")
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return semver{}, false
		}
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return semver{}, false
		}
		v[i] = uint32(n)
	}
	return v, true
}

// compare returns -1, 0 or +1 as v is below, equal to or above w.
func (v semver) compare(w semver) int {
	for i := range v {
		switch {
		case v[i] < w[i]:
			return -1
		case v[i] > w[i]:
			return 1
		}
	}
	return 0
}

// String returns the canonical form: "01.2.+3" is stored as "1.2.3", so one
// version has exactly one key in the database.
func (v semver) String() string {
	return strconv.FormatUint(uint64(v[0]), 10) + "." +
		strconv.FormatUint(uint64(v[1]), 10) + "." +
		strconv.FormatUint(uint64(v[2]), 10)
}

// compareVersionStrings orders two stored version strings. A string that
// does not parse (never written by this package) sorts below every version.
func compareVersionStrings(a, b string) int {
	va, oka := parseSemver(a)
	vb, okb := parseSemver(b)
	switch {
	case oka && okb:
		return va.compare(vb)
	case oka:
		return 1
	case okb:
		return -1
	}
	return strings.Compare(a, b)
}

// CompareVersions orders two versions numerically (1.10.0 is above 1.9.0):
// -1, 0 or +1, as cmp.Compare. A string that is not MAJOR.MINOR.PATCH
// sorts below every version.
func CompareVersions(a, b string) int { return compareVersionStrings(a, b) }
