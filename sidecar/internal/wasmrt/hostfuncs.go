package wasmrt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v25"

	"github.com/palyra-go/palyra/sdk/abi"
)

// Import module names (sdk/ABI.md §2).
const (
	ModuleCapabilities = abi.ModuleCapabilities
	ModuleHost         = abi.ModuleHost
	ModuleWASI         = abi.ModuleWASI
)

type hostFn func(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap)

// hostFunc is one import the host provides.
type hostFunc struct {
	module, name string
	params       []wasmtime.ValKind
	results      []wasmtime.ValKind
	// usesMemory: the function takes a pointer, so a module importing it
	// must export its memory (sdk/ABI.md §1).
	usesMemory bool
	fn         hostFn
}

var (
	i32 = wasmtime.KindI32
	i64 = wasmtime.KindI64
)

func kinds(k ...wasmtime.ValKind) []wasmtime.ValKind { return k }

// hostFuncs is every import of sdk/ABI.md §2, and nothing else.
var hostFuncs = buildHostFuncs()

var hostFuncIndex = func() map[[2]string]*hostFunc {
	m := make(map[[2]string]*hostFunc, len(hostFuncs))
	for i := range hostFuncs {
		hf := &hostFuncs[i]
		m[[2]string{hf.module, hf.name}] = hf
	}
	return m
}()

func buildHostFuncs() []hostFunc {
	fs := []hostFunc{
		// palyra:skills/host@1
		{ModuleHost, "input-len", nil, kinds(i32), false, hostInputLen},
		{ModuleHost, "input-read", kinds(i32, i32), kinds(i32), true, hostInputRead},
		{ModuleHost, "output-write", kinds(i32, i32), kinds(i32), true, hostOutputWrite},
		{ModuleHost, "log", kinds(i32, i32, i32), nil, true, hostLog},
		{ModuleHost, "capability-call", kinds(i32, i32, i32), kinds(i32), true, hostCapabilityCall},
		{ModuleHost, "response-len", nil, kinds(i32), false, hostResponseLen},
		{ModuleHost, "response-read", kinds(i32, i32), kinds(i32), true, hostResponseRead},
		{ModuleHost, "config-len", nil, kinds(i32), false, hostConfigLen},
		{ModuleHost, "config-read", kinds(i32, i32), kinds(i32), true, hostConfigRead},

		// wasi_snapshot_preview1 subset (sdk/ABI.md §2.3)
		{ModuleWASI, "args_sizes_get", kinds(i32, i32), kinds(i32), true, wasiZeroSizes},
		{ModuleWASI, "args_get", kinds(i32, i32), kinds(i32), true, wasiNothing},
		{ModuleWASI, "environ_sizes_get", kinds(i32, i32), kinds(i32), true, wasiZeroSizes},
		{ModuleWASI, "environ_get", kinds(i32, i32), kinds(i32), true, wasiNothing},
		{ModuleWASI, "clock_time_get", kinds(i32, i64, i32), kinds(i32), true, wasiClockTimeGet},
		{ModuleWASI, "clock_res_get", kinds(i32, i32), kinds(i32), true, wasiClockResGet},
		{ModuleWASI, "random_get", kinds(i32, i32), kinds(i32), true, wasiRandomGet},
		{ModuleWASI, "fd_write", kinds(i32, i32, i32, i32), kinds(i32), true, wasiFdWrite},
		{ModuleWASI, "fd_read", kinds(i32, i32, i32, i32), kinds(i32), true, wasiFdRead},
		{ModuleWASI, "fd_close", kinds(i32), kinds(i32), false, wasiFdClose},
		{ModuleWASI, "fd_seek", kinds(i32, i64, i32, i32), kinds(i32), true, wasiFdSeek},
		{ModuleWASI, "fd_fdstat_get", kinds(i32, i32), kinds(i32), true, wasiFdFdstatGet},
		{ModuleWASI, "fd_fdstat_set_flags", kinds(i32, i32), kinds(i32), false, wasiFdFdstatSetFlags},
		{ModuleWASI, "fd_prestat_get", kinds(i32, i32), kinds(i32), true, wasiBadf},
		{ModuleWASI, "fd_prestat_dir_name", kinds(i32, i32, i32), kinds(i32), true, wasiBadf},
		{ModuleWASI, "sched_yield", nil, kinds(i32), false, wasiNothing},
		{ModuleWASI, "poll_oneoff", kinds(i32, i32, i32, i32), kinds(i32), true, wasiPollOneoff},
		{ModuleWASI, "proc_exit", kinds(i32), nil, false, wasiProcExit},
	}
	// palyra:plugins/host-capabilities@0.1.0, exactly as Palyra has them.
	for k := range kindCount {
		kind := capKind(k)
		fs = append(fs,
			hostFunc{ModuleCapabilities, kindImportNames[kind] + "-count", nil, kinds(i32), false,
				func(st *instState, _ *wasmtime.Caller, _ []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
					if st.call == nil {
						return ret32(0)
					}
					return ret32(int32(len(st.call.grants[kind])))
				}},
			hostFunc{ModuleCapabilities, kindImportNames[kind] + "-handle", kinds(i32), kinds(i32), false,
				func(st *instState, _ *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
					if st.call == nil {
						return ret32(-1)
					}
					return ret32(st.call.grants.handle(kind, a[0].I32()))
				}},
		)
	}
	return fs
}

