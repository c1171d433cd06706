package wasmbin

import (
	"bytes"
	"encoding/binary"
)

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionNames names the section ids, for errors.
var sectionNames = [...]string{
	secCustom: "custom", secType: "type", secImport: "import", secFunction: "function",
	secTable: "table", secMemory: "memory", secGlobal: "global", secExport: "export",
	secStart: "start", secElement: "element", secCode: "code", secData: "data",
	secDataCount: "data count", secTag: "tag",
}

// sectionRank gives the position of each non-custom section in the order
// the spec requires (the tag section sits between memory and global, the
// data count section between element and code).
var sectionRank = [...]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6,
	secGlobal: 7, secExport: 8, secStart: 9, secElement: 10, secDataCount: 11,
	secCode: 12, secData: 13,
}

const (
	maxPages32 = 1 << 16 // pages of a 32-bit memory (4 GiB)
	maxPages64 = 1 << 48 // pages of a 64-bit memory
)

var magic = []byte("\x00asm")

// Parse reads a WebAssembly core module binary and returns what it
// declares, or an error wrapping ErrInvalid (a *FormatError) or ErrLimit
// (a *LimitError). lim bounds counts and sizes; its zero fields take their
// defaults from DefaultLimits.
//
// Parse checks the binary format of the WebAssembly 2.0 specification
// (which includes multi-value, bulk memory, reference types and SIMD),
// plus the encodings that show outside function bodies of the proposals
// wasmtime 25 enables by default (multi-memory, threads' shared memories,
// extended constant expressions) and of two it does not: memory64 (for
// memories and tables) and exception handling (the tag section, tag
// imports and exports). It also checks the rules of validation that do
// not need the code: every type, function, table, memory, global and tag
// index is in range, limits are consistent, constant expressions are well
// typed, export names are unique, the start function has type () -> (),
// and the code and data sections have the counts the function and data
// count sections announce. Function bodies are framed and their local
// declarations read, but their instructions are not decoded, so a module
// Parse accepts may still fail to compile.
//
// Constant expressions follow WebAssembly 2.0 (as wasmtime does without
// the GC proposal): global.get may read only imported, immutable globals.
// Typed function references and GC types (reference types other than
// funcref and externref, which may also be written (ref null func) and
// (ref null extern); recursive and sub types), table initializer
// expressions and custom page sizes are not supported and are reported as
// invalid, as wasmtime's default configuration does.
//
// Parse does not keep data or any slice of it, never panics, and takes
// time and memory linear in len(data). It is safe for concurrent use.
func Parse(data []byte, lim Limits) (*Module, error) {
	lim = lim.withDefaults()
	if len(data) > lim.MaxModuleBytes {
		return nil, &LimitError{Limit: "MaxModuleBytes", What: "module size", Value: uint64(len(data)), Max: uint64(lim.MaxModuleBytes)}
	}
	if err := checkHeader(data); err != nil {
		return nil, err
	}
	p := &parser{lim: &lim, m: &Module{}}
	frame := &reader{buf: data, pos: 8, lim: &lim}
	lastID, lastRank := -1, 0
	for frame.left() > 0 {
		at := frame.off()
		id, _ := frame.byte()
		size, err := frame.u32()
		if err != nil {
			return nil, err
		}
		if uint64(size) > uint64(frame.left()) {
			return nil, frame.failAt(at, "%s section size %d runs past the end of the module (%d bytes left)", sectionName(id), size, frame.left())
		}
		if id != secCustom {
			if int(id) >= len(sectionRank) || sectionRank[id] == 0 {
				return nil, frame.failAt(at, "unknown section id %d", id)
			}
			rank := sectionRank[id]
			switch {
			case rank == lastRank:
				return nil, frame.failAt(at, "duplicate %s section", sectionNames[id])
			case rank < lastRank:
				return nil, frame.failAt(at, "%s section out of order: it must come before the %s section", sectionNames[id], sectionNames[lastID])
			}
			lastID, lastRank = int(id), rank
		}
		body, _ := frame.bytes(int(size))
		r := &reader{buf: body, base: frame.off() - int64(size), section: sectionNames[id], lim: &lim}
		if err := p.section(id, r); err != nil {
			return nil, err
		}
		if r.left() != 0 {
			return nil, r.fail("section not fully consumed: %d bytes left over", r.left())
		}
	}
	if err := p.finish(frame); err != nil {
		return nil, err
	}
	return p.m, nil
}

