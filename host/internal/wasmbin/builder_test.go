package wasmbin_test

import (
	"bytes"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

// A tiny assembler for module binaries: each helper returns the encoding
// of one piece, and cat glues pieces together.

var header = []byte("\x00asm\x01\x00\x00\x00")

// u encodes an unsigned LEB128 integer in its shortest form.
func u(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7F)
		v >>= 7
		if v != 0 {
			out = append(out, b|0x80)
			continue
		}
		return append(out, b)
	}
}

// s encodes a signed LEB128 integer in its shortest form.
func s(v int64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7F)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// str encodes a name.
func str(x string) []byte { return cat(u(uint64(len(x))), []byte(x)) }

// vec encodes a vector of already-encoded items.
func vec(items ...[]byte) []byte { return cat(u(uint64(len(items))), cat(items...)) }

// sec encodes a section.
func sec(id byte, parts ...[]byte) []byte {
	body := cat(parts...)
	return cat([]byte{id}, u(uint64(len(body))), body)
}

// mod encodes a module: the header and the sections.
func mod(sections ...[]byte) []byte { return cat(header, cat(sections...)) }

func b(bs ...byte) []byte { return bs }

func types(ts ...wasmbin.ValType) []byte {
	out := u(uint64(len(ts)))
	for _, t := range ts {
		out = append(out, byte(t))
	}
	return out
}

// functype encodes a function type.
func functype(params, results []wasmbin.ValType) []byte {
	return cat(b(0x60), types(params...), types(results...))
}

func vt(ts ...wasmbin.ValType) []wasmbin.ValType { return ts }

// Section ids.
const (
	idCustom    = 0
	idType      = 1
	idImport    = 2
	idFunction  = 3
	idTable     = 4
	idMemory    = 5
	idGlobal    = 6
	idExport    = 7
	idStart     = 8
	idElement   = 9
	idCode      = 10
	idData      = 11
	idDataCount = 12
	idTag       = 13
)

// Constant expressions.
func i32c(v int32) []byte { return cat(b(0x41), s(int64(v))) }
func i64c(v int64) []byte { return cat(b(0x42), s(v)) }
func end(parts ...[]byte) []byte {
	return append(cat(parts...), 0x0B)
}

// body encodes a function body with no locals that does nothing.
func emptyBody() []byte { return cat(u(2), b(0x00, 0x0B)) }

// custom encodes a custom section.
func custom(name string, content []byte) []byte { return sec(idCustom, str(name), content) }

// Common small modules.

// typeSec0 declares the one type () -> ().
var typeSec0 = sec(idType, vec(functype(nil, nil)))

// withFuncs returns a module with one type and n functions with bodies.
func withFuncs(n int) []byte {
	fs := make([][]byte, n)
	bodies := make([][]byte, n)
	for i := range fs {
		fs[i] = u(0)
		bodies[i] = emptyBody()
	}
	return mod(typeSec0, sec(idFunction, vec(fs...)), sec(idCode, vec(bodies...)))
}