func valTypes(ks []wasmtime.ValKind) []*wasmtime.ValType {
	out := make([]*wasmtime.ValType, len(ks))
	for i, k := range ks {
		out[i] = wasmtime.NewValType(k)
	}
	return out
}

// defineHostFuncs defines every host function once on the engine's linker.
// The closures find the calling store's state through its context pointer.
func (e *Engine) defineHostFuncs() error {
	for i := range hostFuncs {
		hf := &hostFuncs[i]
		ty := wasmtime.NewFuncType(valTypes(hf.params), valTypes(hf.results))
		fn := hf.fn
		err := e.linker.FuncNew(hf.module, hf.name, ty, func(c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
			st := e.lookup(c)
			if st == nil {
				// Cannot happen: every store is registered before
				// instantiation. Fail closed.
				return nil, wasmtime.NewTrap("palyra: host function called from an unknown store")
			}
			if t := st.checkAlive(); t != nil {
				return nil, t
			}
			return fn(st, c, a)
		})
		if err != nil {
			return fmt.Errorf("%s.%s: %w", hf.module, hf.name, err)
		}
	}
	return nil
}

// checkAlive ends the call at a host-function boundary when its ctx is done
// or its deadline has passed, so that a guest waiting in host calls cannot
// outlive either.
func (st *instState) checkAlive() *wasmtime.Trap {
	if st.abort != nil {
		return wasmtime.NewTrap("palyra: call aborted")
	}
	select {
	case <-st.ctx.Done():
		st.abort = ctxAbort(st.ctx.Err())
		return wasmtime.NewTrap("palyra: call canceled")
	default:
	}
	if !st.deadline.IsZero() && !time.Now().Before(st.deadline) {
		st.abort = st.timeoutErr("deadline passed during a host call")
		return wasmtime.NewTrap("palyra: deadline passed")
	}
	return nil
}

func ctxAbort(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: ctx deadline (%w)", ErrTimeout, err)
	}
	return fmt.Errorf("%w (%w)", ErrCanceled, err)
}

func (st *instState) timeoutErr(why string) error {
	if st.ctxDeadline {
		return fmt.Errorf("%w: %s (%w)", ErrTimeout, why, context.DeadlineExceeded)
	}
	return fmt.Errorf("%w: %s", ErrTimeout, why)
}

func ret32(v int32) ([]wasmtime.Val, *wasmtime.Trap) {
	return []wasmtime.Val{wasmtime.ValI32(v)}, nil
}

func retCode(c ABICode) ([]wasmtime.Val, *wasmtime.Trap) { return ret32(int32(c)) }

// --- palyra:skills/host@1 -------------------------------------------------

func hostInputLen(st *instState, _ *wasmtime.Caller, _ []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if st.call == nil {
		return retCode(CodeInvalidRequest)
	}
	return ret32(int32(len(st.call.input)))
}

