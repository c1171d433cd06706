package audit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/manifest"
)

// FuzzAudit audits mutated modules, seeded from every fixture of
// testdata/audit (binaries and WAT text, up to 4 KiB): Audit must never panic or fail,
// and every report must keep its invariants and encode as JSON. The
// artifact around the module is assembled in memory (an Inspection of a
// parsed manifest), so each input costs only the audit. Minimizing a new
// input is quadratic in its size, so cap it when fuzzing:
//
//	go test -run='^$' -fuzz=FuzzAudit -fuzzminimizetime=2s ./host/audit/
func FuzzAudit(f *testing.F) {
	// Large seeds (data_over) make the fuzzer spend its time minimizing
	// them; the unit tests cover them.
	const maxSeedBytes = 4 << 10
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.wa[st]"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > maxSeedBytes {
			continue
		}
		f.Add(b, byte(0))
		f.Add(b, byte(1))
	}
	f.Add([]byte("\x00asm\x01\x00\x00\x00"), byte(0))

	var manifests []*manifest.Manifest
	for _, s := range []string{bareManifest, sampleManifest} {
		m, err := manifest.Parse([]byte(s))
		if err != nil {
			f.Fatal(err)
		}
		manifests = append(manifests, m)
	}
	f.Fuzz(func(t *testing.T, module []byte, which byte) {
		m := manifests[int(which)%len(manifests)]
		entries := map[string][]byte{mod: module}
		if which&2 != 0 {
			// A second module, so module selection and ordering run too.
			entries["modules/z.wasm"] = module
		}
		insp := &artifact.Inspection{Manifest: m, Warnings: m.Warnings(), Entries: entries, PayloadSHA256: strings.Repeat("0", 64)}
		r, err := Audit(context.Background(), Input{Inspection: insp, TrustDecision: "allowlisted",
			Options: hermetic(Options{MaxModuleBytes: 1 << 20})})
		if err != nil {
			t.Fatalf("Audit: %v", err)
		}
		checkInvariants(t, r)
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("json: %v", err)
		}
		for _, c := range r.Checks {
			if len(c.Message) > 16<<10 {
				t.Fatalf("check %s: message of %d bytes", c.CheckID, len(c.Message))
			}
		}
	})
}
