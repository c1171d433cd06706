package wasmbin

// Limits bounds what Parse accepts, so that a hostile module cannot make
// the parser (or the audit that reads its result) use unbounded memory or
// time. Every count and size a module declares is checked against the
// bytes that are actually left in the input before anything is allocated,
// and then against the matching limit here; exceeding a limit is a
// *LimitError naming the field.
//
// A zero (or negative) field means "use the default" from DefaultLimits,
// so Limits{} is the default set and there is no way to switch a limit
// off; set it high instead. Most defaults are the implementation limits WebAssembly engines
// agree on (wasmparser, used by wasmtime, and V8), so a module that stays
// within them is not refused here for size alone.
type Limits struct {
	// MaxModuleBytes bounds the size of the whole module. Default 64 MiB.
	MaxModuleBytes int
	// MaxTypes bounds the entries of the type section. Default 1,000,000.
	MaxTypes int
	// MaxParams bounds the parameters of one function type. Default 1,000.
	MaxParams int
	// MaxResults bounds the results of one function type. Default 1,000.
	MaxResults int
	// MaxImports bounds the entries of the import section. Default 10,000.
	MaxImports int
	// MaxFunctions bounds the functions, imported plus defined.
	// Default 1,000,000.
	MaxFunctions int
	// MaxTables bounds the tables, imported plus defined. Default 100.
	MaxTables int
	// MaxMemories bounds the memories, imported plus defined. Default 100.
	MaxMemories int
	// MaxTags bounds the exception tags, imported plus defined.
	// Default 1,000,000.
	MaxTags int
	// MaxGlobals bounds the globals, imported plus defined.
	// Default 1,000,000.
	MaxGlobals int
	// MaxExports bounds the entries of the export section. Default 10,000.
	MaxExports int
	// MaxElementSegments bounds the element segments. Default 100,000.
	MaxElementSegments int
	// MaxTableEntries bounds the minimum size of a table and the number of
	// items in one element segment. Default 10,000,000.
	MaxTableEntries int
	// MaxDataSegments bounds the data segments. Default 100,000.
	MaxDataSegments int
	// MaxFunctionBodyBytes bounds the size of one function body in the
	// code section. Default 7,654,321 (V8's limit).
	MaxFunctionBodyBytes int
	// MaxFunctionLocals bounds the locals one function body declares
	// (parameters not included). Default 50,000.
	MaxFunctionLocals int
	// MaxNameBytes bounds the length of one name (import module and field
	// names, export names, custom section names). Default 100,000.
	MaxNameBytes int
	// MaxCustomSections bounds the number of custom sections. Default 10,000.
	MaxCustomSections int
}

// DefaultLimits returns the limits Parse applies to a zero field.
func DefaultLimits() Limits {
	return Limits{
		MaxModuleBytes:       64 << 20,
		MaxTypes:             1_000_000,
		MaxParams:            1_000,
		MaxResults:           1_000,
		MaxImports:           10_000,
		MaxFunctions:         1_000_000,
		MaxTables:            100,
		MaxMemories:          100,
		MaxTags:              1_000_000,
		MaxGlobals:           1_000_000,
		MaxExports:           10_000,
		MaxElementSegments:   100_000,
		MaxTableEntries:      10_000_000,
		MaxDataSegments:      100_000,
		MaxFunctionBodyBytes: 7_654_321,
		MaxFunctionLocals:    50_000,
		MaxNameBytes:         100_000,
		MaxCustomSections:    10_000,
	}
}

// withDefaults returns l with every zero or negative field replaced by its
// default.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&l.MaxModuleBytes, d.MaxModuleBytes)
	fill(&l.MaxTypes, d.MaxTypes)
	fill(&l.MaxParams, d.MaxParams)
	fill(&l.MaxResults, d.MaxResults)
	fill(&l.MaxImports, d.MaxImports)
	fill(&l.MaxFunctions, d.MaxFunctions)
	fill(&l.MaxTables, d.MaxTables)
	fill(&l.MaxMemories, d.MaxMemories)
	fill(&l.MaxTags, d.MaxTags)
	fill(&l.MaxGlobals, d.MaxGlobals)
	fill(&l.MaxExports, d.MaxExports)
	fill(&l.MaxElementSegments, d.MaxElementSegments)
	fill(&l.MaxTableEntries, d.MaxTableEntries)
	fill(&l.MaxDataSegments, d.MaxDataSegments)
	fill(&l.MaxFunctionBodyBytes, d.MaxFunctionBodyBytes)
	fill(&l.MaxFunctionLocals, d.MaxFunctionLocals)
	fill(&l.MaxNameBytes, d.MaxNameBytes)
	fill(&l.MaxCustomSections, d.MaxCustomSections)
	return l
}
