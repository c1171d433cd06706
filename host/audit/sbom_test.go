package audit

import (
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
)

// sbomOf is a CycloneDX document whose components are the given JSON
// objects.
func sbomOf(components ...string) []byte {
	return []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","components":[` + strings.Join(components, ",") + `]}`)
}

// fileComponent is a file component named path with a SHA-256 hash.
func fileComponent(path, sha string) string {
	return `{"type":"file","name":"` + path + `","hashes":[{"alg":"SHA-256","content":"` + sha + `"}]}`
}

// TestSBOMEntryDigest compares the SBOM's component hashes with the
// artifact's entries: a matching hash passes, a differing one fails the
// audit naming the entry and both digests, a module the SBOM leaves out
// while it lists other entries warns, and an SBOM that lists no entry
// (Palyra's own, a bare CycloneDX header) is skipped, not a warning.
func TestSBOMEntryDigest(t *testing.T) {
	mod, other := fixture(t, "palyra_baseline"), fixture(t, "reactor")
	good, bad := sha256Of(mod), sha256Of(other)
	asset := artifact.File{Path: "prompt.txt", Data: []byte("hello")} // stored as assets/prompt.txt
	one := map[string][]byte{"module.wasm": mod}
	for _, tc := range []struct {
		name    string
		modules map[string][]byte
		sbom    []byte
		want    map[string]Status // entry path ("" for the one check without a path) -> status
		says    []string
	}{
		{"module matches", one, sbomOf(fileComponent("modules/module.wasm", good)),
			map[string]Status{"modules/module.wasm": StatusPass}, []string{"matches sbom.cdx.json (sha256)"}},
		{"upper-case hex matches", one, sbomOf(fileComponent("modules/module.wasm", strings.ToUpper(good))),
			map[string]Status{"modules/module.wasm": StatusPass}, nil},
		{"module differs", one, sbomOf(fileComponent("modules/module.wasm", bad)),
			map[string]Status{"modules/module.wasm": StatusFail}, []string{"modules/module.wasm", "gives sha256 " + bad, "entry's sha256 is " + good}},
		{"asset differs", one, sbomOf(fileComponent("modules/module.wasm", good), fileComponent("assets/prompt.txt", bad)),
			map[string]Status{"modules/module.wasm": StatusPass, "assets/prompt.txt": StatusFail}, []string{"assets/prompt.txt"}},
		{"a module left out", map[string][]byte{"a.wasm": mod, "b.wasm": other}, sbomOf(fileComponent("modules/a.wasm", good)),
			map[string]Status{"modules/a.wasm": StatusPass, "": StatusWarn}, []string{"not the module(s) modules/b.wasm"}},
		{"no file components", one, sampleSBOM, map[string]Status{"": StatusSkipped}, []string{"nothing to compare"}},
		{"library components only", one, sbomOf(`{"type":"library","name":"golang.org/x/text","version":"v0.14.0"}`),
			map[string]Status{"": StatusSkipped}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, verifiedWith(t, bareManifest, tc.modules, tc.sbom, realProv(t, tc.modules), asset), Input{})
			var msgs []string
			for p, want := range tc.want {
				var c Check
				found := false
				for _, x := range r.Checks {
					if x.CheckID == "sbom_entry_digest" && ((p == "" && x.Details["entry_path"] == nil) || x.Details["entry_path"] == p) {
						c, found = x, true
					}
				}
				if !found {
					t.Fatalf("no sbom_entry_digest check for %q in %v", p, ids(r))
				}
				wantStatus(t, c, want)
				msgs = append(msgs, c.Message)
				inReasons := false
				for _, q := range r.QuarantineReasons {
					inReasons = inReasons || q == c.Message
				}
				if inReasons != (want == StatusFail) {
					t.Errorf("%q: in the quarantine reasons: %v, status %s", p, inReasons, want)
				}
			}
			all := strings.Join(msgs, "\n")
			for _, s := range tc.says {
				if !strings.Contains(all, s) {
					t.Errorf("messages %q do not say %q", all, s)
				}
			}
		})
	}
}
