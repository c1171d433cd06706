package wasmbin_test

import (
	"testing"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{wasmbin.ValType(0x40).String(), "0x40"},
		{wasmbin.V128.String(), "v128"},
		{wasmbin.FuncType{}.String(), "() -> ()"},
		{wasmbin.FuncType{Params: []wasmbin.ValType{wasmbin.I32, wasmbin.I32}, Results: []wasmbin.ValType{wasmbin.I32}}.String(), "(i32 i32) -> (i32)"},
		{wasmbin.KindFunc.String(), "func"},
		{wasmbin.KindTable.String(), "table"},
		{wasmbin.KindMemory.String(), "memory"},
		{wasmbin.KindGlobal.String(), "global"},
		{wasmbin.KindTag.String(), "tag"},
		{wasmbin.ExternKind(9).String(), "0x09"},
		{wasmbin.ModeActive.String(), "active"},
		{wasmbin.ModePassive.String(), "passive"},
		{wasmbin.ModeDeclarative.String(), "declarative"},
		{wasmbin.SegmentMode(7).String(), "mode(7)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestFuncTypeEqual(t *testing.T) {
	a := wasmbin.FuncType{Params: []wasmbin.ValType{wasmbin.I32}, Results: []wasmbin.ValType{wasmbin.I32}}
	if !a.Equal(wasmbin.FuncType{Params: []wasmbin.ValType{wasmbin.I32}, Results: []wasmbin.ValType{wasmbin.I32}}) {
		t.Error("equal types differ")
	}
	for _, b := range []wasmbin.FuncType{
		{Params: []wasmbin.ValType{wasmbin.I64}, Results: []wasmbin.ValType{wasmbin.I32}},
		{Params: []wasmbin.ValType{wasmbin.I32}},
		{},
	} {
		if a.Equal(b) {
			t.Errorf("%s equals %s", a, b)
		}
	}
}

// TestHandBuiltModule checks that the helpers cope with a Module that
// Parse did not make and that is inconsistent.
func TestHandBuiltModule(t *testing.T) {
	m := &wasmbin.Module{
		Imports: []wasmbin.Import{
			{Module: "m", Name: "f", Kind: wasmbin.KindFunc, TypeIndex: 5},
			{Module: "m", Name: "t", Kind: wasmbin.KindTable},
			{Module: "m", Name: "mem", Kind: wasmbin.KindMemory},
			{Module: "m", Name: "g", Kind: wasmbin.KindGlobal},
		},
		Exports: []wasmbin.Export{{Name: "mem", Kind: wasmbin.KindMemory, Index: 0}},
	}
	if _, ok := m.FuncType(0); ok {
		t.Error("FuncType found a type out of range")
	}
	if _, ok := m.TableType(0); ok {
		t.Error("TableType found a table import without a type")
	}
	if _, ok := m.ExportedMemory("mem"); ok {
		t.Error("ExportedMemory found a memory import without a type")
	}
	if _, ok := m.GlobalType(0); ok {
		t.Error("GlobalType found a global import without a type")
	}
}
