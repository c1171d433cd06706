//go:build wasip1

// Command goguest is a minimal Go reactor guest for the runtime's tests. It
// speaks the Palyra skills ABI v1 directly through //go:wasmimport, without
// the SDK, so the runtime can be tested on its own.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o goguest.wasm main.go
package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
	"unsafe"
)

//go:wasmimport palyra:skills/host@1 input-len
func inputLen() int32

//go:wasmimport palyra:skills/host@1 input-read
func inputRead(ptr unsafe.Pointer, n int32) int32

//go:wasmimport palyra:skills/host@1 output-write
func outputWrite(ptr unsafe.Pointer, n int32) int32

//go:wasmimport palyra:skills/host@1 log
func hostLog(level int32, ptr unsafe.Pointer, n int32)

//go:wasmimport palyra:skills/host@1 capability-call
func capabilityCall(handle int32, ptr unsafe.Pointer, n int32) int32

//go:wasmimport palyra:skills/host@1 response-len
func responseLen() int32

//go:wasmimport palyra:skills/host@1 response-read
func responseRead(ptr unsafe.Pointer, n int32) int32

// calls counts entrypoint calls on this instance: it must be 1 every time,
// because every call gets a fresh instance.
var calls int

// initAt is set during _initialize.
var initAt = time.Now()

var hog [][]byte

func main() {}

func write(b []byte) {
	if len(b) == 0 {
		return
	}
	outputWrite(unsafe.Pointer(&b[0]), int32(len(b)))
}

func logf(level int32, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if msg == "" {
		return
	}
	b := []byte(msg)
	hostLog(level, unsafe.Pointer(&b[0]), int32(len(b)))
}

// field returns the string value of "key":"value" in doc's "input" object,
// good enough for tests (no escapes).
func field(doc []byte, key string) string {
	i := bytes.Index(doc, []byte(`"input":`))
	if i < 0 {
		return ""
	}
	rest := doc[i:]
	k := []byte(`"` + key + `":"`)
	j := bytes.Index(rest, k)
	if j < 0 {
		return ""
	}
	rest = rest[j+len(k):]
	e := bytes.IndexByte(rest, '"')
	if e < 0 {
		return ""
	}
	return string(rest[:e])
}

//go:wasmexport palyra_plugin_main
func pluginMain() int32 {
	calls++
	n := inputLen()
	doc := make([]byte, n)
	if n > 0 {
		inputRead(unsafe.Pointer(&doc[0]), n)
	}
	switch op := field(doc, "op"); op {
	case "echo":
		i := bytes.Index(doc, []byte(`"input":`))
		_ = i
		write([]byte(`{"calls":` + strconv.Itoa(calls) + `,"doc":`))
		write(doc)
		write([]byte(`}`))
		return 0
	case "oom":
		for {
			hog = append(hog, make([]byte, 8<<20))
		}
	case "spin":
		x := 0
		for {
			x++
		}
	case "sleep":
		time.Sleep(10 * time.Second)
		return 0
	case "nap":
		time.Sleep(5 * time.Millisecond)
		write([]byte(`"rested"`))
		return 0
	case "stdio":
		fmt.Println("hello stdout")
		fmt.Fprintln(os.Stderr, "hello stderr")
		logf(2, "via log %d", 42)
		write([]byte(`true`))
		return 0
	case "exit0":
		write([]byte(`"bye"`))
		os.Exit(0)
	case "exit3":
		os.Exit(3)
	case "panic":
		panic("guest panicked on purpose")
	case "fail":
		write([]byte(`{"code":"not_found","message":"no such thing"}`))
		return 1
	case "cap":
		req := []byte(`{"op":"get","key":"k"}`)
		r := capabilityCall(30000, unsafe.Pointer(&req[0]), int32(len(req)))
		if r < 0 {
			write([]byte(strconv.Itoa(int(r))))
			return 0
		}
		rl := responseLen()
		resp := make([]byte, rl)
		if rl > 0 {
			responseRead(unsafe.Pointer(&resp[0]), rl)
		}
		write(resp)
		return 0
	}
	write([]byte(`{"code":"unknown_op","message":"unknown op"}`))
	return 2
}
