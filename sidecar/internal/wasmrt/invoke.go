package wasmrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v25"

	"github.com/palyra-go/palyra/internal/textutil"
	"github.com/palyra-go/palyra/sdk/abi"
)

// Broker performs capability operations for guests. The runtime holds no
// authority of its own: every capability-call that passes the runtime's
// checks (call count, pointer bounds, handle granted, request size and
// well-formed JSON object) is handed to the Broker, which enforces policy.
//
// Call runs on the invoking goroutine while the guest waits; ctx carries the
// call's deadline and cancellation. It returns the response document (at
// most MaxResponseBytes) or an error: a *CapabilityError gives its code to
// the guest, context errors give -6 (timeout), anything else -9 (internal,
// with no detail shown to the guest). A Broker must be safe for concurrent
// use.
type Broker interface {
	Call(ctx context.Context, req CapabilityRequest) ([]byte, error)
}

// CapabilityRequest is one capability-call, after the runtime's checks.
type CapabilityRequest struct {
	// InvocationID, SkillID and ToolID identify the call, as given in its
	// Invocation.
	InvocationID string
	SkillID      string
	ToolID       string
	// Kind is the capability kind of Handle's range.
	Kind CapabilityKind
	// Handle is the granted handle the guest passed.
	Handle int32
	// Grant is what the handle stands for: the HTTP host, secret key,
	// storage prefix or channel.
	Grant string
	// Request is the guest's request document: a well-formed JSON object
	// of at most MaxRequestBytes, owned by the Broker.
	Request json.RawMessage
}

// Invocation is one call of a module's entrypoint.
type Invocation struct {
	// ID, SkillID and ToolID are the invocation_id, skill_id and tool_id
	// of the input document; the guest dispatches on ToolID.
	ID      string
	SkillID string
	ToolID  string
	// Input is the tool input: one JSON value (empty means null).
	Input json.RawMessage
	// Config is the skill's operator config: one JSON object of at most
	// abi.MaxConfigBytes that config-read hands to the guest (empty means
	// {}). It may hold sensitive values: it lives for this call only.
	Config json.RawMessage
	// Grants are the capabilities the call may use.
	Grants Grants
	// Timeout is the request's own timeout (0: none).
	Timeout time.Duration
	// Limits tighten the module's limits for this call.
	Limits Limits
	// Broker serves capability-call. Nil makes every capability-call that
	// passes the runtime's checks return -8 (unavailable).
	Broker Broker
	// DeferRefill leaves the refill to the caller, who calls
	// Module.Refill once it has sent the call's reply: Refill wakes the
	// preparer (which refills the pool and closes used stores) when the
	// pool is at its low-water mark, and that wake-up (a futex call, and
	// the hand-over to the preparer's thread) is then off the reply's
	// path. A caller that sets it and never calls Refill leaves the pool
	// short until the next call that does.
	DeferRefill bool
}

// Stats describe the resources a call used. They are reported for every
// call, whatever its outcome.
type Stats struct {
	// FuelConsumed is the fuel the entrypoint call used (its budget when
	// it ran out). After an epoch interruption (timeout) it can miss the
	// fuel burnt since the guest last called or returned: wasmtime saves
	// its fuel counter only at those points. FuelLowerBound says so.
	FuelConsumed uint64
	// FuelLowerBound is set when the call ended on a timeout: FuelConsumed
	// is then a lower bound (often 0: a guest looping without calling the
	// host never has its fuel counter saved; wasmtime keeps it in a
	// register until the guest calls out or returns).
	FuelLowerBound bool
	// InitFuelConsumed is the fuel instantiation and _initialize used,
	// whether they ran before the call (prepared) or during it.
	InitFuelConsumed uint64
	// PeakMemoryBytes is the size of the exported memory at the end of the
	// call. Wasm memories never shrink, so this is the peak. It is 0 for a
	// module that exports no memory and for a call whose instantiation or
	// _initialize failed.
	PeakMemoryBytes uint64
	// WallTime is the time Invoke took.
	WallTime time.Duration
	// CapabilityCalls is how many times the guest called capability-call.
	CapabilityCalls int
	// Prepared reports whether a prepared instance served the call.
	Prepared bool
}

