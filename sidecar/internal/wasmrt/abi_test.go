package wasmrt_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt/runtimetest"
)

func TestInputDocument(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "echo", wasmrt.ModuleConfig{})
	before := time.Now()
	res := mustInvoke(t, m, wasmrt.Invocation{
		ID:      "01JD3Y4M7ZQK6V2T8N5B1C9X0E",
		SkillID: "acme.echo_http",
		ToolID:  "acme.echo",
		Input:   json.RawMessage(`{"text": "hello"}`),
		Grants: wasmrt.Grants{
			HTTPHosts:       []string{" b.example.com", "a.example.com", "", "b.example.com"},
			SecretKeys:      []string{"skill:acme.echo_http/api_token"},
			StoragePrefixes: []string{"skills/cache"},
		},
		Timeout: 5 * time.Second,
	})
	var doc struct {
		ABI          string          `json:"abi"`
		InvocationID string          `json:"invocation_id"`
		SkillID      string          `json:"skill_id"`
		ToolID       string          `json:"tool_id"`
		Input        json.RawMessage `json:"input"`
		Grants       map[string][]map[string]any
		Deadline     int64 `json:"deadline_unix_ms"`
	}
	if err := json.Unmarshal(res.Output, &doc); err != nil {
		t.Fatalf("output %s: %v", res.Output, err)
	}
	if doc.ABI != wasmrt.ABIVersion || doc.InvocationID != "01JD3Y4M7ZQK6V2T8N5B1C9X0E" || doc.SkillID != "acme.echo_http" || doc.ToolID != "acme.echo" {
		t.Fatalf("doc = %s", res.Output)
	}
	if string(doc.Input) != `{"text":"hello"}` {
		t.Fatalf("input %s", doc.Input)
	}
	want := map[string][]map[string]any{
		"http":     {{"handle": 10000.0, "host": "a.example.com"}, {"handle": 10001.0, "host": "b.example.com"}},
		"secrets":  {{"handle": 20000.0, "key": "skill:acme.echo_http/api_token"}},
		"storage":  {{"handle": 30000.0, "prefix": "skills/cache"}},
		"channels": {},
	}
	if !reflect.DeepEqual(doc.Grants, want) {
		t.Fatalf("grants = %v, want %v", doc.Grants, want)
	}
	dl := time.UnixMilli(doc.Deadline)
	if dl.Before(before.Add(4*time.Second)) || dl.After(time.Now().Add(5*time.Second)) {
		t.Fatalf("deadline %v is not about 5 s from now", dl)
	}
	// No input is null.
	res = mustInvoke(t, m, wasmrt.Invocation{})
	if !strings.Contains(string(res.Output), `"input":null`) || !strings.Contains(string(res.Output), `"channels":[]`) {
		t.Fatalf("doc = %s", res.Output)
	}
}

func TestLogs(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "log_spammer", wasmrt.ModuleConfig{})
	res := mustInvoke(t, m, wasmrt.Invocation{})
	if string(res.Output) != "null" {
		t.Fatalf("output %s, want null", res.Output)
	}
	total := 0
	for _, r := range res.Logs {
		total += len(r.Message)
		if len(r.Message) > wasmrt.MaxLogRecordBytes || !utf8.ValidString(r.Message) {
			t.Fatalf("record of %d bytes, valid UTF-8 %v", len(r.Message), utf8.ValidString(r.Message))
		}
		if r.Level < wasmrt.LevelTrace || r.Level > wasmrt.LevelError {
			t.Fatalf("level %d not clamped", r.Level)
		}
	}
	if total > wasmrt.MaxLogBytes {
		t.Fatalf("%d log bytes, cap %d", total, wasmrt.MaxLogBytes)
	}
	if res.LogsDropped == 0 {
		t.Fatal("nothing dropped past the 64 KiB budget")
	}
	want := []wasmrt.LogRecord{
		{Level: wasmrt.LevelInfo, Source: wasmrt.SourceStdout, Message: "hello"},
		{Level: wasmrt.LevelInfo, Source: wasmrt.SourceStdout, Message: "world"},
		{Level: wasmrt.LevelWarn, Source: wasmrt.SourceStderr, Message: "hello"},
		{Level: wasmrt.LevelWarn, Source: wasmrt.SourceStderr, Message: "world"},
		{Level: wasmrt.LevelInfo, Source: wasmrt.SourceLog, Message: "\uFFFD bad utf8"},
		{Level: wasmrt.LevelError, Source: wasmrt.SourceLog, Message: strings.Repeat("a", 4096)},
		// the bad pointer record is dropped; then levels -1, 0, ... clamped
		{Level: wasmrt.LevelTrace, Source: wasmrt.SourceLog, Message: strings.Repeat("a", 1024)},
		{Level: wasmrt.LevelTrace, Source: wasmrt.SourceLog, Message: strings.Repeat("a", 1024)},
		{Level: wasmrt.LevelDebug, Source: wasmrt.SourceLog, Message: strings.Repeat("a", 1024)},
	}
	if len(res.Logs) < len(want) {
		t.Fatalf("%d records, want at least %d", len(res.Logs), len(want))
	}
	for i, w := range want {
		if g := res.Logs[i]; g != w {
			t.Fatalf("record %d = {%v %v %.40q (%d bytes)}, want {%v %v %.40q (%d bytes)}", i,
				g.Level, g.Source, g.Message, len(g.Message), w.Level, w.Source, w.Message, len(w.Message))
		}
	}
}

