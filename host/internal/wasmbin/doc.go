// Package wasmbin reads the outline of a WebAssembly core module binary:
// its types, imports, functions, tables, memories, tags, globals, exports,
// start function, element and data segments, and custom sections. It does
// not decode function bodies and it does not run or compile anything.
//
// # Role
//
// wasmbin is the eyes of the admission audit (host/audit). The supervisor
// must stay pure Go and never link wasmtime (RATIONALE.md, "A pure-Go
// host"), so
// before a skill is installed the audit reads its modules with this
// package to check their import surface, memories, tables, data segments,
// start function and exports. Compiling a module is left to a sidecar
// process.
//
// # Hostile input
//
// Every module Parse sees is untrusted: it comes from a skill artifact
// whose signature says who made it, not that it is harmless. So Parse:
//
//   - never panics, and takes time and memory linear in the input;
//   - checks each count and size the module declares against the bytes
//     actually left before allocating anything for it, and against a named
//     bound in Limits (a *LimitError, code wasm_limit_exceeded);
//   - decodes LEB128 integers exactly as the spec says (at most
//     ceil(N/7) bytes, unused bits zero or sign copies), enforces the
//     section order, requires every section to be consumed exactly, and
//     checks every index it reads against the items declared before it
//     (a *FormatError, code invalid_wasm);
//   - keeps no reference to the input: Module holds copies.
//
// Input in the text format (WAT) is refused with an error that says so
// ("module is WebAssembly text (WAT), not a binary"). Note for the audit:
// Palyra's own audit accepts WAT, because wasmtime's Rust Module::new
// compiles text too, and Palyra's tests ship WAT as module.wasm.
//
// # Use
//
//	m, err := wasmbin.Parse(data, wasmbin.Limits{}) // zero fields: defaults
//	if err != nil {
//		return fmt.Errorf("module %s: %w", name, err) // errcode.Of(err) is invalid_wasm or wasm_limit_exceeded
//	}
//	for i, im := range m.ImportedFuncs() {
//		ft, _ := m.FuncType(uint32(i)) // imported functions come first
//		fmt.Printf("%s %s %s\n", im.Module, im.Name, ft) // e.g. "env log (i32 i32) -> ()"
//	}
//
// Indices in a Module (export indices, the start function, the arguments of
// FuncType, MemoryType, TableType and GlobalType) count the imports of a
// kind first, then the items the module defines, as in the spec.
//
// Parse and the methods of Module are safe for concurrent use.
package wasmbin
