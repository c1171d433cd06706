// Package abi is the seam between package skill and the host functions of
// the Palyra skills ABI v1 (sdk/ABI.md). Package skill talks to the host only
// through Host; the wasip1 build binds it to the real imports and package
// skilltest binds it to an in-memory fake, so everything above this seam is
// testable natively.
package abi

// Version is the ABI string of sdk/ABI.md; it appears as "abi" in the input
// document.
const Version = "palyra.skills.abi.v1"

// Limits from sdk/ABI.md.
const (
	MaxInputBytes         = 1 << 20 // §3
	MaxOutputBytes        = 1 << 20 // §4
	MaxRequestBytes       = 1 << 20 // §5
	MaxResponseBytes      = 4 << 20 // §5
	MaxErrorMessage       = 4 << 10 // §4: message of a tool error document
	MaxErrorCode          = 64      // §4: code of a tool error document
	MaxLogRecord          = 4 << 10 // §6
	MaxCallsPerInvocation = 256     // §5, the default
)

// Negative results of host functions (sdk/ABI.md §7).
const (
	CodeNotGranted      int32 = -1
	CodeDenied          int32 = -2
	CodeInvalidRequest  int32 = -3
	CodeTooLarge        int32 = -4
	CodeUpstreamFailure int32 = -5
	CodeTimeout         int32 = -6
	CodeQuotaExceeded   int32 = -7
	CodeUnavailable     int32 = -8
	CodeInternal        int32 = -9
)

// Capability kinds, as passed to Host.GrantCount and Host.GrantHandle, with
// the handle base of each (sdk/ABI.md §2.1).
const (
	KindHTTP    = "http"
	KindSecret  = "secret"
	KindStorage = "storage"
	KindChannel = "channel"
)

// HandleBase returns the first handle of kind, or -1 for an unknown kind.
func HandleBase(kind string) int32 {
	switch kind {
	case KindHTTP:
		return 10000
	case KindSecret:
		return 20000
	case KindStorage:
		return 30000
	case KindChannel:
		return 40000
	}
	return -1
}

// KindOf returns the kind a handle belongs to by its range, or "" when the
// handle is in no range.
func KindOf(handle int32) string {
	switch {
	case handle >= 10000 && handle < 20000:
		return KindHTTP
	case handle >= 20000 && handle < 30000:
		return KindSecret
	case handle >= 30000 && handle < 40000:
		return KindStorage
	case handle >= 40000 && handle < 50000:
		return KindChannel
	}
	return ""
}

// Host is the set of host functions a guest calls. Each method mirrors one
// import of sdk/ABI.md §2 with Go slices in place of pointer/length pairs.
// A Host is used by one invocation at a time.
type Host interface {
	// InputLen is palyra:skills/host@1 input-len.
	InputLen() int32
	// InputRead is input-read: it copies the start of the input document into buf.
	InputRead(buf []byte) int32
	// OutputWrite is output-write: it appends p to the output buffer.
	OutputWrite(p []byte) int32
	// Log is log.
	Log(level int32, msg []byte)
	// CapabilityCall is capability-call.
	CapabilityCall(handle int32, req []byte) int32
	// ResponseLen is response-len.
	ResponseLen() int32
	// ResponseRead is response-read: it copies the start of the pending response into buf.
	ResponseRead(buf []byte) int32
	// GrantCount is palyra:plugins/host-capabilities@0.1.0 <kind>-count.
	GrantCount(kind string) int32
	// GrantHandle is <kind>-handle.
	GrantHandle(kind string, index int32) int32
}

// Serve runs mux (a *skill.Mux) for one invocation against h and returns the
// entrypoint's result. Package skill sets it in its init; package skilltest
// calls it. It exists so that the Host seam stays out of skill's public API.
var Serve func(mux any, h Host) int32
