package wasmrt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bytecodealliance/wasmtime-go/v25"
)

// The host functions that decode guest memory, fuzzed through the real
// linker: a one-page module imports each of them and re-exports it as a
// thunk, the fuzzer fills the page and picks the arguments, and the call
// goes through wasmtime into the very closures a skill calls. Each must
// return its documented errno or ABI code (or end the call with the
// deadline's trap), never panic, and write guest memory only where its
// contract says (the nwritten word, the event array, the buffer it fills):
// every other byte of the page must come back as it went in.

// fuzzedFunc is one import under test: its thunk's signature and the
// memory ranges a call may write, given the arguments.
type fuzzedFunc struct {
	module, name string
	params       string // wasm types of the parameters, "i32 i64 i32"
	wasi         bool   // returns a WASI errno (else an ABI length or code)
	noResult     bool
	writes       func(a []uint64) [][2]uint64 // [start, end) ranges it may write
}

func r(start, n uint64) [2]uint64 { return [2]uint64{start, start + n} }

var fuzzedFuncs = []fuzzedFunc{
	{ModuleWASI, "fd_write", "i32 i32 i32 i32", true, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[3], 4)} }},
	{ModuleWASI, "fd_read", "i32 i32 i32 i32", true, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[3], 4)} }},
	{ModuleWASI, "poll_oneoff", "i32 i32 i32 i32", true, false, func(a []uint64) [][2]uint64 {
		return [][2]uint64{r(a[1], a[2]*eventSize), r(a[3], 4)}
	}},
	{ModuleWASI, "random_get", "i32 i32", true, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[0], a[1])} }},
	{ModuleWASI, "clock_time_get", "i32 i64 i32", true, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[2], 8)} }},
	{ModuleWASI, "clock_res_get", "i32 i32", true, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[1], 8)} }},
	{ModuleWASI, "args_sizes_get", "i32 i32", true, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[0], 4), r(a[1], 4)} }},
	{ModuleWASI, "environ_sizes_get", "i32 i32", true, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[0], 4), r(a[1], 4)} }},
	{ModuleWASI, "args_get", "i32 i32", true, false, nil},
	{ModuleWASI, "environ_get", "i32 i32", true, false, nil},
	{ModuleWASI, "fd_fdstat_get", "i32 i32", true, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[1], 24)} }},
	{ModuleWASI, "fd_seek", "i32 i64 i32 i32", true, false, nil},
	{ModuleWASI, "fd_prestat_get", "i32 i32", true, false, nil},
	{ModuleWASI, "fd_prestat_dir_name", "i32 i32 i32", true, false, nil},
	{ModuleHost, "input-read", "i32 i32", false, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[0], a[1])} }},
	{ModuleHost, "response-read", "i32 i32", false, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[0], a[1])} }},
	{ModuleHost, "config-read", "i32 i32", false, false, func(a []uint64) [][2]uint64 { return [][2]uint64{r(a[0], a[1])} }},
	{ModuleHost, "output-write", "i32 i32", false, false, nil},
	{ModuleHost, "log", "i32 i32 i32", false, true, nil},
}

// wasiErrnos are the errno values the WASI subset returns.
var wasiErrnos = map[int32]bool{errnoSuccess: true, errnoBadf: true, errnoFault: true, errnoInval: true, errnoNotsup: true, errnoSpipe: true}

// hostFuncsWAT is the module of thunks: export "f<i>" calls import i.
func hostFuncsWAT() string {
	var b strings.Builder
	b.WriteString("(module\n")
	for i, f := range fuzzedFuncs {
		res := " (result i32)"
		if f.noResult {
			res = ""
		}
		fmt.Fprintf(&b, "  (import %q %q (func $i%d (param %s)%s))\n", f.module, f.name, i, f.params, res)
	}
	b.WriteString("  (memory (export \"memory\") 1)\n")
	for i, f := range fuzzedFuncs {
		res := " (result i32)"
		if f.noResult {
			res = ""
		}
		fmt.Fprintf(&b, "  (func (export \"f%d\") (param %s)%s", i, f.params, res)
		for j := range strings.Fields(f.params) {
			fmt.Fprintf(&b, " (local.get %d)", j)
		}
		fmt.Fprintf(&b, " (call $i%d))\n", i)
	}
	b.WriteString(")\n")
	return b.String()
}

// hostCallSeed is one seed: the function, its arguments and the page.
type hostCallSeed struct {
	fn   string
	args [4]uint64
	mem  []byte
}

// page builds a seed page from (offset, bytes) pieces.
func page(pieces ...any) []byte {
	var mem []byte
	for i := 0; i+1 < len(pieces); i += 2 {
		off, b := pieces[i].(int), pieces[i+1].([]byte)
		if need := off + len(b); need > len(mem) {
			mem = append(mem, make([]byte, need-len(mem))...)
		}
		copy(mem[off:], b)
	}
	return mem
}

