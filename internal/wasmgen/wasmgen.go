// Package wasmgen writes WebAssembly binary modules for tests of the
// admission path: modules that are cheap to ship and expensive to compile
// (hundreds of thousands of empty functions, bodies made of calls, many
// locals, many types, imports, exports, globals, tables and segments), so
// that the audit's structural limits and the precompile child's compile
// budget can be tested against real hostile input, generated in the test
// rather than checked in.
//
// A generated module is valid WebAssembly 2.0. With Spec.Entrypoint it
// also exports a memory and run () -> i32 (sdk/ABI.md §1), so that it
// passes the audit's entrypoint check and everything else of the audit
// that its counts do not exceed.
package wasmgen

import (
	"math/bits"
	"strconv"
)

// Spec describes a module. Every count is of items the module defines
// (or imports, for Imports) beyond those Entrypoint adds.
type Spec struct {
	// Functions is the number of defined functions of type () -> ().
	Functions int
	// Locals is the number of i32 locals each of those functions declares.
	Locals int
	// BodyBytes is the minimum size of each function body's
	// instructions. Bodies are filled with calls to function 0, the
	// instruction that costs a compiler most per byte; without Calls
	// they are filled with "i32.const 1; drop".
	BodyBytes int
	// Calls selects bodies of calls (see BodyBytes).
	Calls bool
	// Types is the number of extra, distinct function types.
	Types int
	// Imports is the number of function imports of type () -> (), named
	// "palyra_gen" "f<i>" (a module the host does not provide, so the
	// audit's wasm_import_modules fails too).
	Imports int
	// ImportName, when set, names import i instead.
	ImportName func(i int) (module, field string)
	// Exports is the number of extra function exports ("f<i>", of
	// defined functions, one each; at most Functions).
	Exports int
	// Globals is the number of immutable i32 globals.
	Globals int
	// Tables is the number of funcref tables of size 0.
	Tables int
	// DataSegments is the number of one-byte passive data segments.
	DataSegments int
	// ElementSegments is the number of empty passive element segments.
	ElementSegments int
	// Entrypoint adds a memory of one page, exported as "memory", and a
	// function run () -> i32 returning 0, exported as "run".
	Entrypoint bool
}

// EmptyFunctions returns a module of n empty functions () -> (): the
// module of issue 19 (300,000 of them compile for tens of seconds and
// gigabytes, from a module of about 1.2 MB that compresses to a few KB).
func EmptyFunctions(n int) []byte {
	return Module(Spec{Functions: n})
}

// Module returns the binary module s describes.
func Module(s Spec) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")

	// Type 0 is () -> (), type 1 () -> i32. Extra type 2+i spells i in
	// binary with its parameters (i32 for a 0 bit, i64 for a 1), one more
	// than i has bits, so that every type is distinct and small.
	types := uleb(nil, uint64(2+s.Types))
	types = append(types, 0x60, 0, 0, 0x60, 0, 1, 0x7f)
	for i := range s.Types {
		n := bits.Len(uint(i)) + 1
		types = append(types, 0x60)
		types = uleb(types, uint64(n))
		for j := range n {
			t := byte(0x7f)
			if i>>j&1 == 1 {
				t = 0x7e
			}
			types = append(types, t)
		}
		types = append(types, 0)
	}
	m = section(m, 1, types)

	if s.Imports > 0 {
		imp := uleb(nil, uint64(s.Imports))
		for i := range s.Imports {
			mod, field := "palyra_gen", "f"+strconv.Itoa(i)
			if s.ImportName != nil {
				mod, field = s.ImportName(i)
			}
			imp = name(imp, mod)
			imp = name(imp, field)
			imp = append(imp, 0x00, 0x00)
		}
		m = section(m, 2, imp)
	}

	nFuncs := s.Functions
	if s.Entrypoint {
		nFuncs++
	}
	funcs := uleb(nil, uint64(nFuncs))
	for range s.Functions {
		funcs = append(funcs, 0)
	}
	if s.Entrypoint {
		funcs = append(funcs, 1)
	}
	m = section(m, 3, funcs)

	if s.Tables > 0 {
		tabs := uleb(nil, uint64(s.Tables))
		for range s.Tables {
			tabs = append(tabs, 0x70, 0x00, 0x00)
		}
		m = section(m, 4, tabs)
	}
	if s.Entrypoint {
		m = section(m, 5, []byte{1, 0x00, 0x01})
	}
	if s.Globals > 0 {
		gl := uleb(nil, uint64(s.Globals))
		for range s.Globals {
			gl = append(gl, 0x7f, 0x00, 0x41, 0x00, 0x0b)
		}
		m = section(m, 6, gl)
	}

	exports := min(s.Exports, s.Functions)
	nExports := exports
	if s.Entrypoint {
		nExports += 2
	}
	if nExports > 0 {
		ex := uleb(nil, uint64(nExports))
		for i := range exports {
			ex = name(ex, "f"+strconv.Itoa(i))
			ex = append(ex, 0x00)
			ex = uleb(ex, uint64(s.Imports+i))
		}
		if s.Entrypoint {
			ex = name(ex, "memory")
			ex = append(ex, 0x02, 0x00)
			ex = name(ex, "run")
			ex = append(ex, 0x00)
			ex = uleb(ex, uint64(s.Imports+s.Functions))
		}
		m = section(m, 7, ex)
	}

	if s.ElementSegments > 0 {
		el := uleb(nil, uint64(s.ElementSegments))
		for range s.ElementSegments {
			el = append(el, 0x01, 0x00, 0x00) // passive, elemkind funcref, no items
		}
		m = section(m, 9, el)
	}
	if s.DataSegments > 0 {
		m = section(m, 12, uleb(nil, uint64(s.DataSegments)))
	}

	body := functionBody(s)
	code := uleb(nil, uint64(nFuncs))
	for range s.Functions {
		code = uleb(code, uint64(len(body)))
		code = append(code, body...)
	}
	if s.Entrypoint {
		code = append(code, 4, 0, 0x41, 0, 0x0b)
	}
	m = section(m, 10, code)

	if s.DataSegments > 0 {
		data := uleb(nil, uint64(s.DataSegments))
		for range s.DataSegments {
			data = append(data, 0x01, 0x01, 0x00) // passive, one zero byte
		}
		m = section(m, 11, data)
	}
	return m
}

// functionBody returns the body every defined function shares.
func functionBody(s Spec) []byte {
	var b []byte
	if s.Locals > 0 {
		b = append(b, 1)
		b = uleb(b, uint64(s.Locals))
		b = append(b, 0x7f)
	} else {
		b = append(b, 0)
	}
	start := len(b)
	for len(b)-start < s.BodyBytes {
		if s.Calls {
			b = append(b, 0x10) // call
			b = uleb(b, uint64(s.Imports))
		} else {
			b = append(b, 0x41, 0x01, 0x1a) // i32.const 1; drop
		}
	}
	return append(b, 0x0b)
}

func uleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func section(b []byte, id byte, body []byte) []byte {
	b = append(b, id)
	b = uleb(b, uint64(len(body)))
	return append(b, body...)
}

func name(b []byte, s string) []byte {
	b = uleb(b, uint64(len(s)))
	return append(b, s...)
}
