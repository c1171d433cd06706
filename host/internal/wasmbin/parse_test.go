package wasmbin_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

func mustParse(t testing.TB, data []byte) *wasmbin.Module {
	t.Helper()
	m, err := wasmbin.Parse(data, wasmbin.Limits{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

func TestParseFullModule(t *testing.T) {
	m := mustParse(t, fullModule())

	wantTypes := []string{"() -> ()", "(i32) -> (i32)", "(i32 i64 f32 f64 v128 funcref externref) -> (i32 i64)", "(i32) -> ()"}
	if len(m.Types) != len(wantTypes) {
		t.Fatalf("Types = %v", m.Types)
	}
	for i, w := range wantTypes {
		if got := m.Types[i].String(); got != w {
			t.Errorf("Types[%d] = %s, want %s", i, got, w)
		}
	}

	wantImports := []wasmbin.Import{
		{Module: "env", Name: "f", Kind: wasmbin.KindFunc, TypeIndex: 1},
		{Module: "env", Name: "t", Kind: wasmbin.KindTable, Table: &wasmbin.TableType{Elem: wasmbin.FuncRef, Min: 1, Max: 10, HasMax: true}},
		{Module: "env", Name: "m", Kind: wasmbin.KindMemory, Memory: &wasmbin.MemoryType{Min: 1}},
		{Module: "env", Name: "g", Kind: wasmbin.KindGlobal, Global: &wasmbin.GlobalType{Type: wasmbin.I32}},
		{Module: "env", Name: "gm", Kind: wasmbin.KindGlobal, Global: &wasmbin.GlobalType{Type: wasmbin.I64, Mutable: true}},
		{Module: "env", Name: "e", Kind: wasmbin.KindTag, TypeIndex: 3},
	}
	if !reflect.DeepEqual(m.Imports, wantImports) {
		t.Errorf("Imports = %+v\nwant %+v", m.Imports, wantImports)
	}
	if want := []uint32{0, 1, 2}; !reflect.DeepEqual(m.Functions, want) {
		t.Errorf("Functions = %v, want %v", m.Functions, want)
	}
	wantTables := []wasmbin.TableType{{Elem: wasmbin.ExternRef, Min: 2}, {Elem: wasmbin.FuncRef, Min: 1, Max: 2, HasMax: true, Is64: true}}
	if !reflect.DeepEqual(m.Tables, wantTables) {
		t.Errorf("Tables = %+v, want %+v", m.Tables, wantTables)
	}
	wantMems := []wasmbin.MemoryType{
		{Min: 1, Max: 2, HasMax: true},
		{Min: 1, Max: 1, HasMax: true, Shared: true},
		{Min: 1, Is64: true},
		{Min: 0, Max: 4, HasMax: true, Is64: true, Shared: true},
	}
	if !reflect.DeepEqual(m.Memories, wantMems) {
		t.Errorf("Memories = %+v, want %+v", m.Memories, wantMems)
	}
	if want := []wasmbin.TagType{{TypeIndex: 3}}; !reflect.DeepEqual(m.Tags, want) {
		t.Errorf("Tags = %+v, want %+v", m.Tags, want)
	}
	wantGlobals := []wasmbin.GlobalType{
		{Type: wasmbin.I32}, {Type: wasmbin.I64, Mutable: true}, {Type: wasmbin.F32}, {Type: wasmbin.F64},
		{Type: wasmbin.FuncRef}, {Type: wasmbin.ExternRef}, {Type: wasmbin.FuncRef}, {Type: wasmbin.I32},
		{Type: wasmbin.I64}, {Type: wasmbin.V128},
	}
	if !reflect.DeepEqual(m.Globals, wantGlobals) {
		t.Errorf("Globals = %+v, want %+v", m.Globals, wantGlobals)
	}
	wantExports := []wasmbin.Export{
		{Name: "f", Kind: wasmbin.KindFunc, Index: 1},
		{Name: "run", Kind: wasmbin.KindFunc, Index: 2},
		{Name: "t", Kind: wasmbin.KindTable, Index: 0},
		{Name: "memory", Kind: wasmbin.KindMemory, Index: 1},
		{Name: "m0", Kind: wasmbin.KindMemory, Index: 0},
		{Name: "g", Kind: wasmbin.KindGlobal, Index: 2},
		{Name: "e", Kind: wasmbin.KindTag, Index: 1},
		{Name: "imported", Kind: wasmbin.KindFunc, Index: 0},
	}
	if !reflect.DeepEqual(m.Exports, wantExports) {
		t.Errorf("Exports = %+v, want %+v", m.Exports, wantExports)
	}
	if m.Start == nil || *m.Start != 1 {
		t.Errorf("Start = %v, want 1", m.Start)
	}
	if m.ElementSegments != 8 {
		t.Errorf("ElementSegments = %d, want 8", m.ElementSegments)
	}
	if want := []uint32{0, 1, 2}; !reflect.DeepEqual(m.ElementTables, want) {
		t.Errorf("ElementTables = %v, want %v", m.ElementTables, want)
	}
	if m.DataCount == nil || *m.DataCount != 3 {
		t.Errorf("DataCount = %v, want 3", m.DataCount)
	}
	wantData := []wasmbin.DataSegment{
		{Mode: wasmbin.ModeActive, MemoryIndex: 0, Size: 5},
		{Mode: wasmbin.ModePassive, Size: 2},
		{Mode: wasmbin.ModeActive, MemoryIndex: 3, Size: 3},
	}
	if !reflect.DeepEqual(m.DataSegments, wantData) {
		t.Errorf("DataSegments = %+v, want %+v", m.DataSegments, wantData)
	}
	if m.DataBytes != 10 {
		t.Errorf("DataBytes = %d, want 10", m.DataBytes)
	}
	if m.CodeBodies != 3 {
		t.Errorf("CodeBodies = %d, want 3", m.CodeBodies)
	}
	var customs []string
	for _, c := range m.CustomSections {
		customs = append(customs, c.Name+":"+itoa(c.Size))
	}
	if got, want := strings.Join(customs, ","), "producers:8,mid:0,name:3"; got != want {
		t.Errorf("CustomSections = %s, want %s", got, want)
	}
	data := fullModule()
	for _, c := range m.CustomSections {
		if c.Offset < 0 || c.Offset+int64(c.Size) > int64(len(data)) {
			t.Errorf("custom section %q at %d+%d is outside the module", c.Name, c.Offset, c.Size)
		}
	}
	if c := m.CustomSections[0]; string(data[c.Offset:c.Offset+int64(c.Size)]) != "anything" {
		t.Errorf("custom section producers content at %d is %q", c.Offset, data[c.Offset:c.Offset+int64(c.Size)])
	}

	// Helpers.
	if got := m.NumImported(wasmbin.KindGlobal); got != 2 {
		t.Errorf("NumImported(global) = %d, want 2", got)
	}
	if got := m.ImportedFuncs(); len(got) != 1 || got[0].Name != "f" {
		t.Errorf("ImportedFuncs() = %+v", got)
	}
	if got := m.ExportedFuncs(); len(got) != 3 || got[0].Name != "f" || got[1].Name != "run" || got[2].Name != "imported" {
		t.Errorf("ExportedFuncs() = %+v", got)
	}
	for idx, want := range []string{"(i32) -> (i32)", "() -> ()", "(i32) -> (i32)", "(i32 i64 f32 f64 v128 funcref externref) -> (i32 i64)"} {
		ft, ok := m.FuncType(uint32(idx))
		if !ok || ft.String() != want {
			t.Errorf("FuncType(%d) = %s, %v, want %s", idx, ft, ok, want)
		}
	}
	if _, ok := m.FuncType(4); ok {
		t.Error("FuncType(4) found a function")
	}
	if ft, ok := m.ExportedFunc("imported"); !ok || ft.String() != "(i32) -> (i32)" {
		t.Errorf("ExportedFunc(imported) = %s, %v", ft, ok)
	}
	if _, ok := m.ExportedFunc("memory"); ok {
		t.Error("ExportedFunc(memory) found a function")
	}
	if mt, ok := m.ExportedMemory("memory"); !ok || mt != wantMems[0] {
		t.Errorf("ExportedMemory(memory) = %+v, %v", mt, ok)
	}
	if mt, ok := m.ExportedMemory("m0"); !ok || mt != (wasmbin.MemoryType{Min: 1}) {
		t.Errorf("ExportedMemory(m0) = %+v, %v", mt, ok)
	}
	for _, name := range []string{"run", "nope"} {
		if _, ok := m.ExportedMemory(name); ok {
			t.Errorf("ExportedMemory(%s) found a memory", name)
		}
	}
	if _, ok := m.MemoryType(5); ok {
		t.Error("MemoryType(5) found a memory")
	}
	if tt, ok := m.TableType(0); !ok || tt != *wantImports[1].Table {
		t.Errorf("TableType(0) = %+v, %v", tt, ok)
	}
	if tt, ok := m.TableType(2); !ok || tt != wantTables[1] {
		t.Errorf("TableType(2) = %+v, %v", tt, ok)
	}
	if _, ok := m.TableType(3); ok {
		t.Error("TableType(3) found a table")
	}
	if g, ok := m.GlobalType(1); !ok || g != (wasmbin.GlobalType{Type: wasmbin.I64, Mutable: true}) {
		t.Errorf("GlobalType(1) = %+v, %v", g, ok)
	}
	if g, ok := m.GlobalType(11); !ok || g.Type != wasmbin.V128 {
		t.Errorf("GlobalType(11) = %+v, %v", g, ok)
	}
	if _, ok := m.GlobalType(12); ok {
		t.Error("GlobalType(12) found a global")
	}
	if ex, ok := m.Export("e"); !ok || ex.Kind != wasmbin.KindTag {
		t.Errorf("Export(e) = %+v, %v", ex, ok)
	}
}

// TestLongNullableRefs checks that (ref null func) and (ref null extern),
// written in their two-byte form, are read as funcref and externref, as
// wasmtime does without the function-references proposal.
func TestLongNullableRefs(t *testing.T) {
	m := mustParse(t, mod(
		sec(idType, vec(b(0x60, 2, 0x63, 0x70, 0x63, 0x6F, 0))),
		sec(idTable, vec(b(0x63, 0x6F, 0x00, 0x00))),
		sec(idGlobal, vec(cat(b(0x63, 0x70, 0x00), end(b(0xD0, 0x70))))),
		sec(idElement, vec(cat(u(5), b(0x63, 0x70), vec(end(b(0xD0, 0x70)))))),
	))
	if got := m.Types[0].String(); got != "(funcref externref) -> ()" {
		t.Errorf("type = %s", got)
	}
	if m.Tables[0].Elem != wasmbin.ExternRef || m.Globals[0].Type != wasmbin.FuncRef {
		t.Errorf("table %+v, global %+v", m.Tables[0], m.Globals[0])
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var out []byte
	for ; n > 0; n /= 10 {
		out = append([]byte{byte('0' + n%10)}, out...)
	}
	return string(out)
}

const capsModule = "palyra:plugins/host-capabilities@0.1.0"

// TestPalyraVectors parses the hand-assembled modules that came with the
// Palyra reference material.
func TestPalyraVectors(t *testing.T) {
	run := wasmbin.Export{Name: "run", Kind: wasmbin.KindFunc}
	tests := []struct {
		file      string
		imports   []wasmbin.Import
		exports   []wasmbin.Export
		runType   string
		functions int
	}{
		{file: "palyra-echo-http-example/module.wasm"},
		{
			file:      "derived/run7.wasm",
			exports:   []wasmbin.Export{run},
			runType:   "() -> (i32)",
			functions: 1,
		},
		{
			file:      "derived/http_count.wasm",
			imports:   []wasmbin.Import{{Module: capsModule, Name: "http-count", Kind: wasmbin.KindFunc}},
			exports:   []wasmbin.Export{{Name: "run", Kind: wasmbin.KindFunc, Index: 1}},
			runType:   "() -> (i32)",
			functions: 1,
		},
		{
			file:      "derived/http_handle0.wasm",
			imports:   []wasmbin.Import{{Module: capsModule, Name: "http-handle", Kind: wasmbin.KindFunc}},
			exports:   []wasmbin.Export{{Name: "run", Kind: wasmbin.KindFunc, Index: 1}},
			runType:   "() -> (i32)",
			functions: 1,
		},
		{
			file:      "derived/http_handle42.wasm",
			imports:   []wasmbin.Import{{Module: capsModule, Name: "http-handle", Kind: wasmbin.KindFunc}},
			exports:   []wasmbin.Export{{Name: "run", Kind: wasmbin.KindFunc, Index: 1}},
			runType:   "() -> (i32)",
			functions: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "vectors", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			m := mustParse(t, data)
			if !reflect.DeepEqual(m.Imports, tt.imports) {
				t.Errorf("Imports = %+v, want %+v", m.Imports, tt.imports)
			}
			if !reflect.DeepEqual(m.Exports, tt.exports) {
				t.Errorf("Exports = %+v, want %+v", m.Exports, tt.exports)
			}
			if len(m.Functions) != tt.functions || m.CodeBodies != tt.functions {
				t.Errorf("Functions = %v, CodeBodies = %d, want %d", m.Functions, m.CodeBodies, tt.functions)
			}
			if len(m.Memories)+len(m.Tables)+len(m.Globals)+len(m.DataSegments)+len(m.CustomSections) != 0 ||
				m.Start != nil || m.ElementSegments != 0 {
				t.Errorf("unexpected items in %+v", m)
			}
			if tt.runType != "" {
				if ft, ok := m.ExportedFunc("run"); !ok || ft.String() != tt.runType {
					t.Errorf("run has type %s, %v, want %s", ft, ok, tt.runType)
				}
			}
			for i, im := range m.ImportedFuncs() {
				ft, _ := m.FuncType(uint32(i))
				want := map[string]string{"http-count": "() -> (i32)", "http-handle": "(i32) -> (i32)"}[im.Name]
				if ft.String() != want {
					t.Errorf("import %s has type %s, want %s", im.Name, ft, want)
				}
			}
		})
	}
}

// TestTestdataWasm parses every compiled fixture in testdata/wasm, when
// there are some.
func TestTestdataWasm(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "wasm", "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no testdata/wasm/*.wasm fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := wasmbin.Parse(data, wasmbin.Limits{}); err != nil {
				t.Fatalf("Parse: %v", err)
			}
		})
	}
}

