package wasmrt

import (
	"fmt"

	"github.com/bytecodealliance/wasmtime-go/v25"
)

// Wat2Wasm converts WebAssembly text to a binary module with wasmtime's
// parser. It is for tests and tools (testdata fixtures); the runtime itself
// accepts only binary modules.
func Wat2Wasm(wat string) ([]byte, error) {
	b, err := wasmtime.Wat2Wasm(wat)
	if err != nil {
		return nil, fmt.Errorf("runtime: wat2wasm: %w", err)
	}
	return b, nil
}
