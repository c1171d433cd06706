package wasmrt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/palyra-go/palyra/internal/textutil"
	"regexp"
)

// This file holds the host-side parsing of guest-supplied JSON. Each
// function bounds its input before parsing, never panics, and copies what
// it keeps (guest memory is only borrowed). They are fuzzed directly.

// parseCapabilityRequest checks a capability request document: at most
// MaxRequestBytes, well-formed JSON, an object. It returns a copy, or the
// ABI code and a reason.
func parseCapabilityRequest(raw []byte) (json.RawMessage, ABICode, string) {
	if len(raw) > MaxRequestBytes {
		return nil, CodeTooLarge, fmt.Sprintf("request of %d bytes is over the %d-byte limit", len(raw), MaxRequestBytes)
	}
	if !json.Valid(raw) {
		return nil, CodeInvalidRequest, "request is not well-formed JSON"
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, CodeInvalidRequest, "request is not a JSON object"
	}
	return bytes.Clone(raw), 0, ""
}

// errorDocument is the pending response after a failed capability-call:
// {"error":{"code":"...","message":"..."}}.
func errorDocument(code ABICode, msg string) []byte {
	var doc struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	doc.Error.Code = code.String()
	doc.Error.Message = textutil.TruncateValid(msg, maxCapabilityErrorMessage)
	b, err := json.Marshal(doc)
	if err != nil { // cannot happen: two strings
		return []byte(`{"error":{"code":"internal","message":""}}`)
	}
	return b
}

var toolCodeRE = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// parseToolError reads the output buffer of a failed call (sdk/ABI.md §4).
// A JSON object with a snake_case "code" of at most 64 bytes gives that code
// and its "message" (a string, cut to 4 KiB); anything else gives the code
// "tool_error" and the buffer itself, cut to 4 KiB, as the message.
func parseToolError(buf []byte) (code, msg string) {
	if t := bytes.TrimLeft(buf, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var doc struct {
			Code    *string `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(buf, &doc) == nil && doc.Code != nil &&
			len(*doc.Code) <= maxToolErrorCode && toolCodeRE.MatchString(*doc.Code) {
			m := ""
			if doc.Message != nil {
				m = *doc.Message
			}
			return *doc.Code, textutil.TruncateValid(m, maxToolErrorMessage)
		}
	}
	if len(buf) > maxToolErrorMessage {
		buf = buf[:maxToolErrorMessage]
	}
	return "tool_error", textutil.TruncateValid(string(buf), maxToolErrorMessage)
}

// parseOutput reads the output buffer of a successful call (sdk/ABI.md §4):
// an empty buffer is the JSON null; anything else must be one JSON value.
// It returns a copy.
func parseOutput(buf []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(buf)) == 0 {
		return json.RawMessage("null"), nil
	}
	if len(buf) > MaxOutputBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrOutputTooLarge, len(buf), MaxOutputBytes)
	}
	if !json.Valid(buf) {
		return nil, fmt.Errorf("%w: output is not well-formed JSON", ErrInvalidOutput)
	}
	return json.RawMessage(bytes.Clone(buf)), nil
}
