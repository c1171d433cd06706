package supervisor

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/palyra-go/palyra/host/errcode"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	"github.com/palyra-go/palyra/sdk/abi"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

var recordSeeds = flag.Bool("record-seeds", false, "TestRealRepliesPass writes the replies it sees to testdata/fuzz/FuzzReadReply")

// replyOf rebuilds the InvokeResponse a real sidecar sent from what the
// supervisor made of it (every field resultOf reads, and the error's code
// and message).
func replyOf(res *Result, err error) *sidecarv1.InvokeResponse {
	r := &sidecarv1.InvokeResponse{
		Output: res.Output, ExitCode: res.ExitCode, TrapCode: res.TrapCode, LogsDropped: res.LogsDropped,
		Stats: &sidecarv1.Stats{
			FuelConsumed: res.Stats.FuelConsumed, InitFuelConsumed: res.Stats.InitFuelConsumed, PeakMemoryBytes: res.Stats.PeakMemoryBytes,
			WallTime: durationpb.New(res.Stats.WallTime), CapabilityCalls: res.Stats.CapabilityCalls, Prepared: res.Stats.Prepared,
		},
	}
	for _, l := range res.Logs {
		r.Logs = append(r.Logs, &sidecarv1.LogRecord{Level: sidecarv1.LogLevel(sidecarv1.LogLevel_value[logLevelPrefix+strings.ToUpper(l.Level)]), Message: l.Message})
	}
	if te := res.ToolError; te != nil {
		r.ToolError = &sidecarv1.ToolError{Code: te.Code, Message: te.Message}
	}
	var se *sidecarplugin.Error
	if errors.As(err, &se) {
		r.ErrorCode, r.ErrorMessage = se.ErrorCode, se.Message
	}
	return r
}

// errorOf is the error sidecarplugin.Client.Invoke returns with r.
func errorOf(r *sidecarv1.InvokeResponse) error {
	if r.GetErrorCode() == "" {
		return nil
	}
	return &sidecarplugin.Error{Op: "invoke", ErrorCode: r.GetErrorCode(), Message: r.GetErrorMessage()}
}

