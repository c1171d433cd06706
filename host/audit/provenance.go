package audit

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"path"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/artifact"
)

// digestAlgs are the in-toto digest algorithms the audit recomputes, in
// the order it reports them, with the hex length of a real digest.
var digestAlgs = []struct {
	name   string
	hexLen int
	newH   func() hash.Hash
}{
	{"sha256", 64, sha256.New},
	{"sha384", 96, sha512.New384},
	{"sha512", 128, sha512.New},
}

// provSubject is one in-toto subject as the audit reads it.
type provSubject struct {
	name string
	// real holds the digests that are well-formed hex of a known
	// algorithm, lower-cased; other holds the rest (placeholders such as
	// "placeholder-generated-at-build", unknown algorithms).
	real  map[string]string
	other []string
}

// readSubjects reads the subjects of provenance.json leniently: the
// artifact already checked that it is an object with a non-empty subject
// array; a subject whose name or digest is not of the expected type keeps
// what can be read.
func readSubjects(data []byte) []provSubject {
	var doc struct {
		Subject []json.RawMessage `json:"subject"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	var out []provSubject
	for _, raw := range doc.Subject {
		var s struct {
			Name   any `json:"name"`
			Digest any `json:"digest"`
		}
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		ps := provSubject{real: map[string]string{}}
		ps.name, _ = s.Name.(string)
		ps.name = strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(ps.name), `\`, "/"), "./")
		dm, _ := s.Digest.(map[string]any)
		for alg, v := range dm {
			str, _ := v.(string)
			known := false
			for _, a := range digestAlgs {
				if strings.EqualFold(alg, a.name) {
					known = true
					if b, err := hex.DecodeString(strings.ToLower(str)); err == nil && len(b)*2 == a.hexLen {
						ps.real[a.name] = strings.ToLower(str)
					} else {
						ps.other = append(ps.other, fmt.Sprintf("%s %s", alg, displayName(str)))
					}
				}
			}
			if !known {
				ps.other = append(ps.other, fmt.Sprintf("%s %s", displayName(alg), displayName(str)))
			}
		}
		out = append(out, ps)
	}
	return out
}

// subjectsFor returns the subjects that name module p (an entry path,
// modules/...): a subject named p itself, or p without "modules/" (how
// Palyra's builder names the --module it was given); failing both, a
// subject whose base name is p's, when no other module has that base name.
func subjectsFor(p string, subjects []provSubject, modules []string) []provSubject {
	var out []provSubject
	for _, s := range subjects {
		if s.name != "" && (s.name == p || "modules/"+s.name == p) {
			out = append(out, s)
		}
	}
	if len(out) > 0 {
		return out
	}
	base := path.Base(p)
	for _, m := range modules {
		if m != p && path.Base(m) == base {
			return nil
		}
	}
	for _, s := range subjects {
		if s.name != "" && path.Base(s.name) == base {
			out = append(out, s)
		}
	}
	return out
}

// provenanceChecks compares the provenance's subject digests with the
// modules: one provenance_module_digest check per module. A digest that
// differs fails, and so does a module no subject names once the
// provenance carries any real digest; a subject with only placeholder or
// missing digests, or a provenance with no real digest at all, warns.
func (a *auditor) provenanceChecks(modules []string, entries map[string][]byte) {
	subjects := readSubjects(entries[artifact.ProvenancePath])
	anyReal := false
	var names []string
	for _, s := range subjects {
		anyReal = anyReal || len(s.real) > 0
		names = append(names, displayName(s.name))
	}
	for _, p := range modules {
		details := map[string]any{"module_path": p}
		matched := subjectsFor(p, subjects, modules)
		if len(matched) == 0 {
			details["subjects"] = len(subjects)
			if anyReal {
				a.add(fail("provenance_module_digest", fmt.Sprintf("module %s is not covered by provenance.json: no subject names it (subjects: %s)",
					mp(p), listedNames(names)), details))
			} else {
				a.add(warn("provenance_module_digest", fmt.Sprintf("module %s is not compared with provenance.json: no subject names it and no subject carries a real digest",
					mp(p)), details))
			}
			continue
		}
		var compared []string
		var mismatches []string
		var placeholders []string
		for _, s := range matched {
			details["subject"] = s.name
			ok, bad := compareDigests(entries[p], s.real, details)
			compared = append(compared, ok...)
			for _, m := range bad {
				mismatches = append(mismatches, fmt.Sprintf("provenance.json subject %s gives %s %s but the module's %s is %s",
					displayName(s.name), m.alg, m.want, m.alg, m.got))
			}
			if len(s.real) == 0 {
				what := "carries no digest"
				if len(s.other) > 0 {
					what = "carries only " + listedNames(sortedCopy(s.other)) + ", a placeholder rather than a digest"
				}
				placeholders = append(placeholders, fmt.Sprintf("subject %s %s", displayName(s.name), what))
			}
		}
		switch {
		case len(mismatches) > 0:
			a.add(fail("provenance_module_digest", fmt.Sprintf("module %s does not match its provenance: %s", mp(p), strings.Join(mismatches, "; ")), details))
		case len(compared) > 0:
			a.add(pass("provenance_module_digest", fmt.Sprintf("module %s matches provenance.json (%s)", mp(p), strings.Join(compared, ", ")), details))
		default:
			a.add(warn("provenance_module_digest", fmt.Sprintf("module %s is not compared with provenance.json: %s",
				mp(p), strings.Join(placeholders, "; ")), details))
		}
	}
}

// digestMismatch is a digest given for some bytes that differs from theirs.
type digestMismatch struct{ alg, want, got string }

// compareDigests recomputes over data each digest want gives (keyed by
// digestAlgs' names, in digestAlgs' order), records each one computed in
// details (and the expected one as "expected_<alg>" when it differs), and
// returns the algorithms that matched and the mismatches.
func compareDigests(data []byte, want map[string]string, details map[string]any) (compared []string, mismatches []digestMismatch) {
	for _, alg := range digestAlgs {
		w, ok := want[alg.name]
		if !ok {
			continue
		}
		h := alg.newH()
		h.Write(data)
		got := hex.EncodeToString(h.Sum(nil))
		details[alg.name] = got
		if got != w {
			details["expected_"+alg.name] = w
			mismatches = append(mismatches, digestMismatch{alg.name, w, got})
			continue
		}
		compared = append(compared, alg.name)
	}
	return compared, mismatches
}

// sortedCopy returns s sorted, leaving s as it is.
func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
