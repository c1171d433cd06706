package wasmbin_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

// FuzzParse feeds Parse arbitrary bytes. Parse must not panic, must
// return a module or a well-formed error, never both, and a module it
// returns must be consistent.
//
// The seeds are every .wasm file under the repository's testdata, the
// modules the tests build, and the inputs of the error tests.
func FuzzParse(f *testing.F) {
	root := filepath.Join("..", "..", "..", "testdata")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".wasm") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f.Add(data)
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fullModule())
	f.Add(withFuncs(3))
	f.Add(withElems(4))
	for _, tt := range limitCases() {
		f.Add(tt.data)
	}
	for _, tt := range parseErrorCases() {
		f.Add(tt.data)
	}

	lims := []wasmbin.Limits{{}, {MaxNameBytes: 4, MaxTypes: 3, MaxFunctionLocals: 3, MaxTableEntries: 3, MaxCustomSections: 2}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lim := range lims {
			m, err := wasmbin.Parse(data, lim)
			if err != nil {
				if m != nil {
					t.Fatal("Parse returned a module and an error")
				}
				checkFuzzErr(t, err, len(data))
				continue
			}
			checkModule(t, m, len(data))
		}
	})
}

func checkFuzzErr(t *testing.T, err error, size int) {
	t.Helper()
	var fe *wasmbin.FormatError
	var le *wasmbin.LimitError
	switch {
	case errors.As(err, &fe):
		if !errors.Is(err, wasmbin.ErrInvalid) || errors.Is(err, wasmbin.ErrLimit) || fe.Reason == "" {
			t.Fatalf("bad FormatError %v", err)
		}
		if fe.Offset < 0 || fe.Offset > int64(size) {
			t.Fatalf("FormatError offset %d outside %d bytes: %v", fe.Offset, size, err)
		}
	case errors.As(err, &le):
		if !errors.Is(err, wasmbin.ErrLimit) || errors.Is(err, wasmbin.ErrInvalid) || le.Value <= le.Max {
			t.Fatalf("bad LimitError %v", err)
		}
		if le.Offset < 0 || le.Offset > int64(size) {
			t.Fatalf("LimitError offset %d outside %d bytes: %v", le.Offset, size, err)
		}
	default:
		t.Fatalf("error %v (%T) is neither a *FormatError nor a *LimitError", err, err)
	}
	if !strings.HasPrefix(err.Error(), "wasmbin: ") {
		t.Fatalf("error %q lacks the prefix", err)
	}
}

// checkModule checks the invariants of a module Parse accepted.
func checkModule(t *testing.T, m *wasmbin.Module, size int) {
	t.Helper()
	if m.CodeBodies != len(m.Functions) {
		t.Fatalf("%d bodies for %d functions", m.CodeBodies, len(m.Functions))
	}
	for i, ti := range m.Functions {
		if int(ti) >= len(m.Types) {
			t.Fatalf("function %d has type index %d of %d", i, ti, len(m.Types))
		}
	}
	names := map[string]bool{}
	for _, ex := range m.Exports {
		if names[ex.Name] || !utf8.ValidString(ex.Name) {
			t.Fatalf("export name %q repeated or not UTF-8", ex.Name)
		}
		names[ex.Name] = true
		var ok bool
		switch ex.Kind {
		case wasmbin.KindFunc:
			_, ok = m.FuncType(ex.Index)
		case wasmbin.KindMemory:
			_, ok = m.MemoryType(ex.Index)
		case wasmbin.KindTable:
			_, ok = m.TableType(ex.Index)
		case wasmbin.KindGlobal:
			_, ok = m.GlobalType(ex.Index)
		case wasmbin.KindTag:
			ok = int(ex.Index) < m.NumImported(wasmbin.KindTag)+len(m.Tags)
		}
		if !ok {
			t.Fatalf("export %+v does not resolve", ex)
		}
	}
	for _, im := range m.Imports {
		if !utf8.ValidString(im.Module) || !utf8.ValidString(im.Name) {
			t.Fatalf("import %q %q not UTF-8", im.Module, im.Name)
		}
		if (im.Kind == wasmbin.KindTable) != (im.Table != nil) || (im.Kind == wasmbin.KindMemory) != (im.Memory != nil) ||
			(im.Kind == wasmbin.KindGlobal) != (im.Global != nil) {
			t.Fatalf("import %+v has the wrong descriptor", im)
		}
	}
	if m.Start != nil {
		if ft, ok := m.FuncType(*m.Start); !ok || len(ft.Params)+len(ft.Results) != 0 {
			t.Fatalf("start %d: %s, %v", *m.Start, ft, ok)
		}
	}
	var total int64
	for _, d := range m.DataSegments {
		total += int64(d.Size)
		if d.Mode == wasmbin.ModeActive {
			if _, ok := m.MemoryType(d.MemoryIndex); !ok {
				t.Fatalf("data segment for memory %d", d.MemoryIndex)
			}
		}
	}
	if total != m.DataBytes || total > int64(size) {
		t.Fatalf("DataBytes %d, segments add up to %d, module %d bytes", m.DataBytes, total, size)
	}
	if m.DataCount != nil && int(*m.DataCount) != len(m.DataSegments) {
		t.Fatalf("data count %d, %d segments", *m.DataCount, len(m.DataSegments))
	}
	for _, ti := range m.ElementTables {
		if _, ok := m.TableType(ti); !ok {
			t.Fatalf("element segment for table %d", ti)
		}
	}
	for _, c := range m.CustomSections {
		if !utf8.ValidString(c.Name) || c.Offset < 8 || c.Offset+int64(c.Size) > int64(size) {
			t.Fatalf("custom section %+v in %d bytes", c, size)
		}
	}
	for _, mt := range append(m.Memories, memImports(m)...) {
		if (mt.HasMax && mt.Min > mt.Max) || (mt.Shared && !mt.HasMax) || (!mt.Is64 && mt.Min > 65536) {
			t.Fatalf("memory %+v", mt)
		}
	}
}

func memImports(m *wasmbin.Module) []wasmbin.MemoryType {
	var out []wasmbin.MemoryType
	for _, im := range m.Imports {
		if im.Memory != nil {
			out = append(out, *im.Memory)
		}
	}
	return out
}
