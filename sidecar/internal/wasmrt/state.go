package wasmrt

import (
	"bytes"
	"context"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v25"
	"github.com/palyra-go/palyra/internal/textutil"
)

// instState is the host-side state of one store (one instance). It is found
// from a host function through the store's context pointer (Engine.lookup).
// It is used by one goroutine at a time: the preparer while it runs
// _initialize, then the goroutine of the one call the instance serves.
type instState struct {
	e   *Engine
	mem *wasmtime.Memory // the exported "memory", nil when there is none

	// ctx and deadline govern the guest code running now: the preparation
	// context and init deadline while _initialize runs, the call's after
	// bind. Host functions that wait (poll_oneoff, capability-call) honour
	// both.
	ctx         context.Context
	deadline    time.Time
	ctxDeadline bool // deadline is the ctx's own deadline

	call *boundCall // nil until the invocation is bound

	logs     logBuffer
	oomTail  []byte // last bytes written to fd 2, to spot "out of memory"
	oom      bool   // the guest printed "out of memory" to fd 2
	exited   bool   // the guest called proc_exit
	exitCode int32
	abort    error // set by a host function that ended the call with a trap
}

// boundCall is the per-invocation part of instState.
type boundCall struct {
	input       []byte
	config      []byte // the config document (sdk/ABI.md §3.1)
	grants      grantLists
	out         []byte
	outOverflow bool // output-write returned -4 at least once
	maxCapCalls int
	capCalls    int
	pending     []byte
	hasPending  bool
	broker      Broker
	ids         CapabilityRequest // InvocationID, SkillID, ToolID filled
}

// memory returns the guest's exported memory as a byte slice valid until
// the host function returns, or nil when the module exports none.
func (st *instState) memory(c *wasmtime.Caller) []byte {
	if st.mem == nil {
		ext := c.GetExport("memory")
		if ext == nil {
			return nil
		}
		m := ext.Memory()
		if m == nil {
			return nil
		}
		st.mem = m
	}
	return st.mem.UnsafeData(c)
}

// span returns mem[ptr:ptr+n] when that range lies entirely inside mem.
// Pointers are unsigned 32-bit offsets; a negative length is invalid.
func span(mem []byte, ptr, n int32) ([]byte, bool) {
	if n < 0 {
		return nil, false
	}
	p, l := uint64(uint32(ptr)), uint64(n)
	if p+l > uint64(len(mem)) {
		return nil, false
	}
	return mem[p : p+l : p+l], true
}

// spanU is span for WASI's unsigned lengths.
func spanU(mem []byte, ptr uint32, l uint64) ([]byte, bool) {
	p := uint64(ptr)
	if l > uint64(len(mem)) || p+l > uint64(len(mem)) {
		return nil, false
	}
	return mem[p : p+l : p+l], true
}

// LogLevel is the level of a log record (sdk/ABI.md §6).
type LogLevel int8

// Log levels.
const (
	LevelTrace LogLevel = 0
	LevelDebug LogLevel = 1
	LevelInfo  LogLevel = 2
	LevelWarn  LogLevel = 3
	LevelError LogLevel = 4
)

// String returns "trace", "debug", "info", "warn" or "error".
func (l LogLevel) String() string {
	switch l {
	case LevelTrace:
		return "trace"
	case LevelDebug:
		return "debug"
	case LevelInfo:
		return "info"
	case LevelWarn:
		return "warn"
	}
	return "error"
}

func clampLevel(l int32) LogLevel {
	if l < int32(LevelTrace) {
		return LevelTrace
	}
	if l > int32(LevelError) {
		return LevelError
	}
	return LogLevel(l)
}

// LogSource says which channel a log record came from.
type LogSource string

// Log sources.
const (
	SourceLog    LogSource = "log"    // palyra:skills/host@1 log
	SourceStdout LogSource = "stdout" // fd_write to fd 1
	SourceStderr LogSource = "stderr" // fd_write to fd 2
)

// LogRecord is one record of a call's log. Records are data for the
// supervisor to display; they are never parsed as commands.
type LogRecord struct {
	Level   LogLevel
	Source  LogSource
	Message string // valid UTF-8, at most MaxLogRecordBytes
}

// logBuffer collects a call's log records within the ABI's caps. fd_write
// output is split into records at line ends (or every MaxLogRecordBytes).
type logBuffer struct {
	records []LogRecord
	bytes   int
	dropped int
	partial [2][]byte // unterminated line of fd 1 and fd 2
}

func (b *logBuffer) add(level LogLevel, src LogSource, msg []byte) {
	if len(msg) > MaxLogRecordBytes {
		msg = msg[:MaxLogRecordBytes]
	}
	s := textutil.TruncateValid(string(msg), MaxLogRecordBytes)
	if b.bytes+len(s) > MaxLogBytes {
		b.dropped++
		return
	}
	b.bytes += len(s)
	b.records = append(b.records, LogRecord{Level: level, Source: src, Message: s})
}

// write appends fd_write data of fd 1 (i=0) or fd 2 (i=1).
func (b *logBuffer) write(i int, data []byte) {
	level, src := LevelInfo, SourceStdout
	if i == 1 {
		level, src = LevelWarn, SourceStderr
	}
	if b.bytes >= MaxLogBytes {
		// Budget spent: count the write as one dropped record without
		// buffering or scanning it.
		b.dropped++
		b.partial[i] = b.partial[i][:0]
		return
	}
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		room := MaxLogRecordBytes - len(b.partial[i])
		switch {
		case nl >= 0 && nl <= room:
			b.partial[i] = append(b.partial[i], data[:nl]...)
			data = data[nl+1:]
		case len(data) < room:
			b.partial[i] = append(b.partial[i], data...)
			return
		default:
			b.partial[i] = append(b.partial[i], data[:room]...)
			data = data[room:]
		}
		b.add(level, src, b.partial[i])
		b.partial[i] = b.partial[i][:0]
		if b.bytes >= MaxLogBytes && len(data) > 0 {
			b.dropped++
			return
		}
	}
}

// flush emits unterminated fd lines.
func (b *logBuffer) flush() {
	for i := range b.partial {
		if len(b.partial[i]) > 0 {
			level, src := LevelInfo, SourceStdout
			if i == 1 {
				level, src = LevelWarn, SourceStderr
			}
			b.add(level, src, b.partial[i])
			b.partial[i] = nil
		}
	}
}

const oomMarker = "out of memory"

// noteStderr watches fd 2 for the Go runtime's "out of memory" report. Only
// bounded windows (the start and end of each write, joined to the end of the
// previous one) are scanned, so a huge write costs nothing extra.
func (st *instState) noteStderr(data []byte) {
	if st.oom {
		return
	}
	const window = 4096
	head := data
	if len(head) > window {
		head = head[:window]
	}
	win := append(st.oomTail, head...)
	if bytes.Contains(win, []byte(oomMarker)) || (len(data) > window && bytes.Contains(data[len(data)-window:], []byte(oomMarker))) {
		st.oom = true
		return
	}
	keep := len(oomMarker) - 1
	if len(data) >= keep {
		st.oomTail = append(st.oomTail[:0], data[len(data)-keep:]...)
		return
	}
	if len(win) > keep {
		win = win[len(win)-keep:]
	}
	st.oomTail = append(st.oomTail[:0:0], win...)
}
