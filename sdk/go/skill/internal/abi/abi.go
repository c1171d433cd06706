// Package abi is the seam between package skill and the host functions of
// the Palyra skills ABI v1 (sdk/ABI.md). Package skill talks to the host only
// through Host; the wasip1 build binds it to the real imports and package
// skilltest binds it to an in-memory fake, so everything above this seam is
// testable natively.
package abi

import shared "github.com/palyra-go/palyra/sdk/abi"

// Version is the ABI string of sdk/ABI.md; it appears as "abi" in the input
// document.
const Version = shared.Version

// Limits from sdk/ABI.md (package sdk/abi holds them for host and guest).
const (
	MaxInputBytes         = shared.MaxInputBytes
	MaxOutputBytes        = shared.MaxOutputBytes
	MaxRequestBytes       = shared.MaxRequestBytes
	MaxResponseBytes      = shared.MaxResponseBytes
	MaxErrorMessage       = shared.MaxErrorMessageBytes
	MaxErrorCode          = shared.MaxErrorCodeBytes
	MaxLogRecord          = shared.MaxLogRecordBytes
	MaxCallsPerInvocation = shared.DefaultCapabilityCalls
	MaxConfigBytes        = shared.MaxConfigBytes
)

// Negative results of host functions (sdk/ABI.md §7), as the int32 the
// imports return.
const (
	CodeNotGranted      = int32(shared.CodeNotGranted)
	CodeDenied          = int32(shared.CodeDenied)
	CodeInvalidRequest  = int32(shared.CodeInvalidRequest)
	CodeTooLarge        = int32(shared.CodeTooLarge)
	CodeUpstreamFailure = int32(shared.CodeUpstreamFailure)
	CodeTimeout         = int32(shared.CodeTimeout)
	CodeQuotaExceeded   = int32(shared.CodeQuotaExceeded)
	CodeUnavailable     = int32(shared.CodeUnavailable)
	CodeInternal        = int32(shared.CodeInternal)
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
		return shared.HTTPHandleBase
	case KindSecret:
		return shared.SecretHandleBase
	case KindStorage:
		return shared.StorageHandleBase
	case KindChannel:
		return shared.ChannelHandleBase
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
	// ConfigLen is config-len.
	ConfigLen() int32
	// ConfigRead is config-read: it copies the start of the config document into buf.
	ConfigRead(buf []byte) int32
	// GrantCount is palyra:plugins/host-capabilities@0.1.0 <kind>-count.
	GrantCount(kind string) int32
	// GrantHandle is <kind>-handle.
	GrantHandle(kind string, index int32) int32
}

// Serve runs mux (a *skill.Mux) for one invocation against h and returns the
// entrypoint's result. Package skill sets it in its init; package skilltest
// calls it. It exists so that the Host seam stays out of skill's public API.
var Serve func(mux any, h Host) int32
