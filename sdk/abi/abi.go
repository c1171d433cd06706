// Package abi holds the constants of the Palyra skills ABI v1 (sdk/ABI.md)
// that both sides of the boundary use: the host (sidecar/internal/wasmrt), the
// supervisor (sidecar/sidecarplugin, host/audit) and the Go guest SDK. It is pure
// Go with no dependencies, so every one of them — the guest compiled for
// wasip1 included — imports the same values instead of keeping a copy.
package abi

import "strconv"

// Version is the ABI string; it appears as "abi" in the input document.
const Version = "palyra.skills.abi.v1"

// Import module names (sdk/ABI.md §2).
const (
	ModuleCapabilities = "palyra:plugins/host-capabilities@0.1.0"
	ModuleHost         = "palyra:skills/host@1"
	ModuleWASI         = "wasi_snapshot_preview1"
)

// Limits of sdk/ABI.md.
const (
	MaxInputBytes          = 1 << 20   // §3: the input document
	MaxConfigBytes         = 256 << 10 // §3.1: the config document
	MaxOutputBytes         = 1 << 20   // §4: the output buffer
	MaxRequestBytes        = 1 << 20   // §5: one capability request
	MaxResponseBytes       = 4 << 20   // §5: one capability response
	MaxErrorMessageBytes   = 4 << 10   // §4: message of a tool error document
	MaxErrorCodeBytes      = 64        // §4: code of a tool error document
	MaxLogRecordBytes      = 4 << 10   // §6: one log record
	MaxLogBytes            = 64 << 10  // §6: all logs of one call
	DefaultCapabilityCalls = 256       // §5: capability calls per invocation
)

// Handle bases (sdk/ABI.md §2.1): a grant's handle is its base plus its
// position in the canonical grant list.
const (
	HTTPHandleBase    = 10000
	SecretHandleBase  = 20000
	StorageHandleBase = 30000
	ChannelHandleBase = 40000
)

// Code is a negative result of a host function (sdk/ABI.md §7).
type Code int32

// The host-function error codes of sdk/ABI.md §7.
const (
	CodeNotGranted      Code = -1
	CodeDenied          Code = -2
	CodeInvalidRequest  Code = -3
	CodeTooLarge        Code = -4
	CodeUpstreamFailure Code = -5
	CodeTimeout         Code = -6
	CodeQuotaExceeded   Code = -7
	CodeUnavailable     Code = -8
	CodeInternal        Code = -9
)

var codeNames = map[Code]string{
	CodeNotGranted:      "not_granted",
	CodeDenied:          "denied",
	CodeInvalidRequest:  "invalid_request",
	CodeTooLarge:        "too_large",
	CodeUpstreamFailure: "upstream_failure",
	CodeTimeout:         "timeout",
	CodeQuotaExceeded:   "quota_exceeded",
	CodeUnavailable:     "unavailable",
	CodeInternal:        "internal",
}

// String returns the code's ABI name ("denied", ...), or the number for an
// unknown code.
func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return strconv.Itoa(int(c))
}

// Valid reports whether c is one of the codes of sdk/ABI.md §7.
func (c Code) Valid() bool {
	_, ok := codeNames[c]
	return ok
}

// CodeByName returns the code with the given ABI name.
func CodeByName(name string) (Code, bool) {
	for c, n := range codeNames {
		if n == name {
			return c, true
		}
	}
	return 0, false
}