// checkErr checks that err is a well-formed error of the package: it
// wraps want, it is a *FormatError or *LimitError carrying the matching
// code, and its text is prefixed.
func checkErr(t testing.TB, err, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("Parse succeeded, want %v", want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("error %v does not wrap %v", err, want)
	}
	if !strings.HasPrefix(err.Error(), "wasmbin: ") {
		t.Errorf("error %q lacks the wasmbin: prefix", err)
	}
	var fe *wasmbin.FormatError
	var le *wasmbin.LimitError
	switch {
	case errors.As(err, &fe):
		if errcode.Of(err) != "invalid_wasm" || errors.Is(err, wasmbin.ErrLimit) {
			t.Errorf("FormatError %v has code %s", err, errcode.Of(err))
		}
	case errors.As(err, &le):
		if errcode.Of(err) != "wasm_limit_exceeded" || errors.Is(err, wasmbin.ErrInvalid) {
			t.Errorf("LimitError %v has code %s", err, errcode.Of(err))
		}
	default:
		t.Errorf("error %v (%T) is neither a *FormatError nor a *LimitError", err, err)
	}
}

type parseErrorCase struct {
	name   string
	data   []byte
	reason string // a part of FormatError.Reason
	offset int64  // -1: do not check
}

// parseErrorCases are invalid modules, each with the reason Parse must
// give.
func parseErrorCases() []parseErrorCase {
	overlong := b(0x80, 0x80, 0x80, 0x80, 0x80, 0x00) // 0 in 6 bytes
	return []parseErrorCase{
		{"empty", nil, "unexpected end of module in the magic", 0},
		{"short magic", []byte("\x00as"), "unexpected end of module in the magic", 3},
		{"bad magic", []byte("\x00asn\x01\x00\x00\x00"), "bad magic", 0},
		{"elf", []byte("\x7fELF\x02\x01\x01\x00"), "bad magic", 0},
		{"short version", []byte("\x00asm\x01\x00"), "unexpected end of module in the version", 6},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), "unsupported version 2", 4},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), "component", 4},
		{"wat", []byte("(module)"), "module is WebAssembly text (WAT), not a binary", 0},
		{"wat with comments", []byte("\ufeff  ;; a skill\n(; block (; nested ;) ;)\n\t(module $m (func))"), "WebAssembly text (WAT)", 0},
		{"not wat", []byte("(component)"), "bad magic", 0},
		{"unterminated comment", []byte("(; (module)"), "bad magic", 0},

		{"section header truncated", cat(header, b(idType)), "unexpected end of module", 9},
		{"section size past end", cat(header, b(idType, 5, 1)), "type section size 5 runs past the end of the module (1 bytes left)", 8},
		{"unknown section", mod(sec(14)), "unknown section id 14", 8},
		{"section id 255", mod(sec(255)), "unknown section id 255", 8},
		{"duplicate section", mod(typeSec0, typeSec0), "duplicate type section", -1},
		{"out of order", mod(sec(idImport, vec()), typeSec0), "type section out of order: it must come before the import section", -1},
		{"tag after global", mod(sec(idGlobal, vec()), sec(idTag, vec())), "tag section out of order", -1},
		{"data count after code", mod(sec(idCode, vec()), sec(idDataCount, u(0))), "data count section out of order", -1},
		{"data count before element", mod(sec(idDataCount, u(0)), sec(idElement, vec())), "element section out of order", -1},
		{"not consumed", mod(sec(idType, vec(functype(nil, nil)), b(0x60))), "section not fully consumed: 1 bytes left over", 14},
		{"section runs short", mod(sec(idType, u(2), functype(nil, nil))), "type count 2 is more than the 3 bytes left can hold", 10},
		{"entry runs past section", mod(sec(idType, u(1), b(0x60, 0x02, 0x7F))), "parameter count 2 is more than the 1 bytes left can hold", 12},

		{"over-long section size", cat(header, b(idType), overlong), "integer representation too long", 9},
		{"over-long count", mod(sec(idType, overlong)), "integer representation too long", 10},
		{"u32 too large", mod(sec(idType, b(0xFF, 0xFF, 0xFF, 0xFF, 0x1F))), "integer too large for 32 bits", 10},
		{"s32 too large", mod(typeSec0, sec(idGlobal, vec(cat(b(0x7F, 0x00), end(b(0x41, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F)))))), "integer too large for 32 bits", -1},
		{"s64 too long", mod(typeSec0, sec(idGlobal, vec(cat(b(0x7E, 0x00), end(b(0x42), []byte("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00")))))), "integer representation too long", -1},

		{"invalid type form", mod(sec(idType, vec(b(0x61, 0, 0)))), "invalid type form 0x61", 11},
		{"gc type form", mod(sec(idType, vec(b(0x5F, 0, 0)))), "GC proposal type form 0x5f is not supported", 11},
		{"invalid value type", mod(sec(idType, vec(b(0x60, 1, 0x40, 0)))), "invalid value type 0x40", 13},
		{"non-nullable ref", mod(sec(idType, vec(b(0x60, 1, 0x64, 0x70, 0)))), "value type 0x64 of the function-references or GC proposal is not supported", 13},
		{"concrete ref", mod(sec(idType, vec(b(0x60, 1, 0x63, 0x00, 0)))), "value type 0x63 of the function-references or GC proposal is not supported", 13},
		{"gc heap type", mod(sec(idGlobal, vec(cat(b(0x70, 0x00), end(b(0xD0, 0x73)))))), "reference type 0x73 of the function-references or GC proposal is not supported", 14},
		{"anyref", mod(sec(idTable, vec(b(0x6E, 0x00, 0x00)))), "reference type 0x6e of the function-references or GC proposal is not supported", 11},

		{"import type index", mod(typeSec0, sec(idImport, vec(cat(str("m"), str("f"), b(0x00), u(1))))), `import "m" "f": type index 1 out of range (1 types)`, -1},
		{"import kind", mod(sec(idImport, vec(cat(str("m"), str("f"), b(0x05), u(0))))), "invalid import kind 0x05", -1},
		{"import module utf8", mod(sec(idImport, vec(cat(str("m\xff"), str("f"), b(0x00), u(0))))), "import module name is not valid UTF-8", 11},
		{"import name utf8", mod(typeSec0, sec(idImport, vec(cat(str("m"), str("\xc3"), b(0x00), u(0))))), "import name is not valid UTF-8", -1},
		{"global mutability", mod(sec(idImport, vec(cat(str("m"), str("g"), b(0x03, 0x7F, 0x02))))), "invalid global mutability 0x02", -1},
		{"tag attribute", mod(sec(idType, vec(functype(nil, nil))), sec(idImport, vec(cat(str("m"), str("e"), b(0x04, 0x01), u(0))))), "invalid tag attribute 0x01", -1},
		{"tag with results", mod(sec(idType, vec(functype(nil, vt(wasmbin.I32)))), sec(idTag, vec(b(0x00, 0x00)))), "tag type () -> (i32) has results", -1},

		{"function type index", mod(typeSec0, sec(idFunction, vec(u(1)))), "function 0: type index 1 out of range (1 types)", -1},
		{"function without code", mod(typeSec0, sec(idFunction, vec(u(0)))), "function section declares 1 functions but there is no code section", -1},
		{"code without function", mod(typeSec0, sec(idCode, vec(emptyBody()))), "code section has 1 function bodies but the function section declares 0 functions", -1},
		{"function code mismatch", mod(typeSec0, sec(idFunction, vec(u(0), u(0))), sec(idCode, vec(emptyBody()))), "code section has 1 function bodies but the function section declares 2", -1},
		{"empty body", mod(typeSec0, sec(idFunction, vec(u(0))), sec(idCode, vec(u(0)), b(0, 0))), "unexpected end of section", -1},
		{"body without end", mod(typeSec0, sec(idFunction, vec(u(0))), sec(idCode, vec(cat(u(2), b(0x00, 0x01))))), "function 0: body does not end with an end opcode", -1},
		{"body past end", mod(typeSec0, sec(idFunction, vec(u(0))), sec(idCode, u(1), u(9), b(0, 0x0B))), "function 0: body size 9 runs past the end of the section (2 bytes left)", -1},
		{"local type", mod(typeSec0, sec(idFunction, vec(u(0))), sec(idCode, vec(cat(u(4), b(0x01, 0x01, 0x00, 0x0B))))), "invalid value type 0x00", -1},

		{"table flags", mod(sec(idTable, vec(b(0x70, 0x02, 0x01)))), "invalid table limits flags 0x02", -1},
		{"table min above max", mod(sec(idTable, vec(b(0x70, 0x01, 0x02, 0x01)))), "table minimum 2 is greater than its maximum 1", -1},
		{"table elem type", mod(sec(idTable, vec(b(0x7F, 0x00, 0x00)))), "invalid reference type 0x7f", -1},
		{"table init expr", mod(sec(idTable, vec(b(0x40, 0x00, 0x70, 0x00, 0x00, 0xD0, 0x70, 0x0B)))), "table with an initializer expression", -1},
		{"memory flags", mod(sec(idMemory, vec(b(0x10, 0x00)))), "invalid memory limits flags 0x10", -1},
		{"memory custom page size", mod(sec(idMemory, vec(b(0x08, 0x00, 0x00)))), "custom page sizes are not supported", -1},
		{"memory min above max", mod(sec(idMemory, vec(b(0x01, 0x02, 0x01)))), "memory minimum 2 is greater than its maximum 1", -1},
		{"memory too large", mod(sec(idMemory, vec(cat(b(0x00), u(65537))))), "memory minimum of 65537 pages exceeds the 65536 pages of a 32-bit memory", -1},
		{"memory max too large", mod(sec(idMemory, vec(cat(b(0x01), u(0), u(65537))))), "memory maximum of 65537 pages exceeds", -1},
		{"memory64 too large", mod(sec(idMemory, vec(cat(b(0x04), u(1<<48+1))))), "exceeds the 281474976710656 pages of a 64-bit memory", -1},
		{"shared without max", mod(sec(idMemory, vec(b(0x02, 0x01)))), "shared memory must have a maximum", -1},

		{"const expr opcode", mod(sec(idGlobal, vec(cat(b(0x7F, 0x00), end(b(0x20, 0x00)))))), "global 0: opcode 0x20 is not allowed in a constant expression", -1},
		{"const expr type", mod(sec(idGlobal, vec(cat(b(0x7F, 0x00), end(i64c(1)))))), "global 0: constant expression yields (i64), want (i32)", -1},
		{"const expr two values", mod(sec(idGlobal, vec(cat(b(0x7F, 0x00), end(i32c(1), i32c(2)))))), "constant expression yields (i32 i32), want (i32)", -1},
		{"const expr empty", mod(sec(idGlobal, vec(cat(b(0x7F, 0x00), end())), b(0))), "constant expression yields (), want (i32)", -1},
		{"const expr no end", mod(sec(idGlobal, vec(cat(b(0x7F, 0x00), i32c(1))))), "unexpected end of section", -1},
		{"const expr add operand", mod(sec(idGlobal, vec(cat(b(0x7F, 0x00), end(i32c(1), b(0x6A)))))), "i32.add needs two i32 operands", -1},
		{"const expr mul types", mod(sec(idGlobal, vec(cat(b(0x7E, 0x00), end(i64c(1), i32c(1), b(0x7E)))))), "i64.mul needs two i64 operands", -1},
		{"const expr defined global", mod(sec(idGlobal, vec(cat(b(0x7F, 0x00), end(i32c(0))), cat(b(0x7F, 0x00), end(b(0x23, 0x00)))))), "global 1: global.get 0: a constant expression can only read an imported global (0 imported)", -1},
		{"const expr global range", mod(sec(idGlobal, vec(cat(b(0x7F, 0x00), end(b(0x23, 0x00)))))), "global.get 0: global index out of range (0 globals)", -1},
		{"const expr mutable global", mod(sec(idImport, vec(cat(str("m"), str("g"), b(0x03, 0x7F, 0x01)))), sec(idGlobal, vec(cat(b(0x7F, 0x00), end(b(0x23, 0x00)))))), "cannot read a mutable global", -1},
		{"const expr ref.func range", mod(sec(idGlobal, vec(cat(b(0x70, 0x00), end(b(0xD2, 0x00)))))), "ref.func 0: function index out of range (0 functions)", -1},
		{"const expr ref.null type", mod(sec(idGlobal, vec(cat(b(0x70, 0x00), end(b(0xD0, 0x7F)))))), "invalid reference type 0x7f", -1},
		{"const expr simd op", mod(sec(idGlobal, vec(cat(b(0x7B, 0x00), end(b(0xFD), u(13)))))), "opcode 0xfd 13 is not allowed", -1},
		{"const expr v128 short", mod(sec(idGlobal, vec(cat(b(0x7B, 0x00), end(b(0xFD), u(12), make([]byte, 8)))))), "unexpected end of section", -1},

		{"duplicate export", mod(typeSec0, sec(idFunction, vec(u(0))), sec(idExport, vec(cat(str("run"), b(0x00), u(0)), cat(str("run"), b(0x00), u(0)))), sec(idCode, vec(emptyBody()))), `duplicate export name "run"`, 27},
		{"export utf8", mod(sec(idExport, vec(cat(str("\xed\xa0\x80"), b(0x00), u(0))))), "export name is not valid UTF-8", -1},
		{"export kind", mod(sec(idExport, vec(cat(str("x"), b(0x05), u(0))))), `export "x": invalid export kind 0x05`, -1},
		{"export func range", mod(sec(idExport, vec(cat(str("x"), b(0x00), u(0))))), `export "x": func index 0 out of range (0 functions)`, -1},
		{"export memory range", mod(sec(idExport, vec(cat(str("x"), b(0x02), u(0))))), `export "x": memory index 0 out of range (0 memories)`, -1},
		{"custom name utf8", mod(custom("\xff", nil)), "custom section name is not valid UTF-8", 10},
		{"custom name past end", cat(header, b(idCustom, 2, 5, 'a')), "unexpected end of section", -1},

		{"start range", mod(sec(idStart, u(0))), "start function index 0 out of range (0 functions)", -1},
		{"start type", mod(sec(idType, vec(functype(vt(wasmbin.I32), nil))), sec(idFunction, vec(u(0))), sec(idStart, u(0)), sec(idCode, vec(emptyBody()))), "start function 0 has type (i32) -> (), want () -> ()", -1},

		{"elem flags", mod(sec(idElement, vec(cat(u(8), b(0x00, 0x00))))), "element segment 0: invalid flags 8", -1},
		{"elem table range", mod(sec(idElement, vec(cat(u(0), end(i32c(0)), vec())))), "element segment 0: table index 0 out of range (0 tables)", -1},
		{"elem table type", mod(sec(idTable, vec(b(0x6F, 0x00, 0x00))), sec(idElement, vec(cat(u(0), end(i32c(0)), vec())))), "element segment 0: funcref elements for table 0 of externref", -1},
		{"elem offset type", mod(sec(idTable, vec(b(0x70, 0x00, 0x00))), sec(idElement, vec(cat(u(0), end(i64c(0)), vec())))), "element segment 0: offset: constant expression yields (i64), want (i32)", -1},
		{"elem func range", mod(sec(idElement, vec(cat(u(1), b(0x00), vec(u(0)))))), "element segment 0: function index 0 out of range (0 functions)", -1},
		{"elem kind", mod(sec(idElement, vec(cat(u(1), b(0x01), vec())))), "element segment 0: invalid element kind 0x01", -1},
		{"elem expr type", mod(sec(idElement, vec(cat(u(5), b(0x70), vec(end(b(0xD0, 0x6F))))))), "element segment 0: item 0: constant expression yields (externref), want (funcref)", -1},
		{"elem items past end", mod(sec(idElement, vec(cat(u(1), b(0x00), u(5))))), "element segment 0: item count 5 is more than the 0 bytes left can hold", -1},

		{"data flags", mod(sec(idData, vec(cat(u(3), str(""))))), "data segment 0: invalid flags 3", -1},
		{"data memory range", mod(sec(idData, vec(cat(u(0), end(i32c(0)), str("x"))))), "data segment 0: memory index 0 out of range (0 memories)", -1},
		{"data memory index range", mod(sec(idMemory, vec(b(0x00, 0x00))), sec(idData, vec(cat(u(2), u(1), end(i32c(0)), str("x"))))), "memory index 1 out of range (1 memories)", -1},
		{"data offset type", mod(sec(idMemory, vec(b(0x04, 0x00))), sec(idData, vec(cat(u(0), end(i32c(0)), str("x"))))), "data segment 0: offset: constant expression yields (i32), want (i64)", -1},
		{"data size past end", mod(sec(idData, vec(cat(u(1), u(9), b('x'))))), "data segment 0: size 9 runs past the end of the section (1 bytes left)", -1},
		{"data count mismatch", mod(sec(idDataCount, u(2)), sec(idData, vec(cat(u(1), str("x"))))), "data section has 1 segments but the data count section declares 2", -1},
		{"data count without data", mod(sec(idDataCount, u(1))), "data count section declares 1 segments but there is no data section", -1},
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range parseErrorCases() {
		t.Run(tt.name, func(t *testing.T) {
			m, err := wasmbin.Parse(tt.data, wasmbin.Limits{})
			if m != nil {
				t.Errorf("Parse returned a module with its error")
			}
			checkErr(t, err, wasmbin.ErrInvalid)
			var fe *wasmbin.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if !strings.Contains(fe.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", fe.Reason, tt.reason)
			}
			if tt.offset >= 0 && fe.Offset != tt.offset {
				t.Errorf("Offset = %d, want %d (%v)", fe.Offset, tt.offset, err)
			}
			if fe.Offset < 0 || fe.Offset > int64(len(tt.data)) {
				t.Errorf("Offset %d is outside the %d-byte input", fe.Offset, len(tt.data))
			}
		})
	}
}