func hostInputRead(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	return readInto(st, c, a[0].I32(), a[1].I32(), func() ([]byte, bool) {
		if st.call == nil {
			return nil, false
		}
		return st.call.input, true
	})
}

// emptyConfig is the config document of a call given none.
var emptyConfig = []byte("{}")

// hostConfigLen is config-len: the length of the call's config document
// (bounded by abi.MaxConfigBytes when the call is prepared).
func hostConfigLen(st *instState, _ *wasmtime.Caller, _ []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if st.call == nil {
		return retCode(CodeInvalidRequest)
	}
	return ret32(int32(len(st.call.config)))
}

// hostConfigRead is config-read: it copies the start of the config
// document into guest memory, as input-read does.
func hostConfigRead(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	return readInto(st, c, a[0].I32(), a[1].I32(), func() ([]byte, bool) {
		if st.call == nil {
			return nil, false
		}
		return st.call.config, true
	})
}

func hostResponseLen(st *instState, _ *wasmtime.Caller, _ []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if st.call == nil || !st.call.hasPending {
		return retCode(CodeInvalidRequest)
	}
	return ret32(int32(len(st.call.pending)))
}

func hostResponseRead(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	return readInto(st, c, a[0].I32(), a[1].I32(), func() ([]byte, bool) {
		if st.call == nil || !st.call.hasPending {
			return nil, false
		}
		return st.call.pending, true
	})
}

// readInto copies the start of a host document into guest memory.
func readInto(st *instState, c *wasmtime.Caller, ptr, n int32, doc func() ([]byte, bool)) ([]wasmtime.Val, *wasmtime.Trap) {
	src, ok := doc()
	if !ok || n < 0 {
		return retCode(CodeInvalidRequest)
	}
	if int(n) > len(src) {
		n = int32(len(src))
	}
	dst, ok := span(st.memory(c), ptr, n)
	if !ok {
		return retCode(CodeInvalidRequest)
	}
	copy(dst, src)
	return ret32(n)
}

func hostOutputWrite(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if st.call == nil {
		return retCode(CodeInvalidRequest)
	}
	src, ok := span(st.memory(c), a[0].I32(), a[1].I32())
	if !ok {
		return retCode(CodeInvalidRequest)
	}
	if len(st.call.out)+len(src) > MaxOutputBytes {
		st.call.outOverflow = true
		return retCode(CodeTooLarge)
	}
	st.call.out = append(st.call.out, src...)
	return ret32(0)
}

func hostLog(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	msg, ok := span(st.memory(c), a[1].I32(), a[2].I32())
	if !ok {
		st.logs.dropped++
		return nil, nil
	}
	st.logs.add(clampLevel(a[0].I32()), SourceLog, msg)
	return nil, nil
}

func hostCapabilityCall(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if st.call == nil {
		return retCode(CodeInvalidRequest)
	}
	code, t := st.capabilityCall(c, a[0].I32(), a[1].I32(), a[2].I32())
	if t != nil {
		return nil, t
	}
	return ret32(code)
}