// fullModule uses every section and every encoding the parser knows.
func fullModule() []byte {
	v128 := make([]byte, 16)
	return mod(
		custom("producers", []byte("anything")),
		sec(idType, vec(
			functype(nil, nil),                         // 0
			functype(vt(wasmbin.I32), vt(wasmbin.I32)), // 1
			functype(vt(wasmbin.I32, wasmbin.I64, wasmbin.F32, wasmbin.F64, wasmbin.V128, wasmbin.FuncRef, wasmbin.ExternRef),
				vt(wasmbin.I32, wasmbin.I64)), // 2
			functype(vt(wasmbin.I32), nil), // 3
		)),
		sec(idImport, vec(
			cat(str("env"), str("f"), b(0x00), u(1)),                    // func 0
			cat(str("env"), str("t"), b(0x01, 0x70, 0x01), u(1), u(10)), // table 0
			cat(str("env"), str("m"), b(0x02, 0x00), u(1)),              // memory 0
			cat(str("env"), str("g"), b(0x03, 0x7F, 0x00)),              // global 0
			cat(str("env"), str("gm"), b(0x03, 0x7E, 0x01)),             // global 1
			cat(str("env"), str("e"), b(0x04, 0x00), u(3)),              // tag 0
		)),
		sec(idFunction, vec(u(0), u(1), u(2))), // funcs 1, 2, 3
		sec(idTable, vec(
			cat(b(0x6F, 0x00), u(2)),       // table 1
			cat(b(0x70, 0x05), u(1), u(2)), // table 2, table64
		)),
		sec(idMemory, vec(
			cat(b(0x01), u(1), u(2)), // memory 1
			cat(b(0x03), u(1), u(1)), // memory 2, shared
			cat(b(0x04), u(1)),       // memory 3, memory64
			cat(b(0x07), u(0), u(4)), // memory 4, memory64 shared
		)),
		custom("mid", nil),
		sec(idTag, vec(cat(b(0x00), u(3)))), // tag 1
		sec(idGlobal, vec(
			cat(b(0x7F, 0x00), end(i32c(42))),                                                            // 2
			cat(b(0x7E, 0x01), end(i64c(-1))),                                                            // 3
			cat(b(0x7D, 0x00), end(b(0x43, 0, 0, 0x80, 0x3F))),                                           // 4
			cat(b(0x7C, 0x00), end(b(0x44, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F))),                               // 5
			cat(b(0x70, 0x00), end(b(0xD0, 0x70))),                                                       // 6
			cat(b(0x6F, 0x00), end(b(0xD0, 0x6F))),                                                       // 7
			cat(b(0x70, 0x00), end(b(0xD2), u(1))),                                                       // 8
			cat(b(0x7F, 0x00), end(b(0x23), u(0), i32c(1), b(0x6A), i32c(3), b(0x6B), i32c(2), b(0x6C))), // 9
			cat(b(0x7E, 0x00), end(i64c(2), i64c(3), b(0x7E), i64c(1), b(0x7D), i64c(1), b(0x7C))),       // 10
			cat(b(0x7B, 0x00), end(b(0xFD), u(12), v128)),                                                // 11
		)),
		sec(idExport, vec(
			cat(str("f"), b(0x00), u(1)),
			cat(str("run"), b(0x00), u(2)),
			cat(str("t"), b(0x01), u(0)),
			cat(str("memory"), b(0x02), u(1)),
			cat(str("m0"), b(0x02), u(0)),
			cat(str("g"), b(0x03), u(2)),
			cat(str("e"), b(0x04), u(1)),
			cat(str("imported"), b(0x00), u(0)),
		)),
		sec(idStart, u(1)),
		sec(idElement, vec(
			cat(u(0), end(i32c(0)), vec(u(0), u(1))),
			cat(u(1), b(0x00), vec(u(2))),
			cat(u(2), u(2), end(i64c(0)), b(0x00), vec(u(3))),
			cat(u(3), b(0x00), vec(u(1))),
			cat(u(4), end(i32c(1)), vec(end(b(0xD2), u(0)), end(b(0xD0, 0x70)))),
			cat(u(5), b(0x6F), vec(end(b(0xD0, 0x6F)))),
			cat(u(6), u(1), end(i32c(0)), b(0x6F), vec(end(b(0xD0, 0x6F)))),
			cat(u(7), b(0x70), vec(end(b(0xD2), u(3)))),
		)),
		sec(idDataCount, u(3)),
		sec(idCode, vec(
			emptyBody(),
			cat(u(6), b(0x01, 0x02, 0x7F, 0x20, 0x00, 0x0B)),
			cat(u(5), b(0x00, 0x00, 0x00, 0x00, 0x0B)),
		)),
		sec(idData, vec(
			cat(u(0), end(i32c(16)), str("hello")),
			cat(u(1), str("xy")),
			cat(u(2), u(3), end(i64c(0)), str("abc")),
		)),
		custom("name", []byte{0x00, 0x01, 0x00}),
	)
}