// TestRealRepliesPass runs real calls with every kind of outcome through
// a real sidecar and checks that readReply keeps each reply as it was: the
// bounds refuse nothing a sidecar following the protocol sends. With
// -record-seeds it writes the replies as FuzzReadReply's seed corpus.
func TestRealRepliesPass(t *testing.T) {
	s := newSup(t, Config{})
	ctx := ctxT(t)
	cases := []struct {
		name, module, code string
		fuel               uint64
	}{
		{"echo", "echo.wasm", "", 0},
		{"tool_error", "tool_error.wasm", "tool_error", 0},
		{"log_spammer", "log_spammer.wasm", "", 0},
		{"not_json", "not_json.wasm", "invalid_output", 0},
		{"output_flood", "output_flood.wasm", "output_too_large", 0},
		{"unreachable", "unreachable.wasm", "trap", 0},
		{"loop", "loop.wasm", "fuel_exhausted", 1_000_000},
	}
	for _, tc := range cases {
		tg := fixture(t, "test."+tc.name, tc.module)
		tg.Limits.Fuel = tc.fuel
		res, err := s.Call(ctx, tg, "test.run", []byte(`{"msg":"hi"}`), CallOptions{InvocationID: "0123456789abcdef0123456789abcdef"})
		if errcode.Of(err) != tc.code && !(tc.code == "" && err == nil) || res == nil {
			t.Fatalf("%s: %v (code %q), want %q with a result", tc.name, err, errcode.Of(err), tc.code)
		}
		reply := replyOf(res, err)
		got, gotErr := readReply(res.InvocationID, proto.CloneOf(reply), errorOf(reply))
		got.SkillID, got.Version, got.PID = res.SkillID, res.Version, res.PID
		if !reflect.DeepEqual(got, res) || errcode.Of(gotErr) != errcode.Of(err) {
			t.Errorf("%s: readReply changed a real reply:\n got %+v, %v\nwant %+v, %v", tc.name, got, gotErr, res, err)
		}
		if *recordSeeds {
			b, merr := proto.Marshal(reply)
			if merr != nil {
				t.Fatal(merr)
			}
			dir := filepath.Join("testdata", "fuzz", "FuzzReadReply")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.name), fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkReply checks readReply's promise on what it returned.
func checkReply(t *testing.T, res *Result, err error) {
	t.Helper()
	if res == nil {
		t.Fatalf("no result (err %v)", err)
	}
	if len(res.Output) > 0 && (len(res.Output) > abi.MaxOutputBytes || !json.Valid(res.Output)) {
		t.Fatalf("output of %d bytes kept (valid JSON %v)", len(res.Output), json.Valid(res.Output))
	}
	if _, merr := json.Marshal(res); merr != nil {
		t.Fatalf("the result does not encode: %v", merr)
	}
	text := func(what, s string, limit int) {
		if len(s) > limit || !utf8.ValidString(s) {
			t.Fatalf("%s of %d bytes (limit %d), valid UTF-8 %v", what, len(s), limit, utf8.ValidString(s))
		}
	}
	text("trap code", res.TrapCode, MaxReplyCodeBytes)
	total := 0
	for _, l := range res.Logs {
		text("log level", l.Level, MaxReplyCodeBytes)
		text("log record", l.Message, abi.MaxLogRecordBytes)
		total += len(l.Message)
	}
	if total > abi.MaxLogBytes || len(res.Logs) > MaxReplyLogs {
		t.Fatalf("%d log records of %d bytes kept", len(res.Logs), total)
	}
	if te := res.ToolError; te != nil {
		if !replyCodeRE.MatchString(te.Code) || len(te.Code) > abi.MaxErrorCodeBytes {
			t.Fatalf("tool error code %q kept", te.Code)
		}
		text("tool error message", te.Message, abi.MaxErrorMessageBytes)
	}
	if err != nil {
		if c := errcode.Of(err); !replyCodeRE.MatchString(c) || len(c) > MaxReplyCodeBytes {
			t.Fatalf("error code %q of %v", c, err)
		}
		// The message quotes the sidecar's (escaped: up to 4 bytes a byte
		// for the control characters %q spells \x..).
		if n := len(err.Error()); n > 4*MaxReplyMessageBytes+512 {
			t.Fatalf("error message of %d bytes", n)
		}
	}
}

// FuzzReadReply: an InvokeResponse in its wire form, as a compromised
// sidecar may send any (the seeds are the replies of real calls, written
// by TestRealRepliesPass -record-seeds). What gRPC's codec accepts, the
// supervisor turns into a typed error or a bounded Result.
func FuzzReadReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, wire []byte) {
		var r sidecarv1.InvokeResponse
		if proto.Unmarshal(wire, &r) != nil {
			return // gRPC's codec refuses it: a transport error
		}
		res, err := readReply("0123456789abcdef0123456789abcdef", &r, errorOf(&r))
		checkReply(t, res, err)
	})
}

// FuzzReadReplyFields sets the fields directly, invalid UTF-8 included
// (proto3's codec refuses it on the wire today; the supervisor does not
// count on it).
func FuzzReadReplyFields(f *testing.F) {
	f.Add("", "", []byte(`{"ok":true}`), "", "", "", "hello", uint16(1))
	f.Add("tool_error", "the tool reported an error", []byte(nil), "bad_thing", "it broke", "", "", uint16(0))
	f.Add("trap", "wasm trap: unreachable", []byte(nil), "", "", "unreachable", "\xff\xfe", uint16(3))
	f.Add("invalid_output", "output is not JSON", []byte("not json"), "", "", "", strings.Repeat("x", 5000), uint16(20))
	f.Add("Internal Error", "\x00\xff", []byte(`{"a":`), "Bad Code", "\xff", strings.Repeat("é", 100), "", uint16(2))
	f.Fuzz(func(t *testing.T, code, msg string, output []byte, teCode, teMsg, trap, logMsg string, nlogs uint16) {
		r := &sidecarv1.InvokeResponse{ErrorCode: code, ErrorMessage: msg, Output: output, TrapCode: trap}
		if teCode != "" || teMsg != "" {
			r.ToolError = &sidecarv1.ToolError{Code: teCode, Message: teMsg}
		}
		for i := range int(nlogs) {
			r.Logs = append(r.Logs, &sidecarv1.LogRecord{Level: sidecarv1.LogLevel(i % 9), Message: logMsg})
		}
		res, err := readReply("id", r, errorOf(r))
		checkReply(t, res, err)
		if code != "" && err == nil {
			t.Fatalf("error code %q lost", code)
		}
	})
}

