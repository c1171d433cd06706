//go:build wasip1

package skill

import (
	"unsafe"

	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// The imports of sdk/ABI.md §2. Pointers are offsets into this module's
// memory; Go's wasm GC does not move objects, so a slice's address stays
// valid for the duration of the call.

//go:wasmimport palyra:skills/host@1 input-len
func hostInputLen() int32

//go:wasmimport palyra:skills/host@1 input-read
func hostInputRead(ptr unsafe.Pointer, n uint32) int32

//go:wasmimport palyra:skills/host@1 output-write
func hostOutputWrite(ptr unsafe.Pointer, n uint32) int32

//go:wasmimport palyra:skills/host@1 log
func hostLog(level int32, ptr unsafe.Pointer, n uint32)

//go:wasmimport palyra:skills/host@1 capability-call
func hostCapabilityCall(handle int32, ptr unsafe.Pointer, n uint32) int32

//go:wasmimport palyra:skills/host@1 response-len
func hostResponseLen() int32

//go:wasmimport palyra:skills/host@1 response-read
func hostResponseRead(ptr unsafe.Pointer, n uint32) int32

//go:wasmimport palyra:skills/host@1 config-len
func hostConfigLen() int32

//go:wasmimport palyra:skills/host@1 config-read
func hostConfigRead(ptr unsafe.Pointer, n uint32) int32

//go:wasmimport palyra:plugins/host-capabilities@0.1.0 http-count
func hostHTTPCount() int32

//go:wasmimport palyra:plugins/host-capabilities@0.1.0 http-handle
func hostHTTPHandle(index int32) int32

//go:wasmimport palyra:plugins/host-capabilities@0.1.0 secret-count
func hostSecretCount() int32

//go:wasmimport palyra:plugins/host-capabilities@0.1.0 secret-handle
func hostSecretHandle(index int32) int32

//go:wasmimport palyra:plugins/host-capabilities@0.1.0 storage-count
func hostStorageCount() int32

//go:wasmimport palyra:plugins/host-capabilities@0.1.0 storage-handle
func hostStorageHandle(index int32) int32

//go:wasmimport palyra:plugins/host-capabilities@0.1.0 channel-count
func hostChannelCount() int32

//go:wasmimport palyra:plugins/host-capabilities@0.1.0 channel-handle
func hostChannelHandle(index int32) int32

// palyraPluginMain is the entrypoint of sdk/ABI.md §1: it serves DefaultMux.
//
//go:wasmexport palyra_plugin_main
func palyraPluginMain() int32 {
	return DefaultMux.serve(wasmHost{})
}

// wasmHost binds abi.Host to the imports.
type wasmHost struct{}

func ptr(b []byte) (unsafe.Pointer, uint32) {
	if len(b) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b))
}

func (wasmHost) InputLen() int32 { return hostInputLen() }

func (wasmHost) InputRead(buf []byte) int32 {
	p, n := ptr(buf)
	return hostInputRead(p, n)
}

func (wasmHost) OutputWrite(b []byte) int32 {
	p, n := ptr(b)
	return hostOutputWrite(p, n)
}

func (wasmHost) Log(level int32, msg []byte) {
	p, n := ptr(msg)
	hostLog(level, p, n)
}

func (wasmHost) CapabilityCall(handle int32, req []byte) int32 {
	p, n := ptr(req)
	return hostCapabilityCall(handle, p, n)
}

func (wasmHost) ResponseLen() int32 { return hostResponseLen() }

func (wasmHost) ResponseRead(buf []byte) int32 {
	p, n := ptr(buf)
	return hostResponseRead(p, n)
}

func (wasmHost) ConfigLen() int32 { return hostConfigLen() }

func (wasmHost) ConfigRead(buf []byte) int32 {
	p, n := ptr(buf)
	return hostConfigRead(p, n)
}

func (wasmHost) GrantCount(kind string) int32 {
	switch kind {
	case abi.KindHTTP:
		return hostHTTPCount()
	case abi.KindSecret:
		return hostSecretCount()
	case abi.KindStorage:
		return hostStorageCount()
	case abi.KindChannel:
		return hostChannelCount()
	}
	return 0
}

func (wasmHost) GrantHandle(kind string, index int32) int32 {
	switch kind {
	case abi.KindHTTP:
		return hostHTTPHandle(index)
	case abi.KindSecret:
		return hostSecretHandle(index)
	case abi.KindStorage:
		return hostStorageHandle(index)
	case abi.KindChannel:
		return hostChannelHandle(index)
	}
	return -1
}
