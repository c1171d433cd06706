package audit

import (
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

// ModuleLimits are the structural limits of the wasm_module_complexity
// check: what a module may declare so that compiling it stays within the
// compile budget (the precompile child's CPU and memory caps, see
// host/supervisor). Each is at or under the limit wasmparser (wasmtime's
// parser) applies, so a module refused here for size alone would be
// refused by no engine, and a module admitted here is never refused by
// wasmtime for a count. The package doc has the table with the reasons.
//
// Every zero (or negative) field takes its default from
// DefaultModuleLimits; there is no way to switch one off.
type ModuleLimits struct {
	// MaxFunctions bounds the functions, imported plus defined.
	MaxFunctions int
	// MaxFunctionBodyBytes bounds the size of one function body.
	MaxFunctionBodyBytes int
	// MaxFunctionLocals bounds the locals one function body declares
	// (parameters not included).
	MaxFunctionLocals int
	// MaxLocals bounds the locals all function bodies declare together.
	MaxLocals int64
	// MaxTypes bounds the entries of the type section.
	MaxTypes int
	// MaxImports bounds the entries of the import section.
	MaxImports int
	// MaxExports bounds the entries of the export section (of every kind;
	// Options.MaxExportedFunctions bounds the function exports).
	MaxExports int
	// MaxGlobals bounds the globals, imported plus defined.
	MaxGlobals int
	// MaxTables bounds the tables, imported plus defined.
	MaxTables int
	// MaxDataSegments bounds the segments of the data section.
	MaxDataSegments int
	// MaxElementSegments bounds the segments of the element section.
	MaxElementSegments int
}

// DefaultModuleLimits returns the limits the audit applies to a zero field
// of Options.ModuleLimits.
func DefaultModuleLimits() ModuleLimits {
	return ModuleLimits{
		MaxFunctions:         50_000,
		MaxFunctionBodyBytes: 128 << 10,
		MaxFunctionLocals:    10_000,
		MaxLocals:            1_000_000,
		MaxTypes:             10_000,
		MaxImports:           1_000,
		MaxExports:           1_000,
		MaxGlobals:           10_000,
		MaxTables:            100,
		MaxDataSegments:      100_000,
		MaxElementSegments:   10_000,
	}
}

// withDefaults returns l with every zero or negative field replaced by its
// default.
func (l ModuleLimits) withDefaults() ModuleLimits {
	d := DefaultModuleLimits()
	fill := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	fill(&l.MaxFunctions, d.MaxFunctions)
	fill(&l.MaxFunctionBodyBytes, d.MaxFunctionBodyBytes)
	fill(&l.MaxFunctionLocals, d.MaxFunctionLocals)
	if l.MaxLocals <= 0 {
		l.MaxLocals = d.MaxLocals
	}
	fill(&l.MaxTypes, d.MaxTypes)
	fill(&l.MaxImports, d.MaxImports)
	fill(&l.MaxExports, d.MaxExports)
	fill(&l.MaxGlobals, d.MaxGlobals)
	fill(&l.MaxTables, d.MaxTables)
	fill(&l.MaxDataSegments, d.MaxDataSegments)
	fill(&l.MaxElementSegments, d.MaxElementSegments)
	return l
}

// complexityItem is one structural quantity of a module against its limit.
type complexityItem struct {
	limit string // the snake_case name of the limit, as in details
	what  string // what is counted, for the message
	value int64
	max   int64
}

// complexityItems measures mod against l, in a fixed order.
func complexityItems(mod *wasmbin.Module, l ModuleLimits) []complexityItem {
	return []complexityItem{
		{"max_functions", "functions", int64(mod.NumImported(wasmbin.KindFunc) + len(mod.Functions)), int64(l.MaxFunctions)},
		{"max_function_body_bytes", "bytes in its largest function body", int64(mod.MaxBodyBytes), int64(l.MaxFunctionBodyBytes)},
		{"max_function_locals", "locals in one function", int64(mod.MaxBodyLocals), int64(l.MaxFunctionLocals)},
		{"max_locals", "locals in all functions", mod.Locals, l.MaxLocals},
		{"max_types", "types", int64(len(mod.Types)), int64(l.MaxTypes)},
		{"max_imports", "imports", int64(len(mod.Imports)), int64(l.MaxImports)},
		{"max_exports", "exports", int64(len(mod.Exports)), int64(l.MaxExports)},
		{"max_globals", "globals", int64(mod.NumImported(wasmbin.KindGlobal) + len(mod.Globals)), int64(l.MaxGlobals)},
		{"max_tables", "tables", int64(mod.NumImported(wasmbin.KindTable) + len(mod.Tables)), int64(l.MaxTables)},
		{"max_data_segments", "data segments", int64(len(mod.DataSegments)), int64(l.MaxDataSegments)},
		{"max_element_segments", "element segments", int64(mod.ElementSegments), int64(l.MaxElementSegments)},
	}
}

// moduleComplexity is the wasm_module_complexity check: every structural
// count that drives compile cost against ModuleLimits. A failure names each
// limit exceeded with the value seen, and carries the code
// module_too_complex.
func (a *auditor) moduleComplexity(p string, mod *wasmbin.Module) {
	items := complexityItems(mod, a.moduleLimits)
	d := map[string]any{"module_path": p}
	counts := make(map[string]any, len(items))
	var over []string
	var exceeded []map[string]any
	for _, it := range items {
		counts[it.limit] = map[string]any{"value": it.value, "max": it.max}
		if it.value > it.max {
			over = append(over, fmt.Sprintf("%d %s, over %s %d", it.value, it.what, it.limit, it.max))
			exceeded = append(exceeded, map[string]any{"limit": it.limit, "value": it.value, "max": it.max})
		}
	}
	d["limits"] = counts
	if len(over) > 0 {
		d["error_code"] = ErrModuleTooComplex.Code()
		d["exceeded"] = exceeded
		a.add(fail("wasm_module_complexity",
			fmt.Sprintf("module '%s' is too complex to compile within the compile budget (%s): %s",
				mp(p), ErrModuleTooComplex.Code(), listed(over)), d))
		return
	}
	a.add(pass("wasm_module_complexity",
		fmt.Sprintf("module '%s' is within the structural limits of the compile budget", mp(p)), d))
}

// limitExceeded is the wasm_module_complexity check of a module the parser
// refused for exceeding one of its own limits (the engine's, which are at
// or over ModuleLimits).
func (a *auditor) limitExceeded(p string, le *wasmbin.LimitError) {
	limit := snakeCase(le.Limit)
	d := map[string]any{
		"module_path": p,
		"error_code":  ErrModuleTooComplex.Code(),
		"exceeded":    []map[string]any{{"limit": limit, "value": int64(min(le.Value, math.MaxInt64)), "max": int64(min(le.Max, math.MaxInt64))}},
		"section":     le.Section,
		"offset":      le.Offset,
	}
	a.add(fail("wasm_module_complexity",
		fmt.Sprintf("module '%s' is too complex to compile within the compile budget (%s): %d %s, over %s %d",
			mp(p), ErrModuleTooComplex.Code(), le.Value, le.What, limit, le.Max), d))
}

// snakeCase turns a Limits field name (MaxDataSegments) into the name of
// the limit in details (max_data_segments).
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