// capabilityCall performs one capability-call and sets the pending
// response. It returns the response length or a negative code.
func (st *instState) capabilityCall(c *wasmtime.Caller, handle, ptr, n int32) (int32, *wasmtime.Trap) {
	call := st.call
	call.pending, call.hasPending = nil, false
	fail := func(code ABICode, msg string) (int32, *wasmtime.Trap) {
		call.pending, call.hasPending = errorDocument(code, msg), true
		return int32(code), nil
	}
	call.capCalls++
	if call.capCalls > call.maxCapCalls {
		return fail(CodeQuotaExceeded, fmt.Sprintf("capability-call limit of %d per invocation reached", call.maxCapCalls))
	}
	raw, ok := span(st.memory(c), ptr, n)
	if !ok {
		return fail(CodeInvalidRequest, "request pointer/length outside memory")
	}
	kind, grant, ok := call.grants.lookup(handle)
	if !ok {
		return fail(CodeNotGranted, fmt.Sprintf("handle %d is not granted to this call", handle))
	}
	req, code, why := parseCapabilityRequest(raw)
	if code != 0 {
		return fail(code, why)
	}
	if call.broker == nil {
		return fail(CodeUnavailable, "no capability broker is configured")
	}
	r := call.ids
	r.Kind = kind
	r.Handle = handle
	r.Grant = grant
	r.Request = req
	ctx, cancel := context.WithDeadline(st.ctx, st.deadline)
	resp, err := callBroker(ctx, call.broker, r)
	cancel()
	// The broker may have taken the rest of the call's time.
	if t := st.checkAlive(); t != nil {
		return 0, t
	}
	if err != nil {
		code, msg := brokerErrorCode(err)
		return fail(code, msg)
	}
	if len(resp) > MaxResponseBytes {
		return fail(CodeTooLarge, fmt.Sprintf("response of %d bytes is over the %d-byte limit", len(resp), MaxResponseBytes))
	}
	call.pending, call.hasPending = resp, true
	return int32(len(resp)), nil
}

// callBroker calls b, turning a panic into an internal error: a broker bug
// must not take the sidecar down with a guest-triggered panic.
func callBroker(ctx context.Context, b Broker, r CapabilityRequest) (resp []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, fmt.Errorf("runtime: broker panicked: %v", p)
		}
	}()
	return b.Call(ctx, r)
}

func brokerErrorCode(err error) (ABICode, string) {
	var ce *CapabilityError
	switch {
	case errors.As(err, &ce) && ce.Code.Valid():
		return ce.Code, ce.Message
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout, "the capability operation ran out of time"
	case errors.Is(err, context.Canceled):
		return CodeTimeout, "the capability operation was canceled"
	}
	// The cause may hold host details: the guest only learns it failed.
	return CodeInternal, "internal host error"
}

// --- wasi_snapshot_preview1 -----------------------------------------------

// WASI errno values used here.
const (
	errnoSuccess = 0
	errnoBadf    = 8
	errnoFault   = 21
	errnoInval   = 28
	errnoNotsup  = 58
	errnoSpipe   = 70
)

func errno(n int32) ([]wasmtime.Val, *wasmtime.Trap) { return ret32(n) }

func putU32(mem []byte, ptr uint32, v uint32) bool {
	b, ok := spanU(mem, ptr, 4)
	if !ok {
		return false
	}
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return true
}