// Result is what a call produced. Invoke returns one with every call, also
// with an error, so that Stats and Logs are always reported.
type Result struct {
	// Output is the tool output, one JSON value; set only on success.
	Output json.RawMessage
	// ExitCode is what the entrypoint returned, or the proc_exit code.
	ExitCode int32
	// Entrypoint is the export that ran.
	Entrypoint string
	// Logs are the call's log records (including those written during
	// _initialize), within MaxLogBytes.
	Logs []LogRecord
	// LogsDropped counts the records dropped past MaxLogBytes or for a bad
	// pointer (an fd_write past the budget counts as one).
	LogsDropped int
	Stats       Stats
}

// Invoke runs the module's entrypoint once in a fresh instance.
//
// The call's deadline is the earliest of ctx's deadline, inv.Timeout and the
// effective Limits.Timeout (Config.DefaultTimeout when none is set). It is
// enforced by epoch interruption inside guest code and checked at every host
// function. Cancellation of ctx is observed at every host function (and
// while poll_oneoff sleeps or the Broker works); guest code that makes no
// host calls runs until its deadline or fuel ends it.
//
// Invoke always returns a non-nil *Result. The error, when not nil, matches
// one of the call outcomes (ErrFuelExhausted, ErrTimeout, ErrMemoryLimit,
// ErrTrap, ErrToolError, ErrInvalidInput, ErrInvalidOutput,
// ErrOutputTooLarge) or ErrCanceled or ErrClosed. Invoke is safe for
// concurrent use; concurrent calls share nothing but the compiled code.
func (m *Module) Invoke(ctx context.Context, inv Invocation) (res *Result, err error) {
	start := time.Now()
	res = &Result{Entrypoint: m.entry}
	defer func() { res.Stats.WallTime = time.Since(start) }()
	if err := m.enter(); err != nil {
		return res, err
	}
	defer m.inflight.Done()
	if err := inv.Limits.validate(); err != nil {
		return res, err
	}
	limits := inv.Limits.tighten(m.limits)
	if err := ctx.Err(); err != nil {
		return res, ctxAbort(err)
	}

	// The deadline: earliest of ctx, request timeout, limits.
	deadline, ctxDeadline := start.Add(m.e.cfg.DefaultTimeout), false
	timeout := minNonZero(inv.Timeout, limits.Timeout)
	if timeout > 0 {
		deadline = start.Add(timeout)
	}
	if d, ok := ctx.Deadline(); ok && (timeout == 0 || d.Before(deadline)) {
		deadline, ctxDeadline = d, true
	}

	doc, grants, err := m.prepareInput(&inv, deadline)
	if err != nil {
		return res, err
	}

	inst := m.take(limits.store())
	if inst == nil {
		initDeadline, initCtxDeadline := deadline, ctxDeadline
		if d := time.Now().Add(m.cfg.InitTimeout); d.Before(initDeadline) {
			initDeadline, initCtxDeadline = d, false
		}
		inst, err = m.newInstance(ctx, limits.store(), initDeadline, initCtxDeadline)
		if err != nil {
			inst.st.logs.flush()
			res.Logs, res.LogsDropped = inst.st.logs.records, inst.st.logs.dropped
			res.Stats.InitFuelConsumed = inst.initFuel
			return res, err
		}
		if m.pool != nil && m.prepFails.Load() != 0 {
			m.prepFails.Store(0)
			m.signalRefill()
		}
	}
	defer func() {
		m.retire(inst)
		if !inv.DeferRefill {
			m.Refill()
		}
	}()
	res.Stats.Prepared = inst.prepared
	res.Stats.InitFuelConsumed = inst.initFuel

	st := inst.st
	st.ctx, st.deadline, st.ctxDeadline = ctx, deadline, ctxDeadline
	cfg := []byte(inv.Config)
	if len(cfg) == 0 {
		cfg = emptyConfig
	}
	st.call = &boundCall{
		input:       doc,
		config:      cfg,
		grants:      grants,
		maxCapCalls: limits.MaxCapabilityCalls,
		broker:      inv.Broker,
		ids:         CapabilityRequest{InvocationID: inv.ID, SkillID: inv.SkillID, ToolID: inv.ToolID},
	}
	defer func() {
		st.logs.flush()
		res.Logs, res.LogsDropped = st.logs.records, st.logs.dropped
		res.Stats.CapabilityCalls = st.call.capCalls
		if st.mem != nil {
			res.Stats.PeakMemoryBytes = uint64(st.mem.DataSize(inst.store))
		}
	}()

	if err := inst.store.SetFuel(limits.Fuel); err != nil {
		return res, fmt.Errorf("runtime: set fuel: %w", err)
	}
	// Reset the deadline for the call (a prepared instance's was set for
	// its _initialize), just before guest code runs.
	inst.store.SetEpochDeadline(m.e.deadlineTicks(time.Until(deadline)))

	code, callErr := m.callEntry(inst)
	if left, err := inst.store.GetFuel(); err == nil && left <= limits.Fuel {
		res.Stats.FuelConsumed = limits.Fuel - left
	}
	if callErr != nil {
		if !st.exited {
			err := classify(callErr, st, "call")
			res.Stats.FuelLowerBound = errors.Is(err, ErrTimeout)
			return res, err
		}
		code = st.exitCode
	}
	res.ExitCode = code
	return res, m.finish(res, st, &inv)
}

