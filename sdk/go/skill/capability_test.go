package skill_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

var testGrants = skilltest.Grants{
	HTTP:     []string{"api.example.com", "*.cdn.example.com", "127.0.0.1"},
	Secrets:  []string{"skill:acme.skill/api_token", "skill:acme.skill/other", "global/other"},
	Storage:  []string{"counters", "cache"},
	Channels: []string{"ops-alerts"},
}

// Handles of testGrants after canonicalization:
//   http:    *.cdn.example.com=10000, 127.0.0.1=10001, api.example.com=10002 (byte order)
//   secrets: global/other=20000, skill:acme.skill/api_token=20001, skill:acme.skill/other=20002
//   storage: cache=30000, counters=30001
//   channel: ops-alerts=40000

// runProbe runs fn as a handler with testGrants and backend, and returns
// the error fn returned and the result.
func runProbe(t *testing.T, backend skilltest.Backend, fn func(ctx *skill.Context) error) (error, *skilltest.Result) {
	t.Helper()
	var got error
	mux := skill.NewMux()
	mux.Handle("acme.probe", func(ctx *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		got = fn(ctx)
		return nil, nil
	})
	res := skilltest.Run(mux, skilltest.Call{ToolID: "acme.probe", Grants: testGrants, Backend: backend})
	if res.Status != 0 {
		t.Fatalf("probe status %d: %s", res.Status, res.Output)
	}
	return got, res
}