func sectionName(id byte) string {
	if int(id) < len(sectionNames) && sectionNames[id] != "" {
		return sectionNames[id]
	}
	return "unknown"
}

// checkHeader checks the magic number and the version.
func checkHeader(data []byte) error {
	r := &reader{buf: data}
	if !bytes.HasPrefix(data, magic) {
		if isWAT(data) {
			return r.fail("module is WebAssembly text (WAT), not a binary")
		}
		if len(data) < len(magic) && bytes.HasPrefix(magic, data) {
			return &FormatError{Offset: int64(len(data)), Reason: "unexpected end of module in the magic number"}
		}
		return r.fail("bad magic number: not a WebAssembly binary")
	}
	if len(data) < 8 {
		return &FormatError{Offset: int64(len(data)), Reason: "unexpected end of module in the version"}
	}
	switch v := binary.LittleEndian.Uint32(data[4:8]); v {
	case 1:
		return nil
	case 0x0001000d:
		return &FormatError{Offset: 4, Reason: "module is a WebAssembly component, not a core module"}
	default:
		return &FormatError{Offset: 4, Reason: "unsupported version " + itoa(uint64(v)) + ", want 1"}
	}
}

// isWAT reports whether data looks like the text format: white space and
// comments, then "(module".
func isWAT(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for len(data) > 0 {
		switch {
		case data[0] == ' ' || data[0] == '\t' || data[0] == '\n' || data[0] == '\r':
			data = data[1:]
		case bytes.HasPrefix(data, []byte(";;")):
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				return false
			}
			data = data[i+1:]
		case bytes.HasPrefix(data, []byte("(;")):
			depth := 0
			for len(data) > 0 {
				if bytes.HasPrefix(data, []byte("(;")) {
					depth++
					data = data[2:]
				} else if bytes.HasPrefix(data, []byte(";)")) {
					depth--
					data = data[2:]
					if depth == 0 {
						break
					}
				} else {
					data = data[1:]
				}
			}
			if depth != 0 {
				return false
			}
		default:
			return bytes.HasPrefix(data, []byte("(module"))
		}
	}
	return false
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// parser holds what the sections read so far declare.
type parser struct {
	lim *Limits
	m   *Module

	nFuncs, nTables, nMemories, nTags int // imported + defined so far
	tables                            []TableType
	memories                          []MemoryType
	globals                           []GlobalType // imported + defined so far
	nImportedGlobals                  int

	sawCode, sawData bool
}

func (p *parser) section(id byte, r *reader) error {
	switch id {
	case secCustom:
		return p.custom(r)
	case secType:
		return p.types(r)
	case secImport:
		return p.imports(r)
	case secFunction:
		return p.functions(r)
	case secTable:
		return p.tableSection(r)
	case secMemory:
		return p.memorySection(r)
	case secTag:
		return p.tagSection(r)
	case secGlobal:
		return p.globalSection(r)
	case secExport:
		return p.exports(r)
	case secStart:
		return p.start(r)
	case secElement:
		return p.elements(r)
	case secDataCount:
		return p.dataCount(r)
	case secCode:
		return p.code(r)
	case secData:
		return p.data(r)
	}
	return r.fail("unknown section id %d", id) // unreachable: Parse checks ids
}

// finish checks what can only be checked once every section was read.
func (p *parser) finish(frame *reader) error {
	if !p.sawCode && len(p.m.Functions) != 0 {
		return frame.fail("function section declares %d functions but there is no code section", len(p.m.Functions))
	}
	if !p.sawData && p.m.DataCount != nil && *p.m.DataCount != 0 {
		return frame.fail("data count section declares %d segments but there is no data section", *p.m.DataCount)
	}
	return nil
}
