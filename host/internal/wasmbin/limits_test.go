package wasmbin_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

func TestDefaultLimits(t *testing.T) {
	d := reflect.ValueOf(wasmbin.DefaultLimits())
	for i := 0; i < d.NumField(); i++ {
		if d.Field(i).Int() <= 0 {
			t.Errorf("DefaultLimits().%s = %d", d.Type().Field(i).Name, d.Field(i).Int())
		}
	}
	if got := wasmbin.DefaultLimits(); got.MaxModuleBytes != 64<<20 || got.MaxImports != 10_000 || got.MaxExports != 10_000 ||
		got.MaxFunctions != 1_000_000 || got.MaxTypes != 1_000_000 || got.MaxDataSegments != 100_000 ||
		got.MaxElementSegments != 100_000 || got.MaxNameBytes != 100_000 {
		t.Errorf("DefaultLimits() = %+v", got)
	}
}

// limitCases exceed each limit with a module that parses under the
// defaults.
func limitCases() []struct {
	limit string
	lim   wasmbin.Limits
	data  []byte
	value uint64
} {
	twoTypes := sec(idType, vec(functype(nil, nil), functype(nil, nil)))
	imp := func(name string, desc ...byte) []byte { return cat(str("m"), str(name), desc) }
	return []struct {
		limit string
		lim   wasmbin.Limits
		data  []byte
		value uint64
	}{
		{"MaxModuleBytes", wasmbin.Limits{MaxModuleBytes: 8}, mod(typeSec0), 14},
		{"MaxTypes", wasmbin.Limits{MaxTypes: 1}, mod(twoTypes), 2},
		{"MaxParams", wasmbin.Limits{MaxParams: 1}, mod(sec(idType, vec(functype(vt(wasmbin.I32, wasmbin.I32), nil)))), 2},
		{"MaxResults", wasmbin.Limits{MaxResults: 1}, mod(sec(idType, vec(functype(nil, vt(wasmbin.I32, wasmbin.I64))))), 2},
		{"MaxImports", wasmbin.Limits{MaxImports: 1}, mod(typeSec0, sec(idImport, vec(imp("a", 0, 0), imp("b", 0, 0)))), 2},
		{"MaxFunctions", wasmbin.Limits{MaxFunctions: 1}, withFuncs(2), 2},
		{"MaxFunctions", wasmbin.Limits{MaxFunctions: 1}, mod(typeSec0, sec(idImport, vec(imp("a", 0, 0), imp("b", 0, 0)))), 2},
		{"MaxFunctions", wasmbin.Limits{MaxFunctions: 1}, mod(typeSec0, sec(idImport, vec(imp("a", 0, 0))), sec(idFunction, vec(u(0))), sec(idCode, vec(emptyBody()))), 2},
		{"MaxTables", wasmbin.Limits{MaxTables: 1}, mod(sec(idTable, vec(b(0x70, 0, 0), b(0x70, 0, 0)))), 2},
		{"MaxTables", wasmbin.Limits{MaxTables: 1}, mod(sec(idImport, vec(imp("t", 1, 0x70, 0, 0))), sec(idTable, vec(b(0x70, 0, 0)))), 2},
		{"MaxMemories", wasmbin.Limits{MaxMemories: 1}, mod(sec(idMemory, vec(b(0, 0), b(0, 0)))), 2},
		{"MaxMemories", wasmbin.Limits{MaxMemories: 1}, mod(sec(idImport, vec(imp("a", 2, 0, 0), imp("b", 2, 0, 0)))), 2},
		{"MaxTags", wasmbin.Limits{MaxTags: 1}, mod(typeSec0, sec(idTag, vec(b(0, 0), b(0, 0)))), 2},
		{"MaxTags", wasmbin.Limits{MaxTags: 1}, mod(typeSec0, sec(idImport, vec(imp("a", 4, 0, 0))), sec(idTag, vec(b(0, 0)))), 2},
		{"MaxGlobals", wasmbin.Limits{MaxGlobals: 1}, mod(sec(idGlobal, vec(cat(b(0x7F, 0), end(i32c(0))), cat(b(0x7F, 0), end(i32c(0)))))), 2},
		{"MaxGlobals", wasmbin.Limits{MaxGlobals: 1}, mod(sec(idImport, vec(imp("a", 3, 0x7F, 0), imp("b", 3, 0x7F, 0)))), 2},
		{"MaxExports", wasmbin.Limits{MaxExports: 1}, mod(sec(idMemory, vec(b(0, 0))), sec(idExport, vec(cat(str("a"), b(2, 0)), cat(str("b"), b(2, 0))))), 2},
		{"MaxElementSegments", wasmbin.Limits{MaxElementSegments: 1}, mod(sec(idElement, vec(cat(u(1), b(0), vec()), cat(u(1), b(0), vec())))), 2},
		{"MaxTableEntries", wasmbin.Limits{MaxTableEntries: 2}, mod(sec(idTable, vec(b(0x70, 0, 3)))), 3},
		{"MaxTableEntries", wasmbin.Limits{MaxTableEntries: 2}, mod(sec(idTable, vec(b(0x6F, 0x04, 3)))), 3},
		{"MaxTableEntries", wasmbin.Limits{MaxTableEntries: 2}, withElems(3), 3},
		{"MaxDataSegments", wasmbin.Limits{MaxDataSegments: 1}, mod(sec(idData, vec(cat(u(1), str("")), cat(u(1), str(""))))), 2},
		{"MaxDataSegments", wasmbin.Limits{MaxDataSegments: 1}, mod(sec(idDataCount, u(2)), sec(idData, vec(cat(u(1), str("")), cat(u(1), str(""))))), 2},
		{"MaxFunctionBodyBytes", wasmbin.Limits{MaxFunctionBodyBytes: 3}, mod(typeSec0, sec(idFunction, vec(u(0))), sec(idCode, vec(cat(u(4), b(0, 1, 1, 0x0B))))), 4},
		{"MaxFunctionLocals", wasmbin.Limits{MaxFunctionLocals: 2}, mod(typeSec0, sec(idFunction, vec(u(0))), sec(idCode, vec(cat(u(6), b(1, 3, 0x7F, 0x01, 0x01, 0x0B))))), 3},
		{"MaxFunctionLocals", wasmbin.Limits{MaxFunctionLocals: 2}, mod(typeSec0, sec(idFunction, vec(u(0))), sec(idCode, vec(cat(u(8), b(2, 2, 0x7F, 1, 0x7E, 0x01, 0x01, 0x0B))))), 3},
		{"MaxNameBytes", wasmbin.Limits{MaxNameBytes: 2}, mod(sec(idMemory, vec(b(0, 0))), sec(idExport, vec(cat(str("abc"), b(2, 0))))), 3},
		{"MaxNameBytes", wasmbin.Limits{MaxNameBytes: 2}, mod(sec(idImport, vec(imp("abc", 2, 0, 0)))), 3},
		{"MaxNameBytes", wasmbin.Limits{MaxNameBytes: 2}, mod(custom("abc", nil)), 3},
		{"MaxCustomSections", wasmbin.Limits{MaxCustomSections: 1}, mod(custom("a", nil), custom("b", nil)), 2},
	}
}