// TestRequestEncoding checks every request document byte for byte against
// sdk/ABI.md §5, and the handle each one goes to.
func TestRequestEncoding(t *testing.T) {
	tests := []struct {
		name   string
		op     func(ctx *skill.Context) error
		handle int32
		want   string
	}{
		{
			name: "http get",
			op: func(ctx *skill.Context) error {
				_, err := ctx.HTTP().Get("https://api.example.com/v1/items?q=1")
				return err
			},
			handle: 10002,
			want:   `{"method":"GET","url":"https://api.example.com/v1/items?q=1"}`,
		},
		{
			name: "http get with secret header by bare key name",
			op: func(ctx *skill.Context) error {
				_, err := ctx.HTTP().Get("https://api.example.com/x", skill.SecretHeader{Name: "authorization", Secret: "api_token", Format: "Bearer {secret}"})
				return err
			},
			handle: 10002,
			want:   `{"method":"GET","url":"https://api.example.com/x","secret_headers":[{"name":"authorization","secret_handle":20001,"format":"Bearer {secret}"}]}`,
		},
		{
			name: "http secret header by full key and by handle, default format",
			op: func(ctx *skill.Context) error {
				_, err := ctx.HTTP().Get("https://api.example.com/x",
					skill.SecretHeader{Name: "x-a", Secret: "skill:acme.skill/other"},
					skill.SecretHeader{Name: "x-b", Secret: "20000"})
				return err
			},
			handle: 10002,
			want:   `{"method":"GET","url":"https://api.example.com/x","secret_headers":[{"name":"x-a","secret_handle":20002},{"name":"x-b","secret_handle":20000}]}`,
		},
		{
			name: "http post with headers, text body and timeout",
			op: func(ctx *skill.Context) error {
				_, err := ctx.HTTP().Do(&skill.HTTPRequest{
					Method: "post", URL: "https://API.example.com./v1", Header: map[string]string{"content-type": "application/json", "accept": "application/json"},
					Body: []byte(`{"a":"<b>"}`), Timeout: 1500*time.Millisecond + 1,
				})
				return err
			},
			handle: 10002,
			want:   `{"method":"POST","url":"https://API.example.com./v1","headers":{"accept":"application/json","content-type":"application/json"},"body":"{\"a\":\"<b>\"}","timeout_ms":1501}`,
		},
		{
			name: "http binary body",
			op: func(ctx *skill.Context) error {
				_, err := ctx.HTTP().Do(&skill.HTTPRequest{Method: "PUT", URL: "http://127.0.0.1:8080/up", Body: []byte{0xff, 0x00, 0x01}})
				return err
			},
			handle: 10001,
			want:   `{"method":"PUT","url":"http://127.0.0.1:8080/up","body_base64":"/wAB"}`,
		},
		{
			name: "http wildcard grant",
			op: func(ctx *skill.Context) error {
				_, err := ctx.HTTP().Get("https://img.eu.cdn.example.com/a.png")
				return err
			},
			handle: 10000,
			want:   `{"method":"GET","url":"https://img.eu.cdn.example.com/a.png"}`,
		},
		{
			name:   "storage get",
			op:     func(ctx *skill.Context) error { _, _, err := ctx.Storage("counters").Get("hits/a"); return err },
			handle: 30001,
			want:   `{"op":"get","key":"hits/a"}`,
		},
		{
			name:   "storage put",
			op:     func(ctx *skill.Context) error { return ctx.Storage("cache").Put("k", []byte("v1")) },
			handle: 30000,
			want:   `{"op":"put","key":"k","value_base64":"djE="}`,
		},
		{
			name:   "storage put empty value",
			op:     func(ctx *skill.Context) error { return ctx.Storage("cache").Put("k", nil) },
			handle: 30000,
			want:   `{"op":"put","key":"k","value_base64":""}`,
		},
		{
			name: "storage cas from absent",
			op: func(ctx *skill.Context) error {
				_, _, err := ctx.Storage("cache").CompareAndSwap("k", nil, []byte("v1"))
				return err
			},
			handle: 30000,
			want:   `{"op":"cas","key":"k","value_base64":"djE="}`,
		},
		{
			name: "storage cas from a value",
			op: func(ctx *skill.Context) error {
				_, _, err := ctx.Storage("cache").CompareAndSwap("k", []byte("v1"), []byte("v2"))
				return err
			},
			handle: 30000,
			want:   `{"op":"cas","key":"k","expected_base64":"djE=","value_base64":"djI="}`,
		},
		{
			name: "storage cas from empty to empty",
			op: func(ctx *skill.Context) error {
				_, _, err := ctx.Storage("cache").CompareAndSwap("k", []byte{}, nil)
				return err
			},
			handle: 30000,
			want:   `{"op":"cas","key":"k","expected_base64":"","value_base64":""}`,
		},
		{
			name:   "storage delete",
			op:     func(ctx *skill.Context) error { _, err := ctx.Storage("/counters/").Delete("k"); return err },
			handle: 30001,
			want:   `{"op":"delete","key":"k"}`,
		},
		{
			name:   "storage list",
			op:     func(ctx *skill.Context) error { _, _, err := ctx.Storage("cache").List("p", 10, "p/a"); return err },
			handle: 30000,
			want:   `{"op":"list","prefix":"p","limit":10,"cursor":"p/a"}`,
		},
		{
			name:   "storage list defaults",
			op:     func(ctx *skill.Context) error { _, _, err := ctx.Storage("cache").List("", 0, ""); return err },
			handle: 30000,
			want:   `{"op":"list","prefix":"","limit":100,"cursor":""}`,
		},
		{
			name:   "secret describe",
			op:     func(ctx *skill.Context) error { _, err := ctx.Secret("api_token").Describe(); return err },
			handle: 20001,
			want:   `{"op":"describe"}`,
		},
		{
			name: "channel send text",
			op: func(ctx *skill.Context) error {
				_, err := ctx.Channel("ops-alerts").Send("disk <90%> full")
				return err
			},
			handle: 40000,
			want:   `{"op":"send","text":"disk <90%> full"}`,
		},
		{
			name: "channel send message",
			op: func(ctx *skill.Context) error {
				_, err := ctx.Channel("ops-alerts").SendMessage(map[string]any{"title": "t", "n": 1})
				return err
			},
			handle: 40000,
			want:   `{"op":"send","message":{"n":1,"title":"t"}}`,
		},
		{
			name:   "raw call",
			op:     func(ctx *skill.Context) error { _, err := ctx.Call(30001, []byte(`{"op":"future"}`)); return err },
			handle: 30001,
			want:   `{"op":"future"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backend := skilltest.BackendFunc(func(skilltest.Request) skilltest.Response { return skilltest.OK(map[string]any{}) })
			err, res := runProbe(t, backend, tt.op)
			if err != nil {
				t.Fatalf("op: %v", err)
			}
			if len(res.Requests) != 1 {
				t.Fatalf("%d requests, want 1", len(res.Requests))
			}
			req := res.Requests[0]
			if req.Handle != tt.handle {
				t.Errorf("handle = %d, want %d", req.Handle, tt.handle)
			}
			if string(req.Body) != tt.want {
				t.Errorf("request =\n  %s\nwant\n  %s", req.Body, tt.want)
			}
		})
	}
}

func TestResponseDecoding(t *testing.T) {
	backend := skilltest.BackendFunc(func(req skilltest.Request) skilltest.Response {
		var r struct {
			Op  string `json:"op"`
			Key string `json:"key"`
		}
		_ = json.Unmarshal(req.Body, &r)
		switch {
		case req.Kind == "http":
			return skilltest.OK(json.RawMessage(`{"status":404,"headers":{"content-type":"text/plain","x-a":"1, 2"},"body_base64":"bm90IGZvdW5k"}`))
		case r.Op == "get" && r.Key == "present":
			return skilltest.OK(json.RawMessage(`{"found":true,"value_base64":"AAE="}`))
		case r.Op == "get" && r.Key == "empty":
			return skilltest.OK(json.RawMessage(`{"found":true,"value_base64":""}`))
		case r.Op == "get":
			return skilltest.OK(json.RawMessage(`{"found":false}`))
		case r.Op == "put":
			return skilltest.OK(json.RawMessage(`{}`))
		case r.Op == "cas" && r.Key == "swaps":
			return skilltest.OK(json.RawMessage(`{"swapped":true}`))
		case r.Op == "cas" && r.Key == "present":
			return skilltest.OK(json.RawMessage(`{"swapped":false,"found":true,"value_base64":"AAE="}`))
		case r.Op == "cas" && r.Key == "empty":
			return skilltest.OK(json.RawMessage(`{"swapped":false,"found":true}`))
		case r.Op == "cas":
			return skilltest.OK(json.RawMessage(`{"swapped":false,"found":false}`))
		case r.Op == "delete":
			return skilltest.OK(json.RawMessage(`{"deleted":true}`))
		case r.Op == "list":
			return skilltest.OK(json.RawMessage(`{"keys":["p/a","p/b"],"next_cursor":"p/b"}`))
		case r.Op == "describe":
			return skilltest.OK(json.RawMessage(`{"scope":"skill:acme.skill","key":"api_token","present":true}`))
		case r.Op == "send":
			return skilltest.OK(json.RawMessage(`{"delivered":true,"message_id":"m-1"}`))
		}
		return skilltest.Fail(-3, "invalid_request", "unexpected")
	})
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	err, _ := runProbe(t, backend, func(ctx *skill.Context) error {
		resp, err := ctx.HTTP().Get("https://api.example.com/")
		if err != nil {
			return err
		}
		add("http %d %v %q", resp.Status, resp.Header, resp.Body)
		st := ctx.Storage("counters")
		for _, k := range []string{"present", "empty", "absent"} {
			v, found, err := st.Get(k)
			if err != nil {
				return err
			}
			add("get %s %v %v nil=%v", k, found, v, v == nil)
		}
		if err := st.Put("k", []byte("x")); err != nil {
			return err
		}
		for _, k := range []string{"swaps", "present", "empty", "absent"} {
			swapped, cur, err := st.CompareAndSwap(k, nil, []byte{7})
			if err != nil {
				return err
			}
			add("cas %s %v %v nil=%v", k, swapped, cur, cur == nil)
		}
		deleted, err := st.Delete("k")
		if err != nil {
			return err
		}
		keys, next, err := st.List("p", 2, "")
		if err != nil {
			return err
		}
		add("delete %v list %v %q", deleted, keys, next)
		info, err := ctx.Secret("skill:acme.skill/api_token").Describe()
		if err != nil {
			return err
		}
		add("secret %+v", *info)
		d, err := ctx.Channel("ops-alerts").Send("x")
		if err != nil {
			return err
		}
		add("send %+v", *d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`http 404 map[content-type:text/plain x-a:1, 2] "not found"`,
		`get present true [0 1] nil=false`,
		`get empty true [] nil=false`,
		`get absent false [] nil=true`,
		`cas swaps true [7] nil=false`,
		`cas present false [0 1] nil=false`,
		`cas empty false [] nil=false`,
		`cas absent false [] nil=true`,
		`delete true list [p/a p/b] "p/b"`,
		`secret {Scope:skill:acme.skill Key:api_token Present:true}`,
		`send {Delivered:true MessageID:m-1}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestNegativeCodes maps each negative result of sdk/ABI.md §7 to its
// sentinel, with the host's error detail.
func TestNegativeCodes(t *testing.T) {
	sentinels := []error{skill.ErrNotGranted, skill.ErrDenied, skill.ErrInvalidRequest, skill.ErrTooLarge,
		skill.ErrUpstreamFailure, skill.ErrTimeout, skill.ErrQuotaExceeded, skill.ErrUnavailable, skill.ErrInternal}
	tests := []struct {
		code int32
		name string
		want error
	}{
		{-1, "not_granted", skill.ErrNotGranted},
		{-2, "denied", skill.ErrDenied},
		{-3, "invalid_request", skill.ErrInvalidRequest},
		{-4, "too_large", skill.ErrTooLarge},
		{-5, "upstream_failure", skill.ErrUpstreamFailure},
		{-6, "timeout", skill.ErrTimeout},
		{-7, "quota_exceeded", skill.ErrQuotaExceeded},
		{-8, "unavailable", skill.ErrUnavailable},
		{-9, "internal", skill.ErrInternal},
		{-12, "error_-12", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			backend := skilltest.BackendFunc(func(skilltest.Request) skilltest.Response {
				return skilltest.Fail(tt.code, "host_detail_code", "the host says why")
			})
			err, _ := runProbe(t, backend, func(ctx *skill.Context) error {
				_, err := ctx.HTTP().Get("https://api.example.com/")
				return err
			})
			var ce *skill.CapabilityError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want *CapabilityError", err, err)
			}
			if ce.Code != tt.code || ce.Name() != tt.name || ce.Kind != "http" || ce.Op != "GET" || ce.Handle != 10002 ||
				ce.Detail != "host_detail_code" || ce.Message != "the host says why" {
				t.Fatalf("error = %+v", ce)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) != (s == tt.want) {
					t.Errorf("errors.Is(err, %v) = %v", s, !(s == tt.want))
				}
			}
			want := "skill: http GET (handle 10002) failed: " + tt.name + " (host_detail_code): the host says why"
			if err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestCapabilityFailures(t *testing.T) {
	okBackend := skilltest.BackendFunc(func(skilltest.Request) skilltest.Response { return skilltest.OK(json.RawMessage(`{}`)) })
	tests := []struct {
		name     string
		backend  skilltest.Backend
		op       func(ctx *skill.Context) error
		want     error
		detail   string
		message  string // substring
		requests int
	}{
		{
			name: "http host without grant", backend: okBackend,
			op:   func(ctx *skill.Context) error { _, err := ctx.HTTP().Get("https://evil.example.net/"); return err },
			want: skill.ErrDenied, detail: "host_not_allowed", message: `"evil.example.net"`,
		},
		{
			name: "wildcard does not match the apex", backend: okBackend,
			op:   func(ctx *skill.Context) error { _, err := ctx.HTTP().Get("https://cdn.example.com/"); return err },
			want: skill.ErrDenied, detail: "host_not_allowed",
		},
		{
			name: "relative url", backend: okBackend,
			op:   func(ctx *skill.Context) error { _, err := ctx.HTTP().Get("/v1/items"); return err },
			want: skill.ErrInvalidRequest,
		},
		{
			name: "secret header with unknown secret", backend: okBackend,
			op: func(ctx *skill.Context) error {
				_, err := ctx.HTTP().Get("https://api.example.com/", skill.SecretHeader{Name: "a", Secret: "nope"})
				return err
			},
			want: skill.ErrNotGranted, message: `"nope"`,
		},
		{
			name: "ambiguous bare secret name", backend: okBackend,
			op:   func(ctx *skill.Context) error { _, err := ctx.Secret("other").Describe(); return err },
			want: skill.ErrInvalidRequest, message: "ambiguous",
		},
		{
			name: "storage prefix without grant", backend: okBackend,
			op:   func(ctx *skill.Context) error { return ctx.Storage("elsewhere").Put("k", nil) },
			want: skill.ErrNotGranted,
		},
		{
			name: "empty storage prefix with two grants", backend: okBackend,
			op:   func(ctx *skill.Context) error { _, _, err := ctx.Storage("").Get("k"); return err },
			want: skill.ErrNotGranted,
		},
		{
			name: "channel without grant", backend: okBackend,
			op:   func(ctx *skill.Context) error { _, err := ctx.Channel("general").Send("x"); return err },
			want: skill.ErrNotGranted,
		},
		{
			name: "raw call on an ungranted handle reads the host's detail", backend: okBackend,
			op:   func(ctx *skill.Context) error { _, err := ctx.Call(10042, []byte(`{}`)); return err },
			want: skill.ErrNotGranted, detail: "not_granted", message: "handle 10042 is not granted",
		},
		{
			name: "request over 1 MiB is refused before the call", backend: okBackend,
			op:   func(ctx *skill.Context) error { return ctx.Storage("cache").Put("k", make([]byte, 1<<20)) },
			want: skill.ErrTooLarge,
		},
		{
			name: "response that is not JSON", backend: skilltest.BackendFunc(func(skilltest.Request) skilltest.Response {
				return skilltest.Response{Body: []byte("<html>")}
			}),
			op:   func(ctx *skill.Context) error { _, _, err := ctx.Storage("cache").Get("k"); return err },
			want: skill.ErrInternal, message: "decode response", requests: 1,
		},
		{
			name: "no backend", backend: nil,
			op:   func(ctx *skill.Context) error { _, err := ctx.Secret("api_token").Describe(); return err },
			want: skill.ErrUnavailable, detail: "unavailable", requests: 1,
		},
		{
			name: "call budget", backend: okBackend,
			op: func(ctx *skill.Context) error {
				for i := 0; ; i++ {
					if err := ctx.Storage("cache").Put("k", nil); err != nil {
						if i != 256 {
							return fmt.Errorf("failed at call %d: %w", i, err)
						}
						return err
					}
				}
			},
			want: skill.ErrQuotaExceeded, detail: "quota_exceeded", requests: 256,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err, res := runProbe(t, tt.backend, tt.op)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var ce *skill.CapabilityError
			if !errors.As(err, &ce) {
				t.Fatalf("err %T is not a *CapabilityError", err)
			}
			if ce.Detail != tt.detail {
				t.Errorf("detail = %q, want %q", ce.Detail, tt.detail)
			}
			if !strings.Contains(ce.Message, tt.message) {
				t.Errorf("message %q does not contain %q", ce.Message, tt.message)
			}
			if len(res.Requests) != tt.requests {
				t.Errorf("%d requests reached the backend, want %d", len(res.Requests), tt.requests)
			}
		})
	}
}

// TestMemoryStorage runs a counter against skilltest.MemoryStorage across
// invocations, as kv-counter does.
func TestMemoryStorage(t *testing.T) {
	type in struct {
		Name string `json:"name"`
	}
	type out struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
		Keys  int    `json:"keys"`
	}
	mux := skill.NewMux()
	mux.Handle("acme.increment", skill.Typed(func(ctx *skill.Context, in in) (out, error) {
		st := ctx.Storage("")
		v, _, err := st.Get("n/" + in.Name)
		if err != nil {
			return out{}, err
		}
		n := 0
		if v != nil {
			if err := json.Unmarshal(v, &n); err != nil {
				return out{}, err
			}
		}
		n++
		if err := st.Put("n/"+in.Name, []byte(fmt.Sprint(n))); err != nil {
			return out{}, err
		}
		keys, _, err := st.List("n/", 0, "")
		return out{Name: in.Name, Count: n, Keys: len(keys)}, err
	}))
	store := skilltest.NewMemoryStorage()
	call := func(name string) out {
		t.Helper()
		res := skilltest.Run(mux, skilltest.Call{ToolID: "acme.increment", Input: in{name}, Grants: skilltest.Grants{Storage: []string{"counters"}}, Backend: store})
		var o out
		if res.Status != 0 || res.Decode(&o) != nil {
			t.Fatalf("status %d: %s", res.Status, res.Output)
		}
		return o
	}
	call("a")
	call("b")
	if got := call("a"); got != (out{"a", 2, 2}) {
		t.Fatalf("got %+v", got)
	}
	if v, ok := store.Value("counters", "n/a"); !ok || string(v) != "2" {
		t.Fatalf("stored %q %v", v, ok)
	}
	res := skilltest.Run(mux, skilltest.Call{ToolID: "acme.increment", Input: in{"../x"}, Grants: skilltest.Grants{Storage: []string{"counters"}}, Backend: store})
	if res.Status == 0 || res.ErrorCode() != "capability_invalid_request" || !strings.Contains(res.ErrorMessage(), "invalid_request") {
		t.Fatalf("bad key: %d %s", res.Status, res.Output)
	}
}

// TestMemoryStorageCAS: the in-memory fake answers cas as the host does:
// it swaps from the expected value or from absence, and otherwise hands
// back what the key holds.
func TestMemoryStorageCAS(t *testing.T) {
	store := skilltest.NewMemoryStorage()
	var lines []string
	err, _ := runProbe(t, store, func(ctx *skill.Context) error {
		st := ctx.Storage("cache")
		steps := []struct{ expected, value []byte }{
			{nil, []byte("1")},         // absent: swaps
			{nil, []byte("2")},         // present: no swap, current 1
			{[]byte("0"), []byte("2")}, // stale: no swap, current 1
			{[]byte("1"), []byte("")},  // swaps to empty
			{nil, []byte("3")},         // empty is not absent: current empty
			{[]byte{}, []byte("3")},    // swaps from empty
		}
		for _, s := range steps {
			swapped, cur, err := st.CompareAndSwap("n", s.expected, s.value)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%v %q nil=%v", swapped, cur, cur == nil))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `true "1" nil=false|false "1" nil=false|false "1" nil=false|true "" nil=false|false "" nil=false|true "3" nil=false`
	if got := strings.Join(lines, "|"); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if v, ok := store.Value("cache", "n"); !ok || string(v) != "3" {
		t.Fatalf("stored %q %v", v, ok)
	}
}