func putU64(mem []byte, ptr uint32, v uint64) bool {
	b, ok := spanU(mem, ptr, 8)
	if !ok {
		return false
	}
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
	return true
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

func u32(v wasmtime.Val) uint32 { return uint32(v.I32()) }

// wasiZeroSizes is args_sizes_get / environ_sizes_get: no entries.
func wasiZeroSizes(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	mem := st.memory(c)
	if !putU32(mem, u32(a[0]), 0) || !putU32(mem, u32(a[1]), 0) {
		return errno(errnoFault)
	}
	return errno(errnoSuccess)
}

func wasiNothing(*instState, *wasmtime.Caller, []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	return errno(errnoSuccess)
}

func wasiBadf(*instState, *wasmtime.Caller, []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	return errno(errnoBadf)
}

const (
	clockRealtime  = 0
	clockMonotonic = 1
)

func (st *instState) clockNow(id uint32) (uint64, bool) {
	switch id {
	case clockRealtime:
		return uint64(time.Now().UnixNano()), true
	case clockMonotonic:
		return uint64(time.Since(st.e.epoch0)), true
	}
	return 0, false
}

func wasiClockTimeGet(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	now, ok := st.clockNow(u32(a[0]))
	if !ok {
		return errno(errnoInval)
	}
	if !putU64(st.memory(c), u32(a[2]), now) {
		return errno(errnoFault)
	}
	return errno(errnoSuccess)
}

func wasiClockResGet(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if _, ok := st.clockNow(u32(a[0])); !ok {
		return errno(errnoInval)
	}
	if !putU64(st.memory(c), u32(a[1]), 1) {
		return errno(errnoFault)
	}
	return errno(errnoSuccess)
}

func wasiRandomGet(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	b, ok := spanU(st.memory(c), u32(a[0]), uint64(u32(a[1])))
	if !ok {
		return errno(errnoFault)
	}
	fillRandom(b)
	return errno(errnoSuccess)
}

// iovecs calls f for each buffer of a WASI iovec array, stopping at the
// first one outside memory.
func iovecs(mem []byte, iovs, n uint32, f func([]byte)) bool {
	vec, ok := spanU(mem, iovs, uint64(n)*8)
	if !ok {
		return false
	}
	for i := uint64(0); i < uint64(n); i++ {
		e := vec[i*8 : i*8+8]
		b, ok := spanU(mem, le32(e), uint64(le32(e[4:])))
		if !ok {
			return false
		}
		f(b)
	}
	return true
}

func wasiFdWrite(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	fd := a[0].I32()
	if fd != 1 && fd != 2 {
		return errno(errnoBadf)
	}
	mem := st.memory(c)
	var total uint64
	ok := iovecs(mem, u32(a[1]), u32(a[2]), func(b []byte) {
		total += uint64(len(b))
		if fd == 2 {
			st.noteStderr(b)
		}
		st.logs.write(int(fd-1), b)
	})
	if !ok {
		return errno(errnoFault)
	}
	if total > 1<<31-1 {
		total = 1<<31 - 1
	}
	// Everything counts as written, kept or dropped, so that a guest
	// never loops retrying a write the log caps refused.
	if !putU32(mem, u32(a[3]), uint32(total)) {
		return errno(errnoFault)
	}
	return errno(errnoSuccess)
}

func wasiFdRead(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if a[0].I32() != 0 {
		return errno(errnoBadf)
	}
	mem := st.memory(c)
	if !iovecs(mem, u32(a[1]), u32(a[2]), func([]byte) {}) {
		return errno(errnoFault)
	}
	if !putU32(mem, u32(a[3]), 0) { // end of file
		return errno(errnoFault)
	}
	return errno(errnoSuccess)
}

func isStdio(fd int32) bool { return fd >= 0 && fd <= 2 }

func wasiFdClose(_ *instState, _ *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if isStdio(a[0].I32()) {
		return errno(errnoSuccess)
	}
	return errno(errnoBadf)
}

func wasiFdSeek(_ *instState, _ *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if isStdio(a[0].I32()) {
		return errno(errnoSpipe)
	}
	return errno(errnoBadf)
}

// WASI rights used in fd_fdstat_get.
const (
	rightFdRead         = 1 << 1
	rightFdWrite        = 1 << 6
	rightPollFdReadwrte = 1 << 27
	filetypeCharDevice  = 2
)

func wasiFdFdstatGet(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	fd := a[0].I32()
	if !isStdio(fd) {
		return errno(errnoBadf)
	}
	b, ok := spanU(st.memory(c), u32(a[1]), 24)
	if !ok {
		return errno(errnoFault)
	}
	clear(b)
	b[0] = filetypeCharDevice
	rights := uint64(rightFdWrite | rightPollFdReadwrte)
	if fd == 0 {
		rights = rightFdRead | rightPollFdReadwrte
	}
	for i := range 8 {
		b[8+i] = byte(rights >> (8 * i))
	}
	return errno(errnoSuccess)
}

func wasiFdFdstatSetFlags(_ *instState, _ *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	if isStdio(a[0].I32()) {
		return errno(errnoSuccess)
	}
	return errno(errnoBadf)
}

func wasiProcExit(st *instState, _ *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	st.exited, st.exitCode = true, a[0].I32()
	return nil, wasmtime.NewTrap("palyra: proc_exit")
}

// poll_oneoff layout (wasi_snapshot_preview1).
const (
	subscriptionSize = 48
	eventSize        = 32
	eventClock       = 0
	eventFdRead      = 1
	eventFdWrite     = 2
	subclockAbstime  = 1
	maxSubscriptions = 4096
)

// wasiPollOneoff supports clock subscriptions only: it sleeps until the
// earliest one, within the call's deadline and ctx. Fd subscriptions
// complete at once with ENOTSUP.
func wasiPollOneoff(st *instState, c *wasmtime.Caller, a []wasmtime.Val) ([]wasmtime.Val, *wasmtime.Trap) {
	inPtr, outPtr, n, neventsPtr := u32(a[0]), u32(a[1]), u32(a[2]), u32(a[3])
	if n == 0 || n > maxSubscriptions {
		return errno(errnoInval)
	}
	mem := st.memory(c)
	in, ok := spanU(mem, inPtr, uint64(n)*subscriptionSize)
	if !ok {
		return errno(errnoFault)
	}
	if _, ok := spanU(mem, outPtr, uint64(n)*eventSize); !ok {
		return errno(errnoFault)
	}
	if _, ok := spanU(mem, neventsPtr, 4); !ok {
		return errno(errnoFault)
	}
	type event struct {
		userdata uint64
		errno    uint16
		typ      uint8
	}
	subs := make([]struct {
		userdata uint64
		wake     time.Time
	}, 0, n)
	var events []event
	now := time.Now()
	for i := uint32(0); i < n; i++ {
		s := in[i*subscriptionSize : (i+1)*subscriptionSize]
		ud, tag := le64(s), s[8]
		switch tag {
		case eventClock:
			id, timeout, flags := le32(s[16:]), le64(s[24:]), uint16(s[40])|uint16(s[41])<<8
			var wake time.Time
			switch {
			case flags&subclockAbstime == 0:
				wake = now.Add(durationOf(timeout))
			case id == clockRealtime:
				wake = time.Unix(0, int64(min(timeout, 1<<63-1)))
			case id == clockMonotonic:
				wake = st.e.epoch0.Add(durationOf(timeout))
			}
			if id != clockRealtime && id != clockMonotonic {
				events = append(events, event{ud, errnoInval, eventClock})
				continue
			}
			subs = append(subs, struct {
				userdata uint64
				wake     time.Time
			}{ud, wake})
		case eventFdRead, eventFdWrite:
			events = append(events, event{ud, errnoNotsup, tag})
		default:
			events = append(events, event{ud, errnoInval, tag})
		}
	}
	if len(events) == 0 && len(subs) > 0 {
		earliest := subs[0].wake
		for _, s := range subs[1:] {
			if s.wake.Before(earliest) {
				earliest = s.wake
			}
		}
		if t := st.sleepUntil(earliest); t != nil {
			return nil, t
		}
		now = time.Now()
		for _, s := range subs {
			if !s.wake.After(now) {
				events = append(events, event{s.userdata, errnoSuccess, eventClock})
			}
		}
	}
	// Memory cannot have moved: the guest did not run while we slept.
	mem = st.memory(c)
	out, _ := spanU(mem, outPtr, uint64(n)*eventSize)
	for i, ev := range events {
		b := out[i*eventSize : (i+1)*eventSize]
		clear(b)
		for j := range 8 {
			b[j] = byte(ev.userdata >> (8 * j))
		}
		b[8], b[9] = byte(ev.errno), byte(ev.errno>>8)
		b[10] = ev.typ
	}
	putU32(mem, neventsPtr, uint32(len(events)))
	return errno(errnoSuccess)
}

func durationOf(ns uint64) time.Duration {
	if ns > 1<<63-1 {
		return 1<<63 - 1
	}
	return time.Duration(ns)
}

// sleepUntil sleeps until t, but not past the deadline nor after ctx is
// done: either ends the call.
func (st *instState) sleepUntil(t time.Time) *wasmtime.Trap {
	wake := t
	pastDeadline := !st.deadline.IsZero() && !t.Before(st.deadline)
	if pastDeadline {
		wake = st.deadline
	}
	d := time.Until(wake)
	if d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-st.ctx.Done():
			timer.Stop()
			st.abort = ctxAbort(st.ctx.Err())
			return wasmtime.NewTrap("palyra: call canceled")
		}
	}
	if pastDeadline {
		st.abort = st.timeoutErr("deadline passed while sleeping in poll_oneoff")
		return wasmtime.NewTrap("palyra: deadline passed")
	}
	return nil
}
