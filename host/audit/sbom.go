package audit

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/artifact"
)

// sbomComponent is one CycloneDX component of sbom.cdx.json as the audit
// reads it: its name (an artifact entry path for the file components
// palyra's builder writes) and the digests of its hashes that are
// well-formed hex of a known algorithm, keyed by digestAlgs' names.
type sbomComponent struct {
	name string
	real map[string]string
}

// cdxAlgs maps CycloneDX hash algorithm names to digestAlgs' names.
var cdxAlgs = map[string]string{"SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512"}

// readComponents reads the components of sbom.cdx.json leniently (the
// artifact already checked its two required fields): a component whose
// fields are not of the expected type keeps what can be read.
func readComponents(data []byte) []sbomComponent {
	var doc struct {
		Components []json.RawMessage `json:"components"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	var out []sbomComponent
	for _, raw := range doc.Components {
		var c struct {
			Name   any `json:"name"`
			Hashes []struct {
				Alg     any `json:"alg"`
				Content any `json:"content"`
			} `json:"hashes"`
		}
		if json.Unmarshal(raw, &c) != nil {
			continue
		}
		sc := sbomComponent{real: map[string]string{}}
		sc.name, _ = c.Name.(string)
		sc.name = strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(sc.name), `\`, "/"), "./")
		for _, h := range c.Hashes {
			alg, _ := h.Alg.(string)
			content, _ := h.Content.(string)
			name, ok := cdxAlgs[strings.ToUpper(strings.TrimSpace(alg))]
			if !ok {
				continue
			}
			for _, a := range digestAlgs {
				if a.name == name {
					if b, err := hex.DecodeString(strings.ToLower(content)); err == nil && len(b)*2 == a.hexLen {
						sc.real[name] = strings.ToLower(content)
					}
				}
			}
		}
		out = append(out, sc)
	}
	return out
}

// sbomChecks compares the SBOM's component hashes with the artifact's
// entries: one sbom_entry_digest check per entry some component names by
// its path with a real digest, failing when a digest differs. An SBOM
// that names entries but not every module warns once for the modules it
// leaves out; an SBOM that names no entry with a digest (Palyra's own
// example, which lists no files) is one skipped check: CycloneDX does not
// require file components, so their absence is no finding.
func (a *auditor) sbomChecks(modules []string, entries map[string][]byte) {
	comps := readComponents(entries[artifact.SBOMPath])
	named := map[string][]sbomComponent{}
	for _, c := range comps {
		if _, ok := entries[c.name]; ok && len(c.real) > 0 && c.name != artifact.SBOMPath && c.name != artifact.SignaturePath {
			named[c.name] = append(named[c.name], c)
		}
	}
	if len(named) == 0 {
		a.add(skipped("sbom_entry_digest", fmt.Sprintf("sbom.cdx.json names no entry of the artifact with a SHA-256/384/512 hash (%d components): nothing to compare", len(comps)),
			map[string]any{"components": len(comps)}))
		return
	}
	paths := make([]string, 0, len(named))
	for p := range named {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		details := map[string]any{"entry_path": p}
		var mismatches, compared []string
		for _, c := range named[p] {
			ok, bad := compareDigests(entries[p], c.real, details)
			compared = append(compared, ok...)
			for _, m := range bad {
				mismatches = append(mismatches, fmt.Sprintf("sbom.cdx.json gives %s %s but the entry's %s is %s", m.alg, m.want, m.alg, m.got))
			}
		}
		if len(mismatches) > 0 {
			a.add(fail("sbom_entry_digest", fmt.Sprintf("entry %s does not match its SBOM component: %s", mp(p), strings.Join(mismatches, "; ")), details))
			continue
		}
		a.add(pass("sbom_entry_digest", fmt.Sprintf("entry %s matches sbom.cdx.json (%s)", mp(p), strings.Join(compared, ", ")), details))
	}
	var missing []string
	for _, m := range modules {
		if _, ok := named[m]; !ok {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		a.add(warn("sbom_entry_digest", fmt.Sprintf("sbom.cdx.json lists entries of the artifact but not the module(s) %s", strings.Join(missing, ", ")),
			map[string]any{"modules": missing}))
	}
}