func le(vs ...any) []byte {
	var b []byte
	for _, v := range vs {
		switch v := v.(type) {
		case uint8:
			b = append(b, v)
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	return b
}

// subscription is one poll_oneoff subscription (48 bytes).
func subscription(userdata uint64, tag uint8, clockID uint32, timeout uint64, flags uint16) []byte {
	s := make([]byte, subscriptionSize)
	binary.LittleEndian.PutUint64(s, userdata)
	s[8] = tag
	binary.LittleEndian.PutUint32(s[16:], clockID)
	binary.LittleEndian.PutUint64(s[24:], timeout)
	binary.LittleEndian.PutUint16(s[40:], flags)
	return s
}

// hostCallSeeds are the calls the fixtures of testdata/wasm make
// (wasi_probe.wat, bad_pointers.wat, sleep.wat, log_spammer.wat) with the
// memory they make them on, and the calls Go's wasip1 runtime makes (one
// iovec per fd_write, one relative monotonic clock subscription per
// time.Sleep, clock_time_get of both clocks, random_get for its seed).
var hostCallSeeds = []hostCallSeed{
	// wasi_probe: fd_write of "hello\n" through an iovec at 512.
	{"fd_write", [4]uint64{1, 512, 1, 96}, page(512, le(uint32(1024), uint32(6)), 1024, []byte("hello\n"))},
	{"fd_write", [4]uint64{2, 512, 1, 96}, page(512, le(uint32(1024), uint32(16)), 1024, []byte("fatal error: out of memory\n"))},
	{"fd_write", [4]uint64{3, 512, 1, 96}, page(512, le(uint32(1024), uint32(16)))},
	// bad_pointers: an iovec reaching past the page, a count of -1.
	{"fd_write", [4]uint64{1, 16, 1, 32}, page(16, le(uint32(65530), uint32(100)))},
	{"fd_write", [4]uint64{1, 16, 0xffffffff, 32}, page(16, le(uint32(65530), uint32(100)))},
	{"fd_write", [4]uint64{1, 65532, 1, 0}, nil},
	// Go's runtime: two iovecs, overlapping, nwritten inside the first.
	{"fd_write", [4]uint64{1, 0, 2, 4}, page(0, le(uint32(0), uint32(32), uint32(8), uint32(24)), 32, []byte("overlapping iovecs\n"))},
	{"fd_read", [4]uint64{0, 512, 1, 96}, page(512, le(uint32(1024), uint32(16)))},
	{"fd_read", [4]uint64{5, 512, 1, 96}, nil},
	// sleep.wat: one relative monotonic subscription (0 here: no wait).
	{"poll_oneoff", [4]uint64{0, 64, 1, 128}, page(0, subscription(7, eventClock, clockMonotonic, 0, 0))},
	// wasi_probe: an absolute realtime one in the past, fd subscriptions,
	// an unknown clock, an unknown tag, n = 0.
	{"poll_oneoff", [4]uint64{2048, 3072, 1, 96}, page(2048, subscription(1, eventClock, clockRealtime, 1, subclockAbstime))},
	{"poll_oneoff", [4]uint64{2048, 3072, 3, 96}, page(2048, append(append(subscription(1, eventFdRead, 0, 0, 0), subscription(2, eventFdWrite, 1, 0, 0)...), subscription(3, eventClock, 9, 0, 0)...))},
	{"poll_oneoff", [4]uint64{2048, 3072, 1, 96}, page(2048, subscription(4, 7, 0, 0, 0))},
	{"poll_oneoff", [4]uint64{2048, 3072, 0, 96}, nil},
	// out overlapping in, events ending at the page's end, a huge n.
	{"poll_oneoff", [4]uint64{0, 16, 2, 8}, page(0, append(subscription(5, eventClock, clockMonotonic, 0, 0), subscription(6, eventFdRead, 0, 0, 0)...))},
	{"poll_oneoff", [4]uint64{0, 65536 - 32, 1, 65532}, page(0, subscription(8, eventClock, clockRealtime, 0, subclockAbstime))},
	{"poll_oneoff", [4]uint64{0, 0, 0xffffffff, 0}, nil},
	{"random_get", [4]uint64{64, 32}, nil},
	{"random_get", [4]uint64{65000, 1000}, nil},
	{"clock_time_get", [4]uint64{0, 1, 16}, nil},
	{"clock_time_get", [4]uint64{1, 1, 24}, nil},
	{"clock_time_get", [4]uint64{2, 1, 24}, nil},
	{"clock_time_get", [4]uint64{0, 1, 65535}, nil},
	{"clock_res_get", [4]uint64{1, 32}, nil},
	{"args_sizes_get", [4]uint64{0, 4}, nil},
	{"environ_sizes_get", [4]uint64{65534, 4}, nil},
	{"fd_fdstat_get", [4]uint64{1, 128}, nil},
	{"fd_fdstat_get", [4]uint64{0, 65520}, nil},
	{"fd_seek", [4]uint64{1, 0, 0, 96}, nil},
	{"fd_prestat_dir_name", [4]uint64{3, 96, 8}, nil},
	// palyra host: bad_pointers and log_spammer.
	{"input-read", [4]uint64{0xfffffff0, 10}, nil},
	{"input-read", [4]uint64{0, 0xffffffff}, nil},
	{"input-read", [4]uint64{100, 1 << 20}, nil},
	{"response-read", [4]uint64{65535, 10}, nil},
	{"output-write", [4]uint64{0, 4}, page(0, []byte("true"))},
	{"output-write", [4]uint64{65530, 100}, nil},
	{"log", [4]uint64{2, 65000, 10000}, nil},
	{"log", [4]uint64{4, 0, 12}, page(0, []byte("spam spam \xff\n"))},
	{"log", [4]uint64{0xffffffff, 0xffffffff, 2}, nil},
}

func FuzzHostFuncs(f *testing.F) {
	e, err := NewEngine(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = e.Close() })
	wasm, err := Wat2Wasm(hostFuncsWAT())
	if err != nil {
		f.Fatal(err)
	}
	mod, err := wasmtime.NewModule(e.wt, wasm)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range hostCallSeeds {
		i := -1
		for j, fn := range fuzzedFuncs {
			if fn.name == s.fn {
				i = j
			}
		}
		if i < 0 {
			f.Fatalf("seed for unknown function %s", s.fn)
		}
		f.Add(uint8(i), s.args[0], s.args[1], s.args[2], s.args[3], s.mem)
	}
	input := []byte(`{"abi":"palyra.skills.abi.v1","input":{"text":"hi"}}`)
	f.Fuzz(func(t *testing.T, which uint8, a0, a1, a2, a3 uint64, memIn []byte) {
		fn := fuzzedFuncs[int(which)%len(fuzzedFuncs)]
		kinds := strings.Fields(fn.params)
		raw := []uint64{a0, a1, a2, a3}
		args := make([]any, len(kinds))
		for j, k := range kinds {
			if k == "i32" {
				raw[j] = uint64(uint32(raw[j]))
				args[j] = int32(uint32(raw[j]))
			} else {
				args[j] = int64(raw[j])
			}
		}

		store := wasmtime.NewStore(e.wt)
		st := &instState{e: e, ctx: context.Background()}
		if fn.name == "poll_oneoff" {
			// A wait ends at this deadline at the latest (with the
			// deadline's trap): no input sleeps longer.
			st.deadline = time.Now().Add(time.Millisecond)
		}
		st.call = &boundCall{input: input, pending: []byte(`{"error":"denied"}`), hasPending: which&0x80 != 0}
		e.register(store, st)
		defer func() {
			e.unregister(store)
			store.Close()
		}()
		if err := store.SetFuel(1 << 20); err != nil {
			t.Fatal(err)
		}
		store.SetEpochDeadline(e.deadlineTicks(time.Minute))
		inst, err := e.linker.Instantiate(store, mod)
		if err != nil {
			t.Fatal(err)
		}
		mem := inst.GetExport(store, "memory").Memory()
		data := mem.UnsafeData(store)
		copy(data, memIn)
		before := bytes.Clone(data)

		e.acquire()
		res, err := inst.GetFunc(store, fmt.Sprintf("f%d", int(which)%len(fuzzedFuncs))).Call(store, args...)
		e.release()
		after := mem.UnsafeData(store)

		if err != nil {
			// Only poll_oneoff waits, and only its deadline ends it.
			if fn.name != "poll_oneoff" || !errors.Is(st.abort, ErrTimeout) {
				t.Fatalf("%s%v: %v (abort %v)", fn.name, raw[:len(kinds)], err, st.abort)
			}
		} else if !fn.noResult {
			v := res.(int32)
			switch {
			case fn.wasi && !wasiErrnos[v]:
				t.Fatalf("%s%v = %d: not an errno of the subset", fn.name, raw[:len(kinds)], v)
			case !fn.wasi && v < 0 && v != int32(CodeInvalidRequest) && v != int32(CodeTooLarge):
				t.Fatalf("%s%v = %d: not an ABI code", fn.name, raw[:len(kinds)], v)
			}
			if fn.name == "poll_oneoff" && v == errnoSuccess {
				if n := binary.LittleEndian.Uint32(after[raw[3]:]); uint64(n) > raw[2] {
					t.Fatalf("poll_oneoff reports %d events for %d subscriptions", n, raw[2])
				}
			}
		}
		// Nothing written outside the call's own ranges.
		var allowed [][2]uint64
		if fn.writes != nil {
			allowed = fn.writes(raw)
		}
		for i := range after {
			if after[i] == before[i] {
				continue
			}
			ok := false
			for _, rg := range allowed {
				if uint64(i) >= rg[0] && uint64(i) < rg[1] {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("%s%v wrote byte %d (%#x -> %#x), outside %v", fn.name, raw[:len(kinds)], i, before[i], after[i], allowed)
			}
		}
		// What the call kept stays within the ABI's bounds.
		if len(st.call.out) > MaxOutputBytes {
			t.Fatalf("output of %d bytes", len(st.call.out))
		}
		st.logs.flush()
		for _, rec := range st.logs.records {
			if len(rec.Message) > MaxLogRecordBytes || !utf8.ValidString(rec.Message) {
				t.Fatalf("log record of %d bytes, valid UTF-8 %v", len(rec.Message), utf8.ValidString(rec.Message))
			}
		}
	})
}
