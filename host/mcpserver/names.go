package mcpserver

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// MaxNameLength is the longest tool name the server gives out: MCP clients
// in the wild accept ^[a-zA-Z0-9_-]{1,64}$.
const MaxNameLength = 64

// hashLen is the number of hex digits of a name's hash suffix.
const hashLen = 8

// ToolRef names one tool of one skill: the pair a name is made for.
type ToolRef struct {
	SkillID string
	ToolID  string
}

// String is "<skill_id>/<tool_id>", the text a name's hash suffix is made of.
func (r ToolRef) String() string { return r.SkillID + "/" + r.ToolID }

// BaseName is the name a tool id gets when nothing collides with it: every
// character outside [A-Za-z0-9_-] becomes '_' ("palyra.echo" is
// "palyra_echo"); an empty id is "tool". The result may be longer than
// MaxNameLength: Names then gives the tool a hashed name.
func BaseName(toolID string) string {
	var b strings.Builder
	b.Grow(len(toolID))
	for _, r := range toolID {
		if validNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "tool"
	}
	return b.String()
}

func validNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// ValidName reports whether name matches ^[a-zA-Z0-9_-]{1,64}$.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLength {
		return false
	}
	for _, r := range name {
		if !validNameRune(r) {
			return false
		}
	}
	return true
}

// hashedName is BaseName(ref.ToolID) cut to leave room for "_" and
// hashLen hex digits of sha256(ref.String()) (of ref.String()+"#<n>" for
// the n-th retry, n > 0).
func hashedName(ref ToolRef, n int) string {
	base := BaseName(ref.ToolID)
	if keep := MaxNameLength - 1 - hashLen; len(base) > keep {
		base = base[:keep]
	}
	in := ref.String()
	if n > 0 {
		in = fmt.Sprintf("%s#%d", in, n)
	}
	sum := sha256.Sum256([]byte(in))
	return base + "_" + hex.EncodeToString(sum[:])[:hashLen]
}

// Names gives every tool of refs its MCP name. The names are valid
// (ValidName), unique, and depend only on the set of refs, never on their
// order:
//
//  1. the refs are sorted by skill id, then tool id (duplicates count once);
//  2. in that order, a ref whose BaseName fits in MaxNameLength and is not
//     taken yet gets it;
//  3. then, in the same order, every other ref (a collision, or an id too
//     long) gets its BaseName cut to 55 characters, "_" and the first 8 hex
//     digits of sha256("<skill_id>/<tool_id>"); in the unlikely case that
//     this is taken too, of sha256("<skill_id>/<tool_id>#1"), "#2", ...
//
// So "palyra.echo" in one skill is "palyra_echo"; the same tool id in a
// second skill whose id sorts later is "palyra_echo_<8 hex>".
func Names(refs []ToolRef) map[ToolRef]string {
	sorted := slices.Clone(refs)
	slices.SortFunc(sorted, func(a, b ToolRef) int {
		return cmp.Or(cmp.Compare(a.SkillID, b.SkillID), cmp.Compare(a.ToolID, b.ToolID))
	})
	sorted = slices.Compact(sorted)
	out := make(map[ToolRef]string, len(sorted))
	taken := make(map[string]bool, len(sorted))
	for _, r := range sorted {
		if b := BaseName(r.ToolID); len(b) <= MaxNameLength && !taken[b] {
			out[r], taken[b] = b, true
		}
	}
	for _, r := range sorted {
		if _, ok := out[r]; ok {
			continue
		}
		for n := 0; ; n++ {
			if h := hashedName(r, n); !taken[h] {
				out[r], taken[h] = h, true
				break
			}
		}
	}
	return out
}
