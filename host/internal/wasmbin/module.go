package wasmbin

import (
	"strconv"
	"strings"
)

// ValType is a WebAssembly value type, as its one-byte binary encoding.
type ValType byte

// The value types Parse accepts.
const (
	I32       ValType = 0x7F
	I64       ValType = 0x7E
	F32       ValType = 0x7D
	F64       ValType = 0x7C
	V128      ValType = 0x7B
	FuncRef   ValType = 0x70
	ExternRef ValType = 0x6F
)

// String returns the text-format name of the type ("i32", "funcref", ...),
// or "0xNN" for a byte that is not a value type.
func (v ValType) String() string {
	switch v {
	case I32:
		return "i32"
	case I64:
		return "i64"
	case F32:
		return "f32"
	case F64:
		return "f64"
	case V128:
		return "v128"
	case FuncRef:
		return "funcref"
	case ExternRef:
		return "externref"
	}
	return "0x" + hexByte(byte(v))
}

// IsRef reports whether v is a reference type (funcref or externref).
func (v ValType) IsRef() bool { return v == FuncRef || v == ExternRef }

func hexByte(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&0xF]})
}

// FuncType is a function signature.
type FuncType struct {
	Params  []ValType
	Results []ValType
}

// String returns the signature as "(i32 i32) -> (i32)"; a function of no
// parameters and no results is "() -> ()".
func (f FuncType) String() string {
	var b strings.Builder
	list := func(ts []ValType) {
		b.WriteByte('(')
		for i, t := range ts {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t.String())
		}
		b.WriteByte(')')
	}
	list(f.Params)
	b.WriteString(" -> ")
	list(f.Results)
	return b.String()
}

// Equal reports whether f and g have the same parameters and results.
func (f FuncType) Equal(g FuncType) bool {
	return equalTypes(f.Params, g.Params) && equalTypes(f.Results, g.Results)
}

