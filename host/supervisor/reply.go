package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/textutil"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	"github.com/palyra-go/palyra/sdk/abi"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// ErrBadReply is a sidecar reply the protocol does not allow: an error or
// tool-error code that is not a stable snake_case code. Only a broken or
// compromised sidecar sends one; the call fails with this code.
var ErrBadReply = errcode.New("sidecar_bad_reply", "the sidecar's reply breaks the protocol")

// Bounds of what the supervisor keeps of a reply. A sidecar that follows
// the protocol never reaches them (its own limits are the ABI's); one that
// does not gets its reply cut or refused here, on the trusted side.
const (
	// MaxReplyCodeBytes bounds an error or tool-error code (sdk/abi
	// MaxErrorCodeBytes).
	MaxReplyCodeBytes = abi.MaxErrorCodeBytes
	// MaxReplyMessageBytes bounds the sidecar's error message and the
	// trap code; longer ones are cut on a rune boundary.
	MaxReplyMessageBytes = 16 << 10
	// MaxReplyLogs bounds the number of log records kept (the ABI's
	// MaxLogBytes of one-byte records); more are counted as dropped.
	MaxReplyLogs = abi.MaxLogBytes
)

var replyCodeRE = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// readReply is the supervisor's reading of an Invoke reply: resp and err
// as sidecarplugin.Client.Invoke returned them (err nil or the
// *sidecarplugin.Error of resp's code). Everything in resp is the
// sidecar's to choose, so it is checked here against the ABI's bounds: the
// output is at most abi.MaxOutputBytes of JSON (else output_too_large or
// invalid_output, and the output is dropped), codes are stable codes (else
// sidecar_bad_reply), texts are valid UTF-8 cut to their limits, and the
// logs keep the ABI's byte budget (the rest counts as dropped). The Result
// is nil when resp is.
func readReply(id string, resp *sidecarv1.InvokeResponse, err error) (*Result, error) {
	res := resultOf(id, resp)
	if res == nil {
		return nil, err
	}
	res.TrapCode = clip(res.TrapCode, MaxReplyCodeBytes)
	res.Logs, res.LogsDropped = boundLogs(res.Logs, res.LogsDropped)
	if te := res.ToolError; te != nil {
		te.Message = clip(te.Message, abi.MaxErrorMessageBytes)
		if !replyCodeRE.MatchString(te.Code) || len(te.Code) > abi.MaxErrorCodeBytes {
			bad := clip(te.Code, abi.MaxErrorCodeBytes)
			res.ToolError = nil
			return dropOutput(res), fmt.Errorf("%w: tool error code %q is not a stable code of at most %d bytes", ErrBadReply, bad, abi.MaxErrorCodeBytes)
		}
	}
	var se *sidecarplugin.Error
	if errors.As(err, &se) {
		se.Message = clip(se.Message, MaxReplyMessageBytes)
		if !replyCodeRE.MatchString(se.ErrorCode) || len(se.ErrorCode) > MaxReplyCodeBytes {
			return dropOutput(res), fmt.Errorf("%w: error code %q is not a stable code of at most %d bytes", ErrBadReply, clip(se.ErrorCode, MaxReplyCodeBytes), MaxReplyCodeBytes)
		}
	}
	switch n := len(res.Output); {
	case n > abi.MaxOutputBytes:
		return dropOutput(res), fmt.Errorf("%w: the sidecar replied with %d bytes of output, over the %d-byte limit (sdk/abi MaxOutputBytes)", errcode.ErrOutputTooLarge, n, abi.MaxOutputBytes)
	case n > 0 && !json.Valid(res.Output):
		return dropOutput(res), fmt.Errorf("%w: the sidecar replied with %d bytes of output that are not one JSON value", errcode.ErrInvalidOutput, n)
	}
	return res, err
}

func dropOutput(res *Result) *Result {
	res.Output = nil
	return res
}

// boundLogs keeps the records within the ABI's budget: each message valid
// UTF-8 of at most abi.MaxLogRecordBytes, abi.MaxLogBytes in all, at most
// MaxReplyLogs records; what is left out counts as dropped.
func boundLogs(logs []LogRecord, dropped uint32) ([]LogRecord, uint32) {
	total := 0
	for i := range logs {
		logs[i].Level = clip(logs[i].Level, MaxReplyCodeBytes)
		logs[i].Message = clip(logs[i].Message, abi.MaxLogRecordBytes)
		if total+len(logs[i].Message) > abi.MaxLogBytes || i >= MaxReplyLogs {
			left := uint64(len(logs) - i)
			if d := uint64(dropped) + left; d <= 1<<32-1 {
				dropped = uint32(d)
			} else {
				dropped = 1<<32 - 1
			}
			return logs[:i:i], dropped
		}
		total += len(logs[i].Message)
	}
	return logs, dropped
}

// clip returns s as valid UTF-8 (invalid bytes become U+FFFD) of at most
// limit bytes, cut on a rune boundary.
func clip(s string, limit int) string {
	if len(s) <= limit && utf8.ValidString(s) {
		return s
	}
	if len(s) > 4*limit {
		s = s[:4*limit] // ToValidUTF8 (in TruncateValid) at most triples the length
	}
	return textutil.TruncateValid(s, limit)
}
