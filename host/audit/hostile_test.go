package audit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/internal/wasmgen"
)

// manyImports returns a module importing n functions () -> () named by
// imp(i).
func manyImports(n int, imp func(i int) (module, field string)) []byte {
	return wasmgen.Module(wasmgen.Spec{Imports: n, ImportName: imp})
}

// TestHostileImports: a module with the most imports wasmbin admits, each
// one wrong, gives one bounded message per check.
func TestHostileImports(t *testing.T) {
	const n = 10000
	long := strings.Repeat("\n", 300)
	for _, tt := range []struct {
		check string
		imp   func(i int) (string, string)
	}{
		{"wasm_import_modules", func(i int) (string, string) { return fmt.Sprintf("env%d%s", i, long), "f" }},
		{"wasm_import_surface", func(i int) (string, string) { return moduleHost, fmt.Sprintf("fn%d", i) }},
		{"wasm_import_surface", func(i int) (string, string) { return moduleWASI, fmt.Sprintf("path_%d", i) }},
	} {
		r := auditInMemory(t, bareManifest, manyImports(n, tt.imp))
		c := mustCheck(t, r, tt.check)
		wantStatus(t, c, StatusFail, fmt.Sprintf("and %d more", n-maxMessageItems))
		if len(c.Message) > 8<<10 {
			t.Errorf("%s: message of %d bytes", tt.check, len(c.Message))
		}
		for k, v := range c.Details {
			if l, ok := v.([]string); ok && len(l) > maxDetailItems {
				t.Errorf("%s: details[%s] holds %d items", tt.check, k, len(l))
			}
		}
	}
}

// auditInMemory audits module without building an artifact around it.
func auditInMemory(tb testing.TB, manifestTOML string, module []byte) *Report {
	tb.Helper()
	m, err := manifest.Parse([]byte(manifestTOML))
	if err != nil {
		tb.Fatal(err)
	}
	insp := &artifact.Inspection{Manifest: m, Entries: map[string][]byte{mod: module}, PayloadSHA256: strings.Repeat("0", 64)}
	r, err := Audit(context.Background(), Input{Inspection: insp, TrustDecision: "allowlisted", Options: hermetic(Options{})})
	if err != nil {
		tb.Fatal(err)
	}
	checkInvariants(tb, r)
	return r
}

// BenchmarkAuditHostileImports audits a module of 10,000 imports, each from
// a different module the host does not provide.
func BenchmarkAuditHostileImports(b *testing.B) {
	module := manyImports(10000, func(i int) (string, string) { return fmt.Sprintf("env%d", i), "f" })
	for b.Loop() {
		auditInMemory(b, bareManifest, module)
	}
}