// TestReadReplyRefuses: what readReply makes of replies only a broken or
// compromised sidecar sends (the regression seeds of FuzzReadReply are
// among them: before readReply, a failed call's non-JSON output reached
// the API, which could not encode it).
func TestReadReplyRefuses(t *testing.T) {
	many := make([]*sidecarv1.LogRecord, 100)
	for i := range many {
		many[i] = &sidecarv1.LogRecord{Level: sidecarv1.LogLevel_LOG_LEVEL_INFO, Message: strings.Repeat("x", 1000)}
	}
	tests := []struct {
		name     string
		reply    *sidecarv1.InvokeResponse
		code     string
		check    func(*Result) bool
		describe string
	}{
		{"non-JSON output with a tool error", &sidecarv1.InvokeResponse{ErrorCode: "tool_error", Output: []byte("not json"), ToolError: &sidecarv1.ToolError{Code: "bad_thing"}},
			"invalid_output", func(r *Result) bool { return r.Output == nil && r.ToolError.Code == "bad_thing" }, "output dropped, tool error kept"},
		{"non-JSON output on success", &sidecarv1.InvokeResponse{Output: []byte(`{"a":`)},
			"invalid_output", func(r *Result) bool { return r.Output == nil }, "output dropped"},
		{"output over the ABI limit", &sidecarv1.InvokeResponse{Output: []byte(`"` + strings.Repeat("a", abi.MaxOutputBytes) + `"`)},
			"output_too_large", func(r *Result) bool { return r.Output == nil }, "output dropped"},
		{"error code that is not a code", &sidecarv1.InvokeResponse{ErrorCode: "Internal Error", Output: []byte(`{}`)},
			"sidecar_bad_reply", func(r *Result) bool { return r.Output == nil }, "output dropped"},
		{"tool error code that is not a code", &sidecarv1.InvokeResponse{ErrorCode: "tool_error", ToolError: &sidecarv1.ToolError{Code: strings.Repeat("a", 65)}},
			"sidecar_bad_reply", func(r *Result) bool { return r.ToolError == nil }, "tool error dropped"},
		{"long tool error message", &sidecarv1.InvokeResponse{ErrorCode: "tool_error", ToolError: &sidecarv1.ToolError{Code: "bad", Message: strings.Repeat("é", abi.MaxErrorMessageBytes)}},
			"tool_error", func(r *Result) bool {
				return len(r.ToolError.Message) <= abi.MaxErrorMessageBytes && utf8.ValidString(r.ToolError.Message)
			}, "message cut on a rune boundary"},
		{"logs over the budget", &sidecarv1.InvokeResponse{Output: []byte(`{}`), Logs: many, LogsDropped: 3},
			"", func(r *Result) bool {
				return len(r.Logs) == abi.MaxLogBytes/1000 && r.LogsDropped == 3+100-abi.MaxLogBytes/1000
			}, "64 records kept, the rest counted dropped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := readReply("id", tt.reply, errorOf(tt.reply))
			if errcode.Of(err) != tt.code && !(tt.code == "" && err == nil) {
				t.Fatalf("error %v (code %q), want code %q", err, errcode.Of(err), tt.code)
			}
			if !tt.check(res) {
				t.Errorf("result %+v: want %s", res, tt.describe)
			}
		})
	}
}
