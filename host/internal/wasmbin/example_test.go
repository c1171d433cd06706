package wasmbin_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

func ExampleParse() {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "vectors", "derived", "http_handle0.wasm"))
	if err != nil {
		panic(err)
	}
	m, err := wasmbin.Parse(data, wasmbin.Limits{})
	if err != nil {
		panic(err)
	}
	for i, im := range m.ImportedFuncs() {
		ft, _ := m.FuncType(uint32(i)) // imported functions come first
		fmt.Printf("import %s %s %s\n", im.Module, im.Name, ft)
	}
	for _, ex := range m.ExportedFuncs() {
		ft, _ := m.FuncType(ex.Index)
		fmt.Printf("export %s %s\n", ex.Name, ft)
	}
	// Output:
	// import palyra:plugins/host-capabilities@0.1.0 http-handle (i32) -> (i32)
	// export run () -> (i32)
}

func ExampleParse_errors() {
	_, err := wasmbin.Parse([]byte("(module (func))"), wasmbin.Limits{})
	fmt.Println(errcode.Of(err), errors.Is(err, wasmbin.ErrInvalid))
	fmt.Println(err)

	_, err = wasmbin.Parse(make([]byte, 2048), wasmbin.Limits{MaxModuleBytes: 1024})
	var le *wasmbin.LimitError
	if errors.As(err, &le) {
		fmt.Println(errcode.Of(err), le.Limit, le.Value)
	}
	// Output:
	// invalid_wasm true
	// wasmbin: offset 0: module is WebAssembly text (WAT), not a binary
	// wasm_limit_exceeded MaxModuleBytes 2048
}
