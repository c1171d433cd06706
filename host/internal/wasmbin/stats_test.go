package wasmbin_test

import (
	"testing"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
	"github.com/palyra-go/palyra/internal/wasmgen"
)

// TestCodeStatistics: Parse reports the code section's size, the largest
// body, the most locals of one body and the locals of all bodies, which
// the audit bounds; modules from internal/wasmgen give known answers (and
// so are checked to be well formed).
func TestCodeStatistics(t *testing.T) {
	for _, tt := range []struct {
		name                  string
		spec                  wasmgen.Spec
		funcs, maxBody        int
		maxLocals             int
		locals                int64
		types, imports, exps  int
		globals, tables, elem int
		data, code            int
	}{
		{name: "empty", spec: wasmgen.Spec{}, types: 2, code: 1},
		{name: "300k empty functions", spec: wasmgen.Spec{Functions: 300_000}, funcs: 300_000, maxBody: 2, types: 2, code: 3 + 300_000*3},
		{name: "locals", spec: wasmgen.Spec{Functions: 3, Locals: 700}, funcs: 3, maxBody: 5, maxLocals: 700, locals: 2100, types: 2, code: 1 + 3*6},
		{name: "call bodies", spec: wasmgen.Spec{Functions: 2, BodyBytes: 1000, Calls: true, Imports: 1}, funcs: 2, maxBody: 1002, types: 2, imports: 1, code: 1 + 2*(2+1002)},
		{name: "entrypoint and counts",
			spec:  wasmgen.Spec{Functions: 4, Types: 300, Exports: 3, Globals: 5, Tables: 2, DataSegments: 6, ElementSegments: 7, Entrypoint: true},
			funcs: 5, maxBody: 4, types: 302, exps: 5, globals: 5, tables: 2, elem: 7, data: 6, code: 1 + 4*3 + 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := wasmbin.Parse(wasmgen.Module(tt.spec), wasmbin.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Functions) != tt.funcs || m.MaxBodyBytes != tt.maxBody || m.MaxBodyLocals != tt.maxLocals || m.Locals != tt.locals {
				t.Errorf("functions %d, largest body %d, most locals %d, locals %d; want %d, %d, %d, %d",
					len(m.Functions), m.MaxBodyBytes, m.MaxBodyLocals, m.Locals, tt.funcs, tt.maxBody, tt.maxLocals, tt.locals)
			}
			if len(m.Types) != tt.types || len(m.Imports) != tt.imports || len(m.Exports) != tt.exps || len(m.Globals) != tt.globals ||
				len(m.Tables) != tt.tables || m.ElementSegments != tt.elem || len(m.DataSegments) != tt.data {
				t.Errorf("types %d imports %d exports %d globals %d tables %d elements %d data %d; want %d %d %d %d %d %d %d",
					len(m.Types), len(m.Imports), len(m.Exports), len(m.Globals), len(m.Tables), m.ElementSegments, len(m.DataSegments),
					tt.types, tt.imports, tt.exps, tt.globals, tt.tables, tt.elem, tt.data)
			}
			if m.CodeBytes != tt.code {
				t.Errorf("code bytes %d, want %d", m.CodeBytes, tt.code)
			}
		})
	}
}