// callEntry runs the entrypoint, turning a panic that wasmtime-go
// propagated from a host function into an error.
func (m *Module) callEntry(inst *instance) (code int32, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("runtime: host function panicked: %v", p)
		}
	}()
	m.e.acquire()
	defer m.e.release()
	v, err := inst.entry.Call(inst.store)
	if err != nil {
		return 0, err
	}
	code, ok := v.(int32)
	if !ok {
		return 0, fmt.Errorf("%w: entrypoint returned %T", ErrMissingExport, v)
	}
	return code, nil
}

// prepareInput checks the input and builds the input document.
func (m *Module) prepareInput(inv *Invocation, deadline time.Time) ([]byte, grantLists, error) {
	if len(inv.Input) > MaxInputBytes {
		return nil, grantLists{}, fmt.Errorf("%w: input of %d bytes is over the %d-byte limit", ErrInvalidInput, len(inv.Input), MaxInputBytes)
	}
	// The input's JSON is checked as the document is written (one parse).
	if len(inv.Config) > abi.MaxConfigBytes {
		return nil, grantLists{}, fmt.Errorf("%w: config of %d bytes is over the %d-byte limit", ErrInvalidInput, len(inv.Config), abi.MaxConfigBytes)
	}
	if len(inv.Config) > 0 && (!json.Valid(inv.Config) || bytes.TrimSpace(inv.Config)[0] != '{') {
		return nil, grantLists{}, fmt.Errorf("%w: config is not a JSON object", ErrInvalidInput)
	}
	g, err := m.grantsFor(inv.Grants)
	if err != nil {
		return nil, grantLists{}, err
	}
	doc, err := appendInputDocument(nil, inv, g, deadline)
	if err != nil {
		return nil, grantLists{}, err
	}
	return doc, g.lists, nil
}

// finish turns the entrypoint's result and output buffer into the call's
// outcome (sdk/ABI.md §4).
func (m *Module) finish(res *Result, st *instState, inv *Invocation) error {
	out := st.call.out
	if m.legacy {
		out = []byte(`{"exit_code":` + strconv.Itoa(int(res.ExitCode)) + `}`)
	} else if res.ExitCode != 0 {
		code, msg := parseToolError(out)
		return &ToolError{ExitCode: res.ExitCode, Code: code, Message: msg}
	} else if st.call.outOverflow {
		return fmt.Errorf("%w: the guest returned 0 after output-write refused a write past %d bytes", ErrOutputTooLarge, MaxOutputBytes)
	}
	// The output is checked against the tool's output_schema on the
	// trusted side (the host, or the supervisor), never here; a Palyra
	// module's result is its exit code (sdk/ABI.md §8, the exit-code rule).
	output, err := parseOutput(out)
	if err != nil {
		return err
	}
	res.Output = output
	return nil
}

