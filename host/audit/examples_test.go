package audit

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// exampleArtifact builds the Go example name with the standard toolchain
// (cached per source, see examplebuild.MustBuild) and packages it with the
// example's own skill.toml, sbom.cdx.json and provenance.json, as the
// module modules/<name>.wasm its provenance names. assets are added as
// they are.
func exampleArtifact(tb testing.TB, name string, assets ...artifact.File) (*artifact.Built, []byte) {
	tb.Helper()
	module, err := os.ReadFile(examplebuild.MustBuild(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	dir := examplebuild.MustDir(tb, name)
	read := func(f string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	built, err := artifact.Build(artifact.BuildInput{
		Manifest:   read("skill.toml"),
		Modules:    []artifact.File{{Path: name + ".wasm", Data: module}},
		Assets:     assets,
		SBOM:       read("sbom.cdx.json"),
		Provenance: read("provenance.json"),
		SigningKey: testKey,
		SignedAt:   signedAt,
	})
	if err != nil {
		tb.Fatalf("artifact.Build %s: %v", name, err)
	}
	return built, module
}

// TestGoExamplesPass: every example skill of sdk/examples, built as a real
// Go wasip1 reactor, passes the audit under the default policy, with no
// warning but the placeholder provenance digest.
func TestGoExamplesPass(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Go examples")
	}
	for _, name := range examplebuild.Names() {
		t.Run(name, func(t *testing.T) {
			built, module := exampleArtifact(t, name)
			insp, err := artifact.Inspect(built.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			vr := &artifact.VerifyReport{TrustDecision: "allowlisted", Inspection: insp}
			r := run(t, vr, Input{})
			if !r.Passed {
				t.Fatalf("example %s failed the audit: %q", name, r.QuarantineReasons)
			}
			// The examples' provenance.json carries the placeholder digest
			// "generated-at-build" (the module is built later): a warning,
			// never a failure, and the only one.
			if w := r.WarningChecks(); !slices.Equal(w, []string{"provenance_module_digest"}) {
				t.Errorf("warnings: %v, want only provenance_module_digest", w)
			}
			wantStatus(t, mustCheck(t, r, "provenance_module_digest"), StatusWarn, "modules/"+name+".wasm", "generated-at-build", "placeholder")
			c := mustCheck(t, r, "wasm_entrypoint")
			if c.Details["module_path"] != "modules/"+name+".wasm" || c.Details["entrypoint"] != "palyra_plugin_main" ||
				c.Details["initialize"] != true || c.Details["memory_exported"] != true {
				t.Errorf("wasm_entrypoint details = %v", c.Details)
			}
			t.Logf("%s: module %d bytes, artifact %d bytes, %d checks", name, len(module), len(built.Bytes), len(r.Checks))
		})
	}
}
