package broker_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/broker/egress"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/sdk/abi"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// secrets is an in-memory SecretStore.
type secrets map[string]string

func (s secrets) Lookup(_ context.Context, scope, key string) ([]byte, bool, error) {
	v, ok := s[scope+"/"+key]
	return []byte(v), ok, nil
}

type fixedResolver map[string]netip.Addr

func (r fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

const testSecret = "Zq8-very-secret-value"

type env struct {
	b     *broker.Broker
	st    *storage.Store
	reg   *channels.Registry
	srv   *httptest.Server
	port  int
	grant policy.Grants
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "storage.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo-auth":
			fmt.Fprint(w, r.Header.Get("Authorization")+"|"+r.URL.Query().Get("key"))
		case "/leak":
			// A hostile server echoing the secret back in an error-ish way.
			http.Error(w, "bad token "+r.Header.Get("Authorization"), http.StatusForbidden)
		case "/redirect":
			http.Redirect(w, r, "/echo-auth", http.StatusFound)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	reg := channels.NewRegistry()
	b := broker.New(broker.Config{
		Egress:   egress.New(egress.Config{Resolver: fixedResolver{"api.example.com": netip.MustParseAddr("127.0.0.1")}}),
		Secrets:  secrets{"skill:acme.x/api_token": testSecret, "skill:acme.x/multi": "a\nb"},
		Storage:  st,
		Channels: reg,
	})
	return &env{b: b, st: st, reg: reg, srv: srv, port: port, grant: policy.Grants{
		HTTPHosts:       []string{"api.example.com"},
		SecretKeys:      []string{"skill:acme.x/api_token", "skill:acme.x/missing", "skill:acme.x/multi"},
		StoragePrefixes: []string{"cache", "shared"},
		StorageReadOnly: []string{"shared"},
		Channels:        []string{"alerts", "unconfigured"},
		HTTP: policy.HTTPRules{
			Schemes: []string{"http"}, Ports: []int{port}, PrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			MaxRedirects: 2, MaxRequestBytes: 1024, MaxResponseBytes: 1 << 20, RequestTimeout: 5 * time.Second,
			MaxRequestsPerInvocation: 3, MaxBytesPerInvocation: 1 << 20,
		},
	}}
}

// begin registers an invocation of acme.x with the env's grants.
func (e *env) begin(t *testing.T, id string, mutate func(*broker.Invocation)) func() broker.Usage {
	inv := broker.Invocation{ID: id, SkillID: "acme.x", Version: "1.0.0", ToolID: "acme.t", Grants: e.grant,
		Limits: policy.Limits{MaxCapabilityCalls: 256, MaxStorageKeys: 3, MaxStorageBytes: 1 << 20}}
	if mutate != nil {
		mutate(&inv)
	}
	end := e.b.Begin(inv)
	t.Cleanup(func() { end() })
	return end
}

// call sends one capability request as the sidecar would.
func (e *env) call(id string, kind sidecarplugin.CapabilityKind, handle int32, grant, doc string) ([]byte, *sidecarplugin.CapabilityError) {
	resp, err := e.b.Call(context.Background(), sidecarplugin.CapabilityRequest{
		InvocationID: id, SkillID: "acme.x", ToolID: "acme.t", Kind: kind, Handle: handle, Grant: grant, Request: []byte(doc),
	})
	if err == nil {
		return resp, nil
	}
	var ce *sidecarplugin.CapabilityError
	if !errors.As(err, &ce) {
		panic(fmt.Sprintf("broker returned %T %v", err, err))
	}
	return nil, ce
}

func TestIdentityChecks(t *testing.T) {
	e := newEnv(t)
	e.begin(t, "inv1", nil)
	tests := []struct {
		name string
		req  sidecarplugin.CapabilityRequest
		code abi.Code
		msg  string
	}{
		{"unknown invocation", sidecarplugin.CapabilityRequest{InvocationID: "forged", SkillID: "acme.x", Kind: "storage", Handle: 30000, Grant: "cache", Request: []byte(`{"op":"get","key":"k"}`)}, abi.CodeDenied, "no such invocation"},
		{"other skill", sidecarplugin.CapabilityRequest{InvocationID: "inv1", SkillID: "acme.y", Kind: "storage", Handle: 30000, Grant: "cache", Request: []byte(`{"op":"get","key":"k"}`)}, abi.CodeDenied, "names skill"},
		{"handle not granted", sidecarplugin.CapabilityRequest{InvocationID: "inv1", SkillID: "acme.x", ToolID: "acme.t", Kind: "storage", Handle: 30009, Request: []byte(`{}`)}, abi.CodeNotGranted, "handle 30009"},
		{"grant mismatch", sidecarplugin.CapabilityRequest{InvocationID: "inv1", SkillID: "acme.x", ToolID: "acme.t", Kind: "storage", Handle: 30000, Grant: "shared", Request: []byte(`{"op":"get","key":"k"}`)}, abi.CodeDenied, "the sidecar sent"},
		{"kind mismatch", sidecarplugin.CapabilityRequest{InvocationID: "inv1", SkillID: "acme.x", ToolID: "acme.t", Kind: "http", Handle: 30000, Grant: "cache", Request: []byte(`{}`)}, abi.CodeDenied, "the sidecar sent"},
	}
	for _, tt := range tests {
		_, err := e.b.Call(context.Background(), tt.req)
		var ce *sidecarplugin.CapabilityError
		if !errors.As(err, &ce) || ce.Code != tt.code || !strings.Contains(ce.Message, tt.msg) {
			t.Errorf("%s: %v, want %s containing %q", tt.name, err, tt.code, tt.msg)
		}
	}
	st := e.b.Stats("acme.x")
	if st.Denials["identity_mismatch"] != 1 || st.Denials["grant_mismatch"] != 2 || st.Denials["not_granted"] != 1 {
		t.Fatalf("denials %v", st.Denials)
	}
}

func TestStorageThroughBroker(t *testing.T) {
	e := newEnv(t)
	e.begin(t, "inv", nil)
	put := func(handle int32, grant, key, value string) *sidecarplugin.CapabilityError {
		_, ce := e.call("inv", "storage", handle, grant, fmt.Sprintf(`{"op":"put","key":%q,"value_base64":%q}`, key, base64.StdEncoding.EncodeToString([]byte(value))))
		return ce
	}
	if ce := put(30000, "cache", "a/b", "1"); ce != nil {
		t.Fatal(ce)
	}
	resp, ce := e.call("inv", "storage", 30000, "cache", `{"op":"get","key":"a/b"}`)
	if ce != nil || string(resp) != `{"found":true,"value_base64":"MQ=="}` {
		t.Fatalf("get: %s %v", resp, ce)
	}
	// Traversal and other bad keys never reach the store.
	for _, key := range []string{"../x", "a/../../b", "/etc/passwd", "a//b", "a\x00b", ".", "..", "", "a\\..\\b", strings.Repeat("k", 257), "a b"} {
		if ce := put(30000, "cache", key, "x"); ce == nil || ce.Code != abi.CodeInvalidRequest {
			t.Errorf("put %q: %v, want invalid_request", key, ce)
		}
	}
	// A read root is read-only.
	if ce := put(30001, "shared", "k", "x"); ce == nil || ce.Code != abi.CodeDenied || !strings.Contains(ce.Message, "read root") {
		t.Fatalf("put through a read root: %v", ce)
	}
	if _, ce := e.call("inv", "storage", 30001, "shared", `{"op":"delete","key":"k"}`); ce == nil || ce.Code != abi.CodeDenied {
		t.Fatalf("delete through a read root: %v", ce)
	}
	// ...but reads the same key space: "cache/a/b" is not under "shared".
	if resp, ce := e.call("inv", "storage", 30001, "shared", `{"op":"get","key":"a/b"}`); ce != nil || string(resp) != `{"found":false}` {
		t.Fatalf("get through a read root: %s %v", resp, ce)
	}
	// Quota (MaxStorageKeys 3).
	for _, k := range []string{"k2", "k3"} {
		if ce := put(30000, "cache", k, "x"); ce != nil {
			t.Fatal(ce)
		}
	}
	if ce := put(30000, "cache", "k4", "x"); ce == nil || ce.Code != abi.CodeQuotaExceeded || !strings.Contains(ce.Message, "4 keys would pass the limit of 3") {
		t.Fatalf("quota: %v", ce)
	}
	// List returns keys relative to the handle's prefix.
	resp, ce = e.call("inv", "storage", 30000, "cache", `{"op":"list","limit":2}`)
	if ce != nil || string(resp) != `{"keys":["a/b","k2"],"next_cursor":"k2"}` {
		t.Fatalf("list: %s %v", resp, ce)
	}
	resp, ce = e.call("inv", "storage", 30000, "cache", `{"op":"list","cursor":"k2"}`)
	if ce != nil || string(resp) != `{"keys":["k3"],"next_cursor":""}` {
		t.Fatalf("list page 2: %s %v", resp, ce)
	}
	// Unknown members and ops are invalid requests.
	for _, doc := range []string{`{"op":"get","key":"k","extra":1}`, `{"op":"rename"}`, `not json`, `{"op":"get","key":"k"} {}`} {
		if _, ce := e.call("inv", "storage", 30000, "cache", doc); ce == nil || ce.Code != abi.CodeInvalidRequest {
			t.Errorf("%s: %v", doc, ce)
		}
	}
	if st := e.b.Stats("acme.x"); st.StorageKeys != 3 || st.Denials["read_only"] != 2 || st.Denials["storage_quota_keys"] != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStorageCAS: cas through the broker swaps only from the expected
// value (absent when expected_base64 is absent or null), answers what the
// key holds when it does not, and is refused as a put is (read root, bad
// key, quota, missing value).
func TestStorageCAS(t *testing.T) {
	e := newEnv(t)
	e.begin(t, "inv", nil)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	steps := []struct {
		name     string
		handle   int32
		grant    string
		doc      string
		want     string // the answer, when wantCode is 0
		wantCode sidecarplugin.ABICode
	}{
		{"create from absent", 30000, "cache", `{"op":"cas","key":"n","value_base64":"` + b64("1") + `"}`, `{"swapped":true}`, 0},
		{"absent expected, present", 30000, "cache", `{"op":"cas","key":"n","expected_base64":null,"value_base64":"` + b64("9") + `"}`, `{"swapped":false,"found":true,"value_base64":"` + b64("1") + `"}`, 0},
		{"stale value", 30000, "cache", `{"op":"cas","key":"n","expected_base64":"` + b64("0") + `","value_base64":"` + b64("9") + `"}`, `{"swapped":false,"found":true,"value_base64":"` + b64("1") + `"}`, 0},
		{"current value", 30000, "cache", `{"op":"cas","key":"n","expected_base64":"` + b64("1") + `","value_base64":"` + b64("2") + `"}`, `{"swapped":true}`, 0},
		{"value expected, absent", 30000, "cache", `{"op":"cas","key":"m","expected_base64":"` + b64("1") + `","value_base64":"` + b64("2") + `"}`, `{"swapped":false,"found":false}`, 0},
		{"to empty", 30000, "cache", `{"op":"cas","key":"n","expected_base64":"` + b64("2") + `","value_base64":""}`, `{"swapped":true}`, 0},
		{"empty is not absent", 30000, "cache", `{"op":"cas","key":"n","value_base64":"` + b64("3") + `"}`, `{"swapped":false,"found":true}`, 0},
		{"from empty", 30000, "cache", `{"op":"cas","key":"n","expected_base64":"","value_base64":"` + b64("3") + `"}`, `{"swapped":true}`, 0},
		{"read root", 30001, "shared", `{"op":"cas","key":"n","value_base64":"` + b64("1") + `"}`, "", abi.CodeDenied},
		{"bad key", 30000, "cache", `{"op":"cas","key":"../n","value_base64":"` + b64("1") + `"}`, "", abi.CodeInvalidRequest},
		{"no value", 30000, "cache", `{"op":"cas","key":"n","expected_base64":"` + b64("3") + `"}`, "", abi.CodeInvalidRequest},
		{"expected on put", 30000, "cache", `{"op":"put","key":"n","expected_base64":"","value_base64":""}`, "", abi.CodeInvalidRequest},
		{"fill", 30000, "cache", `{"op":"cas","key":"k2","value_base64":""}`, `{"swapped":true}`, 0},
		{"fill more", 30000, "cache", `{"op":"cas","key":"k3","value_base64":""}`, `{"swapped":true}`, 0},
		{"keys quota", 30000, "cache", `{"op":"cas","key":"k4","value_base64":""}`, "", abi.CodeQuotaExceeded},
	}
	for _, s := range steps {
		resp, ce := e.call("inv", "storage", s.handle, s.grant, s.doc)
		switch {
		case s.wantCode == 0 && (ce != nil || string(resp) != s.want):
			t.Fatalf("%s: %s %v; want %s", s.name, resp, ce, s.want)
		case s.wantCode != 0 && (ce == nil || ce.Code != s.wantCode):
			t.Fatalf("%s: %s %v; want code %d", s.name, resp, ce, s.wantCode)
		}
	}
	if v, _, _ := e.st.Get(context.Background(), "acme.x", "cache/n"); string(v) != "3" {
		t.Fatalf("cache/n = %q, want 3", v)
	}
	if st := e.b.Stats("acme.x"); st.StorageKeys != 3 || st.Denials["storage_quota_keys"] != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSecrets(t *testing.T) {
	e := newEnv(t)
	e.begin(t, "inv", nil)
	resp, ce := e.call("inv", "secret", 20000, "skill:acme.x/api_token", `{"op":"describe"}`)
	if ce != nil || string(resp) != `{"scope":"skill:acme.x","key":"api_token","present":true}` {
		t.Fatalf("describe: %s %v", resp, ce)
	}
	resp, ce = e.call("inv", "secret", 20001, "skill:acme.x/missing", `{"op":"describe"}`)
	if ce != nil || !strings.Contains(string(resp), `"present":false`) {
		t.Fatalf("describe missing: %s %v", resp, ce)
	}
	// read is disabled by default...
	if _, ce := e.call("inv", "secret", 20000, "skill:acme.x/api_token", `{"op":"read"}`); ce == nil || ce.Code != abi.CodeDenied || !strings.Contains(ce.Message, "secrets.allow_read") {
		t.Fatalf("read: %v", ce)
	}
	// ...and allowed when the policy says so.
	e.begin(t, "inv2", func(inv *broker.Invocation) { inv.Grants.SecretRead = true })
	resp, ce = e.call("inv2", "secret", 20000, "skill:acme.x/api_token", `{"op":"read"}`)
	if ce != nil || string(resp) != `{"value":"`+testSecret+`"}` {
		t.Fatalf("read allowed: %s %v", resp, ce)
	}
	if _, ce := e.call("inv2", "secret", 20001, "skill:acme.x/missing", `{"op":"read"}`); ce == nil || ce.Code != abi.CodeUnavailable || !strings.Contains(ce.Message, "palyra secrets set skill:acme.x/missing") {
		t.Fatalf("read missing: %v", ce)
	}
	if st := e.b.Stats("acme.x"); st.SecretReads != 1 || st.Denials["secret_read_disabled"] != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func httpDoc(url string, extra string) string {
	return fmt.Sprintf(`{"url":%q%s}`, url, extra)
}

func TestHTTPInjectionAndBudgets(t *testing.T) {
	e := newEnv(t)
	end := e.begin(t, "inv", nil)
	base := fmt.Sprintf("http://api.example.com:%d", e.port)
	resp, ce := e.call("inv", "http", 10000, "api.example.com", httpDoc(base+"/echo-auth",
		`,"secret_headers":[{"name":"authorization","secret_handle":20000,"format":"Bearer {secret}"}],"secret_query":[{"name":"key","secret_handle":20000}]`))
	if ce != nil {
		t.Fatal(ce)
	}
	var out struct {
		Status int    `json:"status"`
		Body   []byte `json:"body_base64"`
	}
	if err := json.Unmarshal(resp, &out); err != nil || out.Status != 200 || string(out.Body) != "Bearer "+testSecret+"|"+testSecret {
		t.Fatalf("injection: %s %v", resp, err)
	}
	// A server echoing the secret is the server's doing; the broker's own
	// messages never carry it.
	badDocs := []struct{ doc, want string }{
		{httpDoc(base+"/", `,"secret_headers":[{"name":"authorization","secret_handle":20001}]`), "has no value"},
		{httpDoc(base+"/", `,"secret_headers":[{"name":"authorization","secret_handle":20002}]`), "not one line"},
		{httpDoc(base+"/", `,"secret_headers":[{"name":"authorization","secret_handle":20000,"format":"no placeholder"}]`), "exactly once"},
		{httpDoc(base+"/", `,"secret_headers":[{"name":"x","secret_handle":29999}]`), "not granted"},
		{httpDoc("http://evil.example.net/", ""), `"evil.example.net"`},
		{httpDoc(base+"/", `,"body":"x","body_base64":"eA=="`), "at most one"},
	}
	for _, b := range badDocs {
		_, ce := e.call("inv", "http", 10000, "api.example.com", b.doc)
		if ce == nil || !strings.Contains(ce.Message, b.want) || strings.Contains(ce.Message, testSecret) {
			t.Errorf("%s: %v, want %q", b.doc, ce, b.want)
		}
	}
	// Budget: 3 requests per invocation; the first used 1, a redirect
	// uses 2 (hops count), the next is refused.
	if _, ce := e.call("inv", "http", 10000, "api.example.com", httpDoc(base+"/redirect", "")); ce != nil {
		t.Fatal(ce)
	}
	if _, ce := e.call("inv", "http", 10000, "api.example.com", httpDoc(base+"/", "")); ce == nil || ce.Code != abi.CodeQuotaExceeded || !strings.Contains(ce.Message, "budget of 3 HTTP requests") {
		t.Fatalf("over budget: %v", ce)
	}
	u := end()
	if u.HTTPRequests != 3 || u.SecretInjections != 2 || len(u.Denials) == 0 {
		t.Fatalf("usage %+v", u)
	}
	for _, d := range u.Denials {
		if strings.Contains(d.Message, testSecret) {
			t.Fatalf("a denial carries the secret: %+v", d)
		}
	}
	// After End, the invocation is gone.
	if _, ce := e.call("inv", "http", 10000, "api.example.com", httpDoc(base+"/", "")); ce == nil || !strings.Contains(ce.Message, "no such invocation") {
		t.Fatalf("after end: %v", ce)
	}
}

func TestChannels(t *testing.T) {
	e := newEnv(t)
	var ps channels.PubSub
	sub, cancel := ps.Subscribe(1)
	defer cancel()
	if err := e.reg.Register("alerts", &ps); err != nil {
		t.Fatal(err)
	}
	e.begin(t, "inv", nil)
	resp, ce := e.call("inv", "channel", 40000, "alerts", `{"op":"send","message":{"level":"high"}}`)
	if ce != nil || !strings.Contains(string(resp), `"delivered":true`) {
		t.Fatalf("send: %s %v", resp, ce)
	}
	if m := <-sub; string(m.Data) != `{"level":"high"}` || m.SkillID != "acme.x" || m.InvocationID != "inv" {
		t.Fatalf("message %+v", m)
	}
	if _, ce := e.call("inv", "channel", 40001, "unconfigured", `{"op":"send","text":"x"}`); ce == nil || ce.Code != abi.CodeUnavailable {
		t.Fatalf("unconfigured: %v", ce)
	}
	if _, ce := e.call("inv", "channel", 40000, "alerts", `{"op":"send"}`); ce == nil || ce.Code != abi.CodeInvalidRequest {
		t.Fatalf("empty message: %v", ce)
	}
	if _, ce := e.call("inv", "channel", 40002, "payroll", `{"op":"send","text":"x"}`); ce == nil || ce.Code != abi.CodeNotGranted {
		t.Fatalf("channel outside the grant: %v", ce)
	}
}

func TestBeginRefusesDuplicateIDs(t *testing.T) {
	e := newEnv(t)
	e.begin(t, "dup", nil)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic on a reused invocation id")
		}
	}()
	e.begin(t, "dup", nil)
}

// BenchmarkCapabilityCall measures the broker's part of a storage get.
func BenchmarkCapabilityCall(b *testing.B) {
	st, err := storage.Open(context.Background(), filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	br := broker.New(broker.Config{Storage: st})
	end := br.Begin(broker.Invocation{ID: "i", SkillID: "acme.x", Grants: policy.Grants{StoragePrefixes: []string{"cache"}}})
	defer end()
	req := sidecarplugin.CapabilityRequest{InvocationID: "i", SkillID: "acme.x", Kind: "storage", Handle: 30000, Grant: "cache", Request: []byte(`{"op":"get","key":"k"}`)}
	b.ResetTimer()
	for range b.N {
		if _, err := br.Call(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// A URL must go through the handle of its own grant: a granted host sent
// through another HTTP handle is refused, and the message says so.
func TestHTTPHostThroughAnotherHandle(t *testing.T) {
	e := newEnv(t)
	e.begin(t, "inv", func(inv *broker.Invocation) {
		inv.Grants.HTTPHosts = []string{"api.example.com", "other.example.com"}
	})
	url := fmt.Sprintf("http://api.example.com:%d/", e.port)
	_, ce := e.call("inv", "http", 10001, "other.example.com", httpDoc(url, ""))
	if ce == nil || ce.Code != abi.CodeDenied || !strings.Contains(ce.Message, `host "api.example.com" is granted, but not through handle 10001`) {
		t.Fatalf("%v", ce)
	}
	if _, ce := e.call("inv", "http", 10000, "api.example.com", httpDoc(url, "")); ce != nil {
		t.Fatalf("through its own handle: %v", ce)
	}
}
