//go:build wasip1

// Command extismguest is the echo example's palyra.echo tool written for the
// Extism kernel ABI instead of Palyra's: the Extism baseline of benchmark
// scenario A. It runs the same logic as sdk/examples/echo — decode
// {"text":...} with encoding/json, log "echo: N bytes", encode {"echo":...}
// with encoding/json without HTML escaping — and exports it as "echo".
//
// The Extism Go PDK is not used (it is not fetchable from the module proxy):
// the kernel functions of the extism:host/env module are declared by hand
// below, with the signatures github.com/extism/go-sdk v1.7.1 gives them.
// Build it (peers.BuildExtismGuest does) with:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o extismguest.wasm .
//
// A tool error sets the Extism error to the JSON document
// {"code":"...","message":"..."} of sdk/ABI.md §4 and returns 1, so the host
// sees the same error codes as from the Palyra guest.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Extism kernel functions (extism:host/env). Offsets and lengths are i64;
// offsets point into the kernel's memory, not this module's.

//go:wasmimport extism:host/env input_length
func extismInputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func extismInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env input_load_u64
func extismInputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env alloc
func extismAlloc(n uint64) uint64

//go:wasmimport extism:host/env store_u8
func extismStoreU8(offset uint64, v uint32)

//go:wasmimport extism:host/env store_u64
func extismStoreU64(offset uint64, v uint64)

//go:wasmimport extism:host/env output_set
func extismOutputSet(offset, n uint64)

//go:wasmimport extism:host/env error_set
func extismErrorSet(offset uint64)

//go:wasmimport extism:host/env log_info
func extismLogInfo(offset uint64)

// textIn is the input of palyra.echo.
type textIn struct {
	Text string `json:"text"`
}

// echoOut is the output of palyra.echo.
type echoOut struct {
	Echo string `json:"echo"`
}

// errorDocument is the tool error document of sdk/ABI.md §4.
type errorDocument struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// echo is the Extism export: the palyra.echo tool.
//
//go:wasmexport echo
func echo() int32 {
	input := readInput()
	var in textIn
	if len(bytes.TrimSpace(input)) > 0 {
		if err := json.Unmarshal(input, &in); err != nil {
			return fail("invalid_input", fmt.Sprintf("decode input of palyra.echo: %v", err))
		}
	}
	logInfo(fmt.Sprintf("echo: %d bytes", len(in.Text)))
	out, err := marshalJSON(echoOut{Echo: in.Text})
	if err != nil {
		return fail("invalid_output", fmt.Sprintf("encode output of palyra.echo: %v", err))
	}
	extismOutputSet(store(out), uint64(len(out)))
	return 0
}

// readInput copies the call's input out of the kernel, 8 bytes at a time.
func readInput() []byte {
	n := extismInputLength()
	buf := make([]byte, n)
	i := uint64(0)
	for ; i+8 <= n; i += 8 {
		v := extismInputLoadU64(i)
		for j := range uint64(8) {
			buf[i+j] = byte(v >> (8 * j))
		}
	}
	for ; i < n; i++ {
		buf[i] = byte(extismInputLoadU8(i))
	}
	return buf
}

// store copies b into a new kernel memory block and returns its offset.
func store(b []byte) uint64 {
	n := uint64(len(b))
	off := extismAlloc(n)
	i := uint64(0)
	for ; i+8 <= n; i += 8 {
		var v uint64
		for j := range uint64(8) {
			v |= uint64(b[i+j]) << (8 * j)
		}
		extismStoreU64(off+i, v)
	}
	for ; i < n; i++ {
		extismStoreU8(off+i, uint32(b[i]))
	}
	return off
}

func logInfo(msg string) { extismLogInfo(store([]byte(msg))) }

// fail reports a tool error and returns the export's failure result.
func fail(code, message string) int32 {
	b, err := marshalJSON(errorDocument{Code: code, Message: message})
	if err != nil {
		b = []byte(`{"code":"tool_error","message":""}`)
	}
	extismErrorSet(store(b))
	return 1
}

// marshalJSON encodes v like json.Marshal without HTML escaping, as the
// Palyra guest SDK does.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func main() {}