func TestCapabilityCall(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "capability", wasmrt.ModuleConfig{})
	storage := wasmrt.Grants{StoragePrefixes: []string{"skills/cache"}}

	t.Run("ok", func(t *testing.T) {
		b := &runtimetest.Broker{}
		b.Put("skills/cache", "k", []byte("v1"))
		res := mustInvoke(t, m, wasmrt.Invocation{ID: "inv1", SkillID: "acme.s", ToolID: "acme.t", Grants: storage, Broker: b})
		want := `{"found":true,"value_base64":"` + base64.StdEncoding.EncodeToString([]byte("v1")) + `"}`
		if string(res.Output) != want {
			t.Fatalf("output %s, want %s", res.Output, want)
		}
		calls := b.Calls()
		if len(calls) != 1 || res.Stats.CapabilityCalls != 1 {
			t.Fatalf("%d broker calls, %d reported", len(calls), res.Stats.CapabilityCalls)
		}
		c := calls[0]
		if c.Kind != wasmrt.KindStorage || c.Handle != 30000 || c.Grant != "skills/cache" || c.InvocationID != "inv1" ||
			c.SkillID != "acme.s" || c.ToolID != "acme.t" || string(c.Request) != `{"op":"get","key":"k"}` {
			t.Fatalf("request = %+v", c)
		}
	})
	errDoc := func(t *testing.T, res *wasmrt.Result) (string, string) {
		t.Helper()
		var doc struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(res.Output, &doc); err != nil {
			t.Fatalf("output %s: %v", res.Output, err)
		}
		return doc.Error.Code, doc.Error.Message
	}
	cases := []struct {
		name     string
		grants   wasmrt.Grants
		hook     func(context.Context, wasmrt.CapabilityRequest) ([]byte, error)
		noBroker bool
		code     string
	}{
		{name: "denied", grants: storage, code: "denied", hook: func(context.Context, wasmrt.CapabilityRequest) ([]byte, error) {
			return nil, &wasmrt.CapabilityError{Code: wasmrt.CodeDenied, Message: "policy says no"}
		}},
		{name: "not granted", code: "not_granted"},
		{name: "no broker", grants: storage, noBroker: true, code: "unavailable"},
		{name: "response too large", grants: storage, code: "too_large", hook: func(context.Context, wasmrt.CapabilityRequest) ([]byte, error) {
			return make([]byte, wasmrt.MaxResponseBytes+1), nil
		}},
		{name: "broker failure hides its cause", grants: storage, code: "internal", hook: func(context.Context, wasmrt.CapabilityRequest) ([]byte, error) {
			return nil, errors.New("secret detail: db password wrong")
		}},
		{name: "broker panic", grants: storage, code: "internal", hook: func(context.Context, wasmrt.CapabilityRequest) ([]byte, error) {
			panic("broker bug")
		}},
		{name: "broker timeout", grants: storage, code: "timeout", hook: func(ctx context.Context, _ wasmrt.CapabilityRequest) ([]byte, error) {
			if _, ok := ctx.Deadline(); !ok {
				return nil, errors.New("no deadline")
			}
			return nil, context.DeadlineExceeded
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &runtimetest.Broker{Hook: tc.hook}
			inv := wasmrt.Invocation{Grants: tc.grants, Broker: b}
			if tc.noBroker {
				inv.Broker = nil
			}
			res := mustInvoke(t, m, inv)
			code, msg := errDoc(t, res)
			if code != tc.code {
				t.Fatalf("code %q (%q), want %q", code, msg, tc.code)
			}
			if strings.Contains(msg, "password") {
				t.Fatalf("broker's internal cause leaked to the guest: %q", msg)
			}
		})
	}
	t.Run("broker slower than the call deadline", func(t *testing.T) {
		b := &runtimetest.Broker{Hook: func(ctx context.Context, _ wasmrt.CapabilityRequest) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}
		_, err := invoke(t, m, wasmrt.Invocation{Grants: storage, Broker: b, Timeout: 30 * time.Millisecond})
		if !errors.Is(err, wasmrt.ErrTimeout) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestHostCallFlood(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "hostcall_flood", wasmrt.ModuleConfig{})
	ok := func(context.Context, wasmrt.CapabilityRequest) ([]byte, error) { return []byte(`{}`), nil }
	for _, tt := range []struct {
		cap  int
		want string
	}{{0, "744"}, {10, "990"}} {
		b := &runtimetest.Broker{Hook: ok}
		res := mustInvoke(t, m, wasmrt.Invocation{
			Grants: wasmrt.Grants{HTTPHosts: []string{"api.example.com"}},
			Broker: b, Limits: wasmrt.Limits{MaxCapabilityCalls: tt.cap},
		})
		if string(res.Output) != tt.want {
			t.Fatalf("cap %d: output %s, want %s", tt.cap, res.Output, tt.want)
		}
		wantCalls := wasmrt.DefaultMaxCapabilityCalls
		if tt.cap != 0 {
			wantCalls = tt.cap
		}
		if n := len(b.Calls()); n != wantCalls {
			t.Fatalf("broker got %d calls, want %d", n, wantCalls)
		}
		if res.Stats.CapabilityCalls != 1000 {
			t.Fatalf("reported %d capability calls, want 1000", res.Stats.CapabilityCalls)
		}
	}
}

func TestUngrantedHandle(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "ungranted", wasmrt.ModuleConfig{})
	b := &runtimetest.Broker{}
	res := mustInvoke(t, m, wasmrt.Invocation{Broker: b, Grants: wasmrt.Grants{StoragePrefixes: []string{"x"}}})
	var doc struct {
		Error struct{ Code string } `json:"error"`
	}
	if err := json.Unmarshal(res.Output, &doc); err != nil || doc.Error.Code != "not_granted" {
		t.Fatalf("output %s", res.Output)
	}
	if len(b.Calls()) != 0 {
		t.Fatal("the broker saw a request for an ungranted handle")
	}
}

