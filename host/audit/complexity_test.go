package audit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/internal/wasmgen"
)

func TestDefaultModuleLimits(t *testing.T) {
	d := reflect.ValueOf(DefaultModuleLimits())
	for i := 0; i < d.NumField(); i++ {
		if d.Field(i).Int() <= 0 {
			t.Errorf("DefaultModuleLimits().%s = %d", d.Type().Field(i).Name, d.Field(i).Int())
		}
	}
	// At or under wasmparser's limits (limits.rs, MAX_WASM_*).
	l := DefaultModuleLimits()
	for _, c := range []struct {
		name       string
		got, under int64
	}{
		{"MaxFunctions", int64(l.MaxFunctions), 1_000_000},
		{"MaxFunctionBodyBytes", int64(l.MaxFunctionBodyBytes), 128 * 1024},
		{"MaxFunctionLocals", int64(l.MaxFunctionLocals), 50_000},
		{"MaxTypes", int64(l.MaxTypes), 1_000_000},
		{"MaxImports", int64(l.MaxImports), 100_000},
		{"MaxExports", int64(l.MaxExports), 100_000},
		{"MaxGlobals", int64(l.MaxGlobals), 1_000_000},
		{"MaxTables", int64(l.MaxTables), 100},
		{"MaxDataSegments", int64(l.MaxDataSegments), 100_000},
		{"MaxElementSegments", int64(l.MaxElementSegments), 100_000},
	} {
		if c.got > c.under {
			t.Errorf("%s = %d, over wasmparser's %d", c.name, c.got, c.under)
		}
	}
}

// TestModuleComplexity: a module one over each structural limit fails
// wasm_module_complexity, naming the limit, the value seen and the code
// module_too_complex, and its report's error matches ErrModuleTooComplex;
// a module at every limit at once passes the whole audit.
func TestModuleComplexity(t *testing.T) {
	l := DefaultModuleLimits()
	for _, tt := range []struct {
		limit string
		spec  wasmgen.Spec
		value int64
	}{
		// Entrypoint adds one function (run), one type (() -> i32) beyond
		// () -> (), two exports.
		{"max_functions", wasmgen.Spec{Functions: l.MaxFunctions}, int64(l.MaxFunctions) + 1},
		// A body is its locals byte, 3-byte instructions and end.
		{"max_function_body_bytes", wasmgen.Spec{Functions: 1, BodyBytes: l.MaxFunctionBodyBytes}, int64(l.MaxFunctionBodyBytes) + 3},
		{"max_function_locals", wasmgen.Spec{Functions: 1, Locals: l.MaxFunctionLocals + 1}, int64(l.MaxFunctionLocals) + 1},
		{"max_locals", wasmgen.Spec{Functions: 101, Locals: int(l.MaxLocals / 100)}, 101 * (l.MaxLocals / 100)},
		{"max_types", wasmgen.Spec{Types: l.MaxTypes - 1}, int64(l.MaxTypes) + 1},
		{"max_imports", wasmgen.Spec{Imports: l.MaxImports + 1}, int64(l.MaxImports) + 1},
		{"max_exports", wasmgen.Spec{Functions: l.MaxExports, Exports: l.MaxExports}, int64(l.MaxExports) + 2},
		{"max_globals", wasmgen.Spec{Globals: l.MaxGlobals + 1}, int64(l.MaxGlobals) + 1},
		{"max_tables", wasmgen.Spec{Tables: l.MaxTables + 1}, int64(l.MaxTables) + 1},
		{"max_data_segments", wasmgen.Spec{DataSegments: l.MaxDataSegments + 1}, int64(l.MaxDataSegments) + 1},
		{"max_element_segments", wasmgen.Spec{ElementSegments: l.MaxElementSegments + 1}, int64(l.MaxElementSegments) + 1},
	} {
		t.Run(tt.limit, func(t *testing.T) {
			tt.spec.Entrypoint = true
			r := auditInMemory(t, bareManifest, wasmgen.Module(tt.spec))
			c := mustCheck(t, r, "wasm_module_complexity")
			wantStatus(t, c, StatusFail, "module_too_complex", tt.limit, fmt.Sprint(tt.value))
			if c.Details["error_code"] != "module_too_complex" {
				t.Errorf("details error_code = %v", c.Details["error_code"])
			}
			ex, _ := c.Details["exceeded"].([]map[string]any)
			if len(ex) != 1 || ex[0]["limit"] != tt.limit || ex[0]["value"] != tt.value {
				t.Errorf("details exceeded = %v, want only %s at %d", c.Details["exceeded"], tt.limit, tt.value)
			}
			err := r.Err()
			if !errors.Is(err, ErrModuleTooComplex) || !errors.Is(err, ErrAuditFailed) || errcode.Of(err) != "audit_failed" {
				t.Errorf("Err() = %v (code %s), want audit_failed matching module_too_complex", err, errcode.Of(err))
			}
		})
	}

	t.Run("at every limit", func(t *testing.T) {
		spec := wasmgen.Spec{
			Functions:       l.MaxFunctions - 1,
			Locals:          int(l.MaxLocals) / (l.MaxFunctions - 1),
			Types:           l.MaxTypes - 2,
			Globals:         l.MaxGlobals,
			Tables:          1,
			DataSegments:    l.MaxDataSegments,
			ElementSegments: l.MaxElementSegments,
			Exports:         DefaultMaxExportedFunctions - 1,
			Entrypoint:      true,
		}
		r := auditInMemory(t, bareManifest, wasmgen.Module(spec))
		wantStatus(t, mustCheck(t, r, "wasm_module_complexity"), StatusPass)
		if !r.Passed {
			t.Errorf("audit failed: %q", r.QuarantineReasons)
		}
		if errors.Is(r.Err(), ErrModuleTooComplex) {
			t.Error("a passed report matches ErrModuleTooComplex")
		}
	})

	t.Run("limits from Options", func(t *testing.T) {
		r := auditInMemoryWith(t, bareManifest, wasmgen.Module(wasmgen.Spec{Functions: 10, Entrypoint: true}),
			Options{ModuleLimits: ModuleLimits{MaxFunctions: 10}})
		wantStatus(t, mustCheck(t, r, "wasm_module_complexity"), StatusFail, "11 functions, over max_functions 10")
	})
}

