package skill_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

func echo(_ *skill.Context, in echoIn) (echoOut, error) { return echoOut{Echo: in.Text}, nil }

func TestDispatch(t *testing.T) {
	mux := skill.NewMux()
	mux.Handle("acme.echo", skill.Typed(echo))
	mux.Handle("acme.raw", func(_ *skill.Context, in json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"raw":` + string(in) + `}`), nil
	})
	mux.Handle("acme.empty", func(*skill.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil })
	mux.Handle("acme.html", skill.Typed(func(_ *skill.Context, in echoIn) (map[string]string, error) {
		return map[string]string{"v": in.Text}, nil
	}))
	mux.Handle("acme.notjson", func(*skill.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{nope`), nil
	})
	mux.Handle("acme.badout", skill.Typed(func(*skill.Context, struct{}) (func(), error) { return func() {}, nil }))

	tests := []struct {
		name      string
		call      skilltest.Call
		status    int32
		output    string // exact output when status is 0
		errorCode string // when status is not 0
		errorMsg  string // substring of the message
	}{
		{name: "typed", call: skilltest.Call{ToolID: "acme.echo", Input: map[string]string{"text": "hello"}}, output: `{"echo":"hello"}`},
		{name: "typed null input", call: skilltest.Call{ToolID: "acme.echo"}, output: `{"echo":""}`},
		{name: "typed extra fields ignored", call: skilltest.Call{ToolID: "acme.echo", Input: json.RawMessage(`{"text":"a","x":1}`)}, output: `{"echo":"a"}`},
		{name: "raw", call: skilltest.Call{ToolID: "acme.raw", Input: json.RawMessage(`[1,2]`)}, output: `{"raw":[1,2]}`},
		{name: "empty output is null", call: skilltest.Call{ToolID: "acme.empty"}, output: ``},
		{name: "no html escaping", call: skilltest.Call{ToolID: "acme.html", Input: map[string]string{"text": "<a&b>"}}, output: `{"v":"<a&b>"}`},
		{name: "unknown tool", call: skilltest.Call{ToolID: "acme.nope"}, status: 1, errorCode: "unknown_tool", errorMsg: `"acme.nope"`},
		{name: "bad input type", call: skilltest.Call{ToolID: "acme.echo", Input: map[string]int{"text": 3}}, status: 1, errorCode: "invalid_input", errorMsg: "acme.echo"},
		{name: "output not json", call: skilltest.Call{ToolID: "acme.notjson"}, status: 1, errorCode: "invalid_output"},
		{name: "output not encodable", call: skilltest.Call{ToolID: "acme.badout"}, status: 1, errorCode: "invalid_output"},
		{name: "output over limit", call: skilltest.Call{ToolID: "acme.echo", Input: map[string]string{"text": strings.Repeat("x", 100)}, MaxOutputBytes: 64}, status: 1, errorCode: "output_too_large"},
		{name: "input document not json", call: skilltest.Call{InputDocument: []byte(`{`)}, status: 1, errorCode: "abi_error"},
		{name: "input document other abi", call: skilltest.Call{InputDocument: []byte(`{"abi":"palyra.skills.abi.v2","tool_id":"acme.echo"}`)}, status: 1, errorCode: "abi_error", errorMsg: "v2"},
		{name: "input document without abi", call: skilltest.Call{InputDocument: []byte(`{"tool_id":"acme.echo","input":{"text":"x"},"future":1}`)}, output: `{"echo":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := skilltest.Run(mux, tt.call)
			if res.Status != tt.status {
				t.Fatalf("status = %d, want %d (output %s)", res.Status, tt.status, res.Output)
			}
			if tt.status == 0 {
				if string(res.Output) != tt.output {
					t.Fatalf("output = %s, want %s", res.Output, tt.output)
				}
				return
			}
			if got := res.ErrorCode(); got != tt.errorCode {
				t.Fatalf("error code = %q, want %q (output %s)", got, tt.errorCode, res.Output)
			}
			if !strings.Contains(res.ErrorMessage(), tt.errorMsg) {
				t.Fatalf("error message %q does not contain %q", res.ErrorMessage(), tt.errorMsg)
			}
		})
	}
}

func TestErrorDocuments(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	tests := []struct {
		name     string
		err      error
		panicVal any
		code     string
		message  string
	}{
		{name: "NewError", err: skill.NewError("rate_limited", "slow down"), code: "rate_limited", message: "slow down"},
		{name: "Errorf", err: skill.Errorf("not_found", "item %d missing", 7), code: "not_found", message: "item 7 missing"},
		{name: "wrapped Error", err: fmt.Errorf("outer: %w", skill.NewError("inner_code", "inner")), code: "inner_code", message: "inner"},
		{name: "plain error", err: errors.New("boom"), code: "tool_error", message: "boom"},
		{name: "capability error", err: &skill.CapabilityError{Kind: "http", Op: "GET", Code: -2}, code: "capability_denied", message: "skill: http GET failed: denied"},
		{name: "wrapped capability error", err: fmt.Errorf("fetch: %w", &skill.CapabilityError{Kind: "storage", Op: "put", Code: -7}), code: "capability_quota_exceeded", message: "fetch: skill: storage put failed: quota_exceeded"},
		{name: "unknown capability code", err: &skill.CapabilityError{Code: -42}, code: "capability_error", message: "skill: capability failed: error_-42"},
		{name: "code not snake_case", err: skill.NewError("Bad-Code", "m"), code: "tool_error", message: "Bad-Code: m"},
		{name: "code too long", err: skill.NewError(strings.Repeat("a", 65), "m"), code: "tool_error", message: strings.Repeat("a", 65) + ": m"},
		{name: "code 64 bytes", err: skill.NewError(strings.Repeat("a", 64), "m"), code: strings.Repeat("a", 64), message: "m"},
		{name: "message cut to 4 KiB on a rune boundary", err: skill.NewError("long", long), code: "long", message: long[:4096]},
		{name: "panic", panicVal: "kaboom", code: "panic", message: "handler panicked: kaboom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := skill.NewMux()
			mux.Handle("acme.fail", func(*skill.Context, json.RawMessage) (json.RawMessage, error) {
				if tt.panicVal != nil {
					panic(tt.panicVal)
				}
				return json.RawMessage(`{"ignored":true}`), tt.err
			})
			res := skilltest.Run(mux, skilltest.Call{ToolID: "acme.fail"})
			if res.Status == 0 {
				t.Fatalf("status 0, want non-zero")
			}
			var doc map[string]string
			if err := res.Decode(&doc); err != nil {
				t.Fatalf("output %s is not an error document: %v", res.Output, err)
			}
			if len(doc) != 2 || doc["code"] != tt.code || doc["message"] != tt.message {
				t.Fatalf("error document = %s, want code %q message %.60q", res.Output, tt.code, tt.message)
			}
		})
	}
	if n := len(long[:4096]); n != 4096 {
		t.Fatalf("test setup: %d", n)
	}
}

func TestErrorf(t *testing.T) {
	err := skill.Errorf("io", "read config: %w", fs.ErrNotExist)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("Errorf does not wrap its %w operand")
	}
	if err.Error() != "io: read config: file does not exist" {
		t.Fatalf("Error() = %q", err.Error())
	}
	if errors.Unwrap(skill.NewError("x", "y")) != nil {
		t.Fatal("NewError wraps something")
	}
}

func TestMuxRegistration(t *testing.T) {
	h := func(*skill.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }
	tests := []struct {
		name string
		reg  func(m *skill.Mux)
	}{
		{"empty id", func(m *skill.Mux) { m.Handle("", h) }},
		{"nil handler", func(m *skill.Mux) { m.Handle("acme.x", nil) }},
		{"duplicate", func(m *skill.Mux) { m.Handle("acme.x", h); m.Handle("acme.x", h) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tt.reg(skill.NewMux())
		})
	}
	m := skill.NewMux()
	m.Handle("b.y", h)
	m.Handle("a.x", h)
	if got := strings.Join(m.ToolIDs(), ","); got != "a.x,b.y" {
		t.Fatalf("ToolIDs = %s", got)
	}
}

func TestDefaultMux(t *testing.T) {
	skill.Handle("test.default_typed", echo)
	skill.HandleRaw("test.default_raw", func(*skill.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`1`), nil
	})
	res := skilltest.Run(skill.DefaultMux, skilltest.Call{ToolID: "test.default_typed", Input: echoIn{"x"}})
	if res.Status != 0 || string(res.Output) != `{"echo":"x"}` {
		t.Fatalf("typed: %d %s", res.Status, res.Output)
	}
	res = skilltest.Run(skill.DefaultMux, skilltest.Call{ToolID: "test.default_raw"})
	if res.Status != 0 || string(res.Output) != `1` {
		t.Fatalf("raw: %d %s", res.Status, res.Output)
	}
}

func TestContext(t *testing.T) {
	deadline := time.UnixMilli(1732300000000)
	var got struct {
		tool, skill, inv string
		deadline         time.Time
		grants           skill.Grants
		handles          map[skill.Kind][]int32
	}
	mux := skill.NewMux()
	mux.Handle("acme.ctx", func(ctx *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		got.tool, got.skill, got.inv, got.deadline = ctx.ToolID(), ctx.SkillID(), ctx.InvocationID(), ctx.Deadline()
		got.grants = ctx.Grants()
		got.handles = map[skill.Kind][]int32{}
		for _, k := range []skill.Kind{skill.KindHTTP, skill.KindSecret, skill.KindStorage, skill.KindChannel} {
			got.handles[k] = ctx.HostHandles(k)
		}
		return nil, nil
	})
	res := skilltest.Run(mux, skilltest.Call{
		ToolID: "acme.ctx", SkillID: "acme.skill", InvocationID: "01JD3Y4M7ZQK6V2T8N5B1C9X0E", Deadline: deadline,
		Grants: skilltest.Grants{
			HTTP:     []string{"b.example.com", " a.example.com ", "", "a.example.com"},
			Secrets:  []string{"skill:acme.skill/api_token"},
			Storage:  []string{"counters"},
			Channels: []string{"ops", "alerts"},
		},
	})
	if res.Status != 0 {
		t.Fatalf("status %d: %s", res.Status, res.Output)
	}
	if got.tool != "acme.ctx" || got.skill != "acme.skill" || got.inv != "01JD3Y4M7ZQK6V2T8N5B1C9X0E" || !got.deadline.Equal(deadline) {
		t.Fatalf("identity = %+v", got)
	}
	want := skill.Grants{
		HTTP:     []skill.HTTPGrant{{Handle: 10000, Host: "a.example.com"}, {Handle: 10001, Host: "b.example.com"}},
		Secrets:  []skill.SecretGrant{{Handle: 20000, Key: "skill:acme.skill/api_token"}},
		Storage:  []skill.StorageGrant{{Handle: 30000, Prefix: "counters"}},
		Channels: []skill.ChannelGrant{{Handle: 40000, Channel: "alerts"}, {Handle: 40001, Channel: "ops"}},
	}
	if fmt.Sprint(got.grants) != fmt.Sprint(want) {
		t.Fatalf("grants = %+v, want %+v", got.grants, want)
	}
	wantHandles := map[skill.Kind][]int32{
		skill.KindHTTP: {10000, 10001}, skill.KindSecret: {20000}, skill.KindStorage: {30000}, skill.KindChannel: {40000, 40001},
	}
	if fmt.Sprint(got.handles) != fmt.Sprint(wantHandles) {
		t.Fatalf("host handles = %v, want %v", got.handles, wantHandles)
	}

	// No deadline in the document: the zero Time.
	res = skilltest.Run(mux, skilltest.Call{ToolID: "acme.ctx"})
	if res.Status != 0 || !got.deadline.IsZero() || len(got.handles[skill.KindHTTP]) != 0 {
		t.Fatalf("without deadline: %d %v %v", res.Status, got.deadline, got.handles)
	}
}

func TestLog(t *testing.T) {
	mux := skill.NewMux()
	mux.Handle("acme.log", func(ctx *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		ctx.Log(skill.LevelInfo, "hello")
		ctx.Logf(skill.LevelError, "n=%d", 3)
		ctx.Log(skill.LevelTrace, strings.Repeat("x", 5000))
		ctx.Log(skill.LevelDebug, "")
		return nil, nil
	})
	res := skilltest.Run(mux, skilltest.Call{ToolID: "acme.log"})
	want := []skilltest.Log{{Level: 2, Message: "hello"}, {Level: 4, Message: "n=3"}, {Level: 0, Message: strings.Repeat("x", 4096)}, {Level: 1, Message: ""}}
	if fmt.Sprint(res.Logs) != fmt.Sprint(want) {
		t.Fatalf("logs = %.200v", res.Logs)
	}
}

func TestConstantsMatchABI(t *testing.T) {
	if skill.ABIVersion != abi.Version {
		t.Errorf("ABIVersion %q, abi.Version %q", skill.ABIVersion, abi.Version)
	}
	for k, want := range map[skill.Kind]string{skill.KindHTTP: abi.KindHTTP, skill.KindSecret: abi.KindSecret, skill.KindStorage: abi.KindStorage, skill.KindChannel: abi.KindChannel} {
		if string(k) != want {
			t.Errorf("kind %q, abi %q", k, want)
		}
	}
}