func TestBadPointers(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "bad_pointers", wasmrt.ModuleConfig{})
	res, err := invoke(t, m, wasmrt.Invocation{Grants: wasmrt.Grants{HTTPHosts: []string{"h"}}, Broker: &runtimetest.Broker{}})
	if err != nil {
		t.Fatalf("err = %v (a ToolError's exit code names the failed check)", err)
	}
	if string(res.Output) != "true" {
		t.Fatalf("output %s", res.Output)
	}
	if res.LogsDropped != 2 {
		t.Fatalf("%d records dropped, want the 2 with bad pointers", res.LogsDropped)
	}
}

func TestWASISubset(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m := loadFixture(t, e, "wasi_probe", wasmrt.ModuleConfig{})
	if got := exitCodeOf(t, mustInvoke(t, m, wasmrt.Invocation{})); got != 0 {
		t.Fatalf("WASI check %d failed", got)
	}
}

func TestProcExit(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	m0 := loadFixture(t, e, "proc_exit", wasmrt.ModuleConfig{Entrypoint: "exit0"})
	res := mustInvoke(t, m0, wasmrt.Invocation{})
	if string(res.Output) != `"bye"` || res.ExitCode != 0 {
		t.Fatalf("output %s exit %d", res.Output, res.ExitCode)
	}
	m5 := loadFixture(t, e, "proc_exit", wasmrt.ModuleConfig{Entrypoint: "exit5"})
	res, err := invoke(t, m5, wasmrt.Invocation{})
	var te *wasmrt.ToolError
	if !errors.As(err, &te) || te.ExitCode != 5 || te.Code != "exited" || te.Message != "five" || res.ExitCode != 5 {
		t.Fatalf("err = %v", err)
	}
}

func TestReactorInitialize(t *testing.T) {
	e := newEngine(t, wasmrt.Config{})
	for _, prepared := range []int{0, 2} {
		m := loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: prepared})
		for i := range 5 {
			res, err := invoke(t, m, wasmrt.Invocation{})
			if err != nil {
				t.Fatalf("prepared=%d call %d: %v", prepared, i, err)
			}
			if string(res.Output) != "true" {
				t.Fatalf("output %s", res.Output)
			}
			if len(res.Logs) != 1 || res.Logs[0].Message != "init" {
				t.Fatalf("logs %+v, want the one record of _initialize", res.Logs)
			}
			if res.Stats.InitFuelConsumed == 0 {
				t.Fatal("no init fuel reported")
			}
		}
	}
}