// trapCodeNames are the stable names of wasmtime trap codes.
var trapCodeNames = map[wasmtime.TrapCode]string{
	wasmtime.StackOverflow:          "stack_overflow",
	wasmtime.MemoryOutOfBounds:      "memory_out_of_bounds",
	wasmtime.HeapMisaligned:         "heap_misaligned",
	wasmtime.TableOutOfBounds:       "table_out_of_bounds",
	wasmtime.IndirectCallToNull:     "indirect_call_to_null",
	wasmtime.BadSignature:           "bad_signature",
	wasmtime.IntegerOverflow:        "integer_overflow",
	wasmtime.IntegerDivisionByZero:  "integer_division_by_zero",
	wasmtime.BadConversionToInteger: "bad_conversion_to_integer",
	wasmtime.UnreachableCodeReached: "unreachable",
	wasmtime.Interrupt:              "interrupt",
	wasmtime.OutOfFuel:              "out_of_fuel",
}

// classify maps an error from instantiation, _initialize or the entrypoint
// to a call outcome.
func classify(err error, st *instState, phase string) error {
	if st.abort != nil {
		return st.abort
	}
	var trap *wasmtime.Trap
	if errors.As(err, &trap) {
		msg := trapMessage(trap.Message())
		code := trap.Code()
		switch {
		case code != nil && *code == wasmtime.OutOfFuel:
			return fmt.Errorf("%w during %s", ErrFuelExhausted, phase)
		case code != nil && *code == wasmtime.Interrupt:
			return st.timeoutErr("epoch deadline reached during " + phase)
		case st.oom:
			// The Go runtime reports "out of memory" on fd 2 and then
			// aborts with unreachable when memory.grow fails.
			return fmt.Errorf("%w: the guest ran out of memory during %s", ErrMemoryLimit, phase)
		}
		name := "unknown"
		if code != nil {
			if n, ok := trapCodeNames[*code]; ok {
				name = n
			}
		}
		return &TrapError{Code: name, Message: msg}
	}
	var werr *wasmtime.Error
	if errors.As(err, &werr) {
		msg := textutil.TruncateValid(werr.Error(), maxDetailBytes)
		if isLimitError(msg) {
			return fmt.Errorf("%w during %s: %q", ErrMemoryLimit, phase, msg)
		}
		if isLinkError(msg) {
			return fmt.Errorf("%w during %s: %q", ErrLinkError, phase, msg)
		}
		return fmt.Errorf("runtime: %s failed: %q", phase, msg)
	}
	return fmt.Errorf("runtime: %s failed: %w", phase, err)
}

// maxTrapFrames bounds the backtrace kept in a TrapError.
const maxTrapFrames = 16

// trapMessage puts wasmtime's cause first and keeps the first frames of the
// backtrace, within maxDetailBytes.
func trapMessage(msg string) string {
	cause, trace := msg, ""
	if i := strings.LastIndex(msg, "Caused by:"); i >= 0 {
		cause = strings.TrimSpace(msg[i+len("Caused by:"):])
		trace = strings.TrimSpace(msg[:i])
	} else if strings.HasPrefix(msg, "error while executing at wasm backtrace:") {
		cause, trace = "", msg
	}
	if trace != "" {
		lines := strings.Split(trace, "\n")
		if len(lines) > maxTrapFrames+1 {
			more := len(lines) - (maxTrapFrames + 1)
			lines = append(lines[:maxTrapFrames+1], fmt.Sprintf("    ... %d more frames", more))
		}
		trace = strings.Join(lines, "\n")
		if cause != "" {
			cause += "\n"
		}
		cause += trace
	}
	return textutil.TruncateValid(cause, maxDetailBytes)
}

// isLimitError recognises wasmtime's errors for a store limit refusing a
// memory, table or instance at instantiation.
func isLimitError(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{"resource limit exceeded", "memory minimum size", "table minimum size",
		"exceeds memory limits", "count too high", "failed to grow"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func isLinkError(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "unknown import") || strings.Contains(m, "incompatible import type") ||
		strings.Contains(m, "types incompatible")
}