func equalTypes(a, b []ValType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ExternKind is the kind of an import or export, as its binary encoding.
type ExternKind byte

// The kinds of imports and exports.
const (
	KindFunc   ExternKind = 0x00
	KindTable  ExternKind = 0x01
	KindMemory ExternKind = 0x02
	KindGlobal ExternKind = 0x03
	KindTag    ExternKind = 0x04
)

// String returns "func", "table", "memory", "global" or "tag", or "0xNN"
// for an unknown kind.
func (k ExternKind) String() string {
	switch k {
	case KindFunc:
		return "func"
	case KindTable:
		return "table"
	case KindMemory:
		return "memory"
	case KindGlobal:
		return "global"
	case KindTag:
		return "tag"
	}
	return "0x" + hexByte(byte(k))
}

// TableType describes a table. Sizes count elements.
type TableType struct {
	// Elem is the element type: FuncRef or ExternRef.
	Elem ValType
	// Min is the initial size.
	Min uint64
	// Max is the maximum size; it is meaningful only when HasMax is true.
	Max    uint64
	HasMax bool
	// Is64 is true for a table indexed by i64 (the memory64 proposal).
	Is64 bool
}

// MemoryType describes a linear memory. Sizes count 64 KiB pages.
type MemoryType struct {
	// Min is the initial size in pages.
	Min uint64
	// Max is the maximum size in pages; it is meaningful only when HasMax
	// is true. A memory without a maximum can grow up to 65,536 pages
	// (4 GiB), or 2^48 pages for a 64-bit memory, unless the engine
	// configuration caps it.
	Max    uint64
	HasMax bool
	// Is64 is true for a memory indexed by i64 (the memory64 proposal).
	Is64 bool
	// Shared is true for a shared memory (the threads proposal); a shared
	// memory always has a maximum.
	Shared bool
}

// GlobalType describes a global variable.
type GlobalType struct {
	Type    ValType
	Mutable bool
}

// TagType describes an exception tag (the exception-handling proposal):
// the index of the function type that gives the tag's parameters.
type TagType struct {
	TypeIndex uint32
}

// Import is one entry of the import section.
type Import struct {
	// Module and Name are the two-level import name.
	Module, Name string
	// Kind says which of the fields below describes the import.
	Kind ExternKind
	// TypeIndex is the index into Module.Types of a function or tag
	// import's signature.
	TypeIndex uint32
	// Table is set for a table import.
	Table *TableType
	// Memory is set for a memory import.
	Memory *MemoryType
	// Global is set for a global import.
	Global *GlobalType
}

// Export is one entry of the export section.
type Export struct {
	// Name is the export name; names are unique within a module.
	Name string
	// Kind is the kind of the exported item.
	Kind ExternKind
	// Index is the item's index in the index space of its kind, which
	// counts the imports of that kind first (see Module).
	Index uint32
}

// SegmentMode is the mode of a data or element segment.
type SegmentMode byte

// The segment modes. ModeDeclarative occurs only in element segments.
const (
	ModeActive SegmentMode = iota
	ModePassive
	ModeDeclarative
)

// String returns "active", "passive" or "declarative".
func (m SegmentMode) String() string {
	switch m {
	case ModeActive:
		return "active"
	case ModePassive:
		return "passive"
	case ModeDeclarative:
		return "declarative"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// DataSegment is one entry of the data section. Its bytes are not kept.
type DataSegment struct {
	// Mode is ModeActive (copied into a memory at instantiation) or
	// ModePassive (copied only by memory.init).
	Mode SegmentMode
	// MemoryIndex is the memory an active segment initializes (0 for a
	// passive one).
	MemoryIndex uint32
	// Size is the segment's length in bytes.
	Size int
}

// CustomSection is a custom section (id 0). Its contents are not
// interpreted, not even those of the "name" section.
type CustomSection struct {
	// Name is the section's name.
	Name string
	// Offset is the offset in the module of the section's contents after
	// the name.
	Offset int64
	// Size is the length of the contents after the name, in bytes.
	Size int
}

// Module is what Parse read from a module binary. It holds copies of
// everything it reports and no reference to the input.
//
// # Index spaces
//
// Functions, tables, memories, globals and tags are each numbered in one
// index space per kind, in which the imports of that kind come first, in
// import-section order, followed by the items the module defines. So in a
// module with two function imports, function index 0 and 1 are the imports
// and index 2 is Functions[0]. Export.Index, Start and every index the
// helper methods take use these index spaces.
//
// A Module is plain data: it is safe to read from several goroutines.
type Module struct {
	// Types is the type section: the function signatures.
	Types []FuncType
	// Imports is the import section, in order.
	Imports []Import
	// Functions holds, for each function the module defines, the index
	// into Types of its signature.
	Functions []uint32
	// Tables holds the tables the module defines.
	Tables []TableType
	// Memories holds the memories the module defines.
	Memories []MemoryType
	// Tags holds the exception tags the module defines.
	Tags []TagType
	// Globals holds the types of the globals the module defines.
	Globals []GlobalType
	// Exports is the export section, in order.
	Exports []Export
	// Start is the function index of the start function, or nil.
	Start *uint32
	// ElementSegments is the number of element segments.
	ElementSegments int
	// ElementTables lists, sorted and without repeats, the table indices
	// that active element segments initialize.
	ElementTables []uint32
	// DataCount is the value of the data count section, or nil if the
	// module has none.
	DataCount *uint32
	// DataSegments is the data section, in order.
	DataSegments []DataSegment
	// DataBytes is the total size of all data segments, in bytes.
	DataBytes int64
	// CodeBodies is the number of function bodies in the code section; it
	// always equals len(Functions).
	CodeBodies int
	// CodeBytes is the size of the code section's contents, in bytes (0
	// without a code section).
	CodeBytes int
	// MaxBodyBytes is the size of the largest function body, in bytes, and
	// MaxBodyLocals the most locals one function body declares (parameters
	// not included). They are what a compiler's cost per function grows
	// with; the audit bounds them.
	MaxBodyBytes  int
	MaxBodyLocals int
	// Locals is the number of locals all function bodies declare
	// together (parameters not included).
	Locals int64
	// CustomSections lists the custom sections, in order.
	CustomSections []CustomSection
}

// NumImported returns the number of imports of the given kind.
func (m *Module) NumImported(kind ExternKind) int {
	n := 0
	for i := range m.Imports {
		if m.Imports[i].Kind == kind {
			n++
		}
	}
	return n
}

// ImportedFuncs returns the function imports, in index order (the i-th is
// function index i).
func (m *Module) ImportedFuncs() []Import {
	var out []Import
	for _, im := range m.Imports {
		if im.Kind == KindFunc {
			out = append(out, im)
		}
	}
	return out
}

// ExportedFuncs returns the function exports, in export-section order.
func (m *Module) ExportedFuncs() []Export {
	var out []Export
	for _, ex := range m.Exports {
		if ex.Kind == KindFunc {
			out = append(out, ex)
		}
	}
	return out
}

// Export returns the export with the given name.
func (m *Module) Export(name string) (Export, bool) {
	for _, ex := range m.Exports {
		if ex.Name == name {
			return ex, true
		}
	}
	return Export{}, false
}

// importAt returns the i-th import of the given kind, or nil.
func (m *Module) importAt(kind ExternKind, index uint32) *Import {
	n := uint32(0)
	for i := range m.Imports {
		if m.Imports[i].Kind != kind {
			continue
		}
		if n == index {
			return &m.Imports[i]
		}
		n++
	}
	return nil
}

// FuncType returns the signature of the function with the given index in
// the function index space (imports first), and false when there is no
// such function or its type index is out of range.
func (m *Module) FuncType(funcIndex uint32) (FuncType, bool) {
	var typeIndex uint32
	if im := m.importAt(KindFunc, funcIndex); im != nil {
		typeIndex = im.TypeIndex
	} else {
		i := uint64(funcIndex) - uint64(m.NumImported(KindFunc))
		if i >= uint64(len(m.Functions)) {
			return FuncType{}, false
		}
		typeIndex = m.Functions[i]
	}
	if uint64(typeIndex) >= uint64(len(m.Types)) {
		return FuncType{}, false
	}
	return m.Types[typeIndex], true
}

// MemoryType returns the type of the memory with the given index in the
// memory index space (imports first), and false when there is none.
func (m *Module) MemoryType(memIndex uint32) (MemoryType, bool) {
	if im := m.importAt(KindMemory, memIndex); im != nil {
		if im.Memory == nil {
			return MemoryType{}, false
		}
		return *im.Memory, true
	}
	i := uint64(memIndex) - uint64(m.NumImported(KindMemory))
	if i >= uint64(len(m.Memories)) {
		return MemoryType{}, false
	}
	return m.Memories[i], true
}

// TableType returns the type of the table with the given index in the
// table index space (imports first), and false when there is none.
func (m *Module) TableType(tableIndex uint32) (TableType, bool) {
	if im := m.importAt(KindTable, tableIndex); im != nil {
		if im.Table == nil {
			return TableType{}, false
		}
		return *im.Table, true
	}
	i := uint64(tableIndex) - uint64(m.NumImported(KindTable))
	if i >= uint64(len(m.Tables)) {
		return TableType{}, false
	}
	return m.Tables[i], true
}

// GlobalType returns the type of the global with the given index in the
// global index space (imports first), and false when there is none.
func (m *Module) GlobalType(globalIndex uint32) (GlobalType, bool) {
	if im := m.importAt(KindGlobal, globalIndex); im != nil {
		if im.Global == nil {
			return GlobalType{}, false
		}
		return *im.Global, true
	}
	i := uint64(globalIndex) - uint64(m.NumImported(KindGlobal))
	if i >= uint64(len(m.Globals)) {
		return GlobalType{}, false
	}
	return m.Globals[i], true
}

// ExportedFunc returns the signature of the function exported under name,
// and false when no function is exported under that name.
func (m *Module) ExportedFunc(name string) (FuncType, bool) {
	ex, ok := m.Export(name)
	if !ok || ex.Kind != KindFunc {
		return FuncType{}, false
	}
	return m.FuncType(ex.Index)
}

// ExportedMemory returns the type of the memory exported under name
// (which may be an imported memory re-exported), and false when no memory
// is exported under that name.
func (m *Module) ExportedMemory(name string) (MemoryType, bool) {
	ex, ok := m.Export(name)
	if !ok || ex.Kind != KindMemory {
		return MemoryType{}, false
	}
	return m.MemoryType(ex.Index)
}