// withElems returns a module with one table and a passive element
// segment of n functions.
func withElems(n int) []byte {
	items := make([][]byte, n)
	for i := range items {
		items[i] = u(0)
	}
	return mod(typeSec0, sec(idFunction, vec(u(0))), sec(idElement, vec(cat(u(1), b(0), vec(items...)))), sec(idCode, vec(emptyBody())))
}

func TestLimitErrors(t *testing.T) {
	covered := map[string]bool{}
	for _, tt := range limitCases() {
		covered[tt.limit] = true
		t.Run(tt.limit, func(t *testing.T) {
			if _, err := wasmbin.Parse(tt.data, wasmbin.Limits{}); err != nil {
				t.Fatalf("Parse with default limits: %v", err)
			}
			m, err := wasmbin.Parse(tt.data, tt.lim)
			if m != nil {
				t.Error("Parse returned a module with its error")
			}
			checkErr(t, err, wasmbin.ErrLimit)
			var le *wasmbin.LimitError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LimitError", err)
			}
			max := reflect.ValueOf(tt.lim).FieldByName(tt.limit).Int()
			if le.Limit != tt.limit || le.Value != tt.value || le.Max != uint64(max) || le.What == "" {
				t.Errorf("LimitError = %+v, want %s value %d max %d", le, tt.limit, tt.value, max)
			}
			if le.Offset < 0 || le.Offset > int64(len(tt.data)) {
				t.Errorf("Offset %d outside the %d-byte module", le.Offset, len(tt.data))
			}
			t.Log(err)
		})
	}
	fields := reflect.TypeOf(wasmbin.Limits{})
	for i := 0; i < fields.NumField(); i++ {
		if name := fields.Field(i).Name; !covered[name] {
			t.Errorf("no test exceeds %s", name)
		}
	}
}