// auditInMemoryWith is auditInMemory under opts.
func auditInMemoryWith(tb testing.TB, manifestTOML string, module []byte, opts Options) *Report {
	tb.Helper()
	m, err := manifest.Parse([]byte(manifestTOML))
	if err != nil {
		tb.Fatal(err)
	}
	insp := &artifact.Inspection{Manifest: m, Entries: map[string][]byte{mod: module}, PayloadSHA256: strings.Repeat("0", 64)}
	r, err := Audit(context.Background(), Input{Inspection: insp, TrustDecision: "allowlisted", Options: hermetic(opts)})
	if err != nil {
		tb.Fatal(err)
	}
	checkInvariants(tb, r)
	return r
}

// TestIssue19Module: the module of issue 19, 300,000 empty functions, is
// refused by the audit with module_too_complex and nothing else wrong
// with it is needed for that.
func TestIssue19Module(t *testing.T) {
	module := wasmgen.EmptyFunctions(300_000)
	r := auditInMemory(t, bareManifest, module)
	wantStatus(t, mustCheck(t, r, "wasm_module_complexity"), StatusFail,
		"300000 functions, over max_functions 50000", "module_too_complex")
	if !errors.Is(r.Err(), ErrModuleTooComplex) {
		t.Errorf("Err() = %v", r.Err())
	}
}

// BenchmarkRefuseIssue19Module is the admission of the module of issue 19
// up to its refusal: the artifact (about 1.2 MB of module) is inspected and
// audited. The refusal-ms metric is the time of one refusal.
func BenchmarkRefuseIssue19Module(b *testing.B) {
	vr := verified(b, bareManifest, map[string][]byte{"module.wasm": wasmgen.EmptyFunctions(300_000)})
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		r, err := Audit(context.Background(), Input{Inspection: vr.Inspection, TrustDecision: "allowlisted", Options: hermetic(Options{})})
		if err != nil || !errors.Is(r.Err(), ErrModuleTooComplex) {
			b.Fatalf("Audit: %v %v", err, r.Err())
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "refusal-ms")
}
