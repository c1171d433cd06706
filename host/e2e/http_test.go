package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/errcode"
)

const fetchSecret = "tok-4f1c9e2a7b"

type fetchOut struct {
	Status    int    `json:"status"`
	Body      string `json:"body"`
	Truncated bool   `json:"truncated"`
}

// approvedCall is h.Call for a tool that needs approval (the http-fetch
// example is default_sensitive): the call must wait for one; the test
// approves it as the operator and runs the call again with it.
func approvedCall(ctx context.Context, t testing.TB, h *host.Host, req host.CallRequest) (*host.CallResult, error) {
	t.Helper()
	_, err := h.Call(ctx, req)
	pa := host.PendingApprovalOf(err)
	if pa == nil {
		t.Fatalf("%s: the call did not wait for approval: %v", req.ToolID, err)
	}
	if _, err := h.DecideApproval(ctx, host.DecideRequest{ID: pa.ID, Approve: true, Reason: "e2e test"}); err != nil {
		t.Fatal(err)
	}
	req.ApprovalID = pa.ID
	return h.Call(ctx, req)
}

// The http-fetch example calls a local server with a token the host
// injects: the server sees it, the guest's output does not.
func TestHTTPFetchWithInjectedToken(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+fetchSecret {
			http.Error(w, "missing token", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "token accepted")
	})
	h := openHost(t, t.TempDir(), testProfile(t, srv.port, ""))
	setSecret(t, h, "skill:palyra.http_fetch/api_token", fetchSecret)
	res := installExample(t, h, "http-fetch", fetchWasm, nil)
	if len(res.MissingSecrets) != 0 {
		t.Fatalf("missing secrets %v with the secret set", res.MissingSecrets)
	}
	ctx := context.Background()
	out, err := approvedCall(ctx, t, h, host.CallRequest{SkillID: "palyra.http_fetch", ToolID: "palyra.http_fetch", Input: json.RawMessage(fmt.Sprintf(`{"url":%q,"use_token":true}`, srv.url("api.example.com", "/v1/items")))})
	if err != nil {
		t.Fatal(err)
	}
	var got fetchOut
	if err := json.Unmarshal(out.Output, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != 200 || got.Body != "token accepted" {
		t.Fatalf("fetch = %+v", got)
	}
	if strings.Contains(string(out.Output), fetchSecret) {
		t.Fatal("the secret reached the guest's output")
	}
	// Without the token the server refuses: the header came from the host.
	out, err = approvedCall(ctx, t, h, host.CallRequest{SkillID: "palyra.http_fetch", ToolID: "palyra.http_fetch", Input: json.RawMessage(fmt.Sprintf(`{"url":%q}`, srv.url("api.example.com", "/")))})
	if err != nil || !strings.Contains(string(out.Output), `"status":401`) {
		t.Fatalf("without token: %s %v", out.Output, err)
	}
	st := h.Stats("palyra.http_fetch")
	if st.Calls != 2 || st.Capabilities.HTTPRequests != 2 || st.Capabilities.SecretInjections != 1 || st.Capabilities.EgressBytesIn == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A host outside the skill's grant is refused by the broker: the call
// fails with capability_denied naming the host, and no request is made.
func TestHTTPFetchHostOutsideGrant(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	h := openHost(t, t.TempDir(), testProfile(t, srv.port, ""))
	installExample(t, h, "http-fetch", fetchWasm, nil)
	_, err := approvedCall(context.Background(), t, h, host.CallRequest{SkillID: "palyra.http_fetch", ToolID: "palyra.http_fetch", Input: json.RawMessage(`{"url":"https://evil.example.net/steal"}`)})
	if !errors.Is(err, broker.ErrCapabilityDenied) || errcode.Of(err) != "capability_denied" || !strings.Contains(err.Error(), `"evil.example.net"`) {
		t.Fatalf("err = %v (code %s)", err, errcode.Of(err))
	}
	if st := h.Stats("palyra.http_fetch"); st.Capabilities.Denials["host_not_allowed"] != 1 || st.Errors["capability_denied"] != 1 {
		t.Fatalf("stats %+v", st)
	}
	if len(srv.hits) != 0 {
		t.Fatal("the server was reached")
	}
}

// The SSRF table, through the http-fetch example in a real sidecar: its
// manifest (for this test) grants every host below, and the broker still
// refuses each private destination; only 127.0.0.1 (the test server, in
// the profile's allowed_private_networks) is reachable.
func TestSSRFTableThroughSidecar(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/redirect-outside":
			http.Redirect(w, r, "http://evil.example.net/", http.StatusFound)
		case "/big":
			fmt.Fprint(w, big)
		default:
			fmt.Fprint(w, "ok")
		}
	})
	h := openHost(t, t.TempDir(), testProfile(t, srv.port, ""))
	hosts := `["api.example.com", "127.0.0.2", "10.0.0.1", "169.254.169.254", "0.0.0.0", "loopback.example.com", "v6loop.example.com", "mixed.example.com", "metadata.example.com", "100.64.0.1"]`
	installExample(t, h, "http-fetch", fetchWasm, func(m string) string {
		return strings.Replace(m, `http_egress_allowlist = ["api.example.com"]`, "http_egress_allowlist = "+hosts, 1)
	})
	rows := []struct {
		name, url, reason string // reason "" = allowed
	}{
		{"test server by name", srv.url("api.example.com", "/"), ""},
		{"case and trailing dot", srv.url("API.Example.COM.", "/"), ""},
		{"loopback 127.0.0.2", srv.url("127.0.0.2", "/"), "private_address"},
		{"ipv6 loopback by name", srv.url("v6loop.example.com", "/"), "private_address"},
		{"rfc1918", srv.url("10.0.0.1", "/"), "private_address"},
		{"metadata", srv.url("169.254.169.254", "/"), "private_address"},
		{"metadata by name", srv.url("metadata.example.com", "/"), "private_address"},
		{"unspecified", srv.url("0.0.0.0", "/"), "private_address"},
		{"cgnat", srv.url("100.64.0.1", "/"), "private_address"},
		{"name resolving to loopback", srv.url("loopback.example.com", "/"), "private_address"},
		{"name resolving to public and private", srv.url("mixed.example.com", "/"), "private_address"},
		{"redirect to metadata", srv.url("api.example.com", "/redirect-metadata"), "redirect_denied"},
		{"redirect outside the grant", srv.url("api.example.com", "/redirect-outside"), "redirect_denied"},
		{"IDN look-alike", "http://xn--pi-7ld.example.com:" + fmt.Sprint(srv.port) + "/", "host_not_allowed"},
		{"port not allowed", "http://api.example.com:1/", "port_not_allowed"},
		{"host outside the grant", "https://evil.example.net/", "host_not_allowed"},
	}
	ctx := context.Background()
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			out, err := approvedCall(ctx, t, h, host.CallRequest{SkillID: "palyra.http_fetch", ToolID: "palyra.http_fetch", Input: json.RawMessage(fmt.Sprintf(`{"url":%q}`, row.url))})
			if row.reason == "" {
				if err != nil || !strings.Contains(string(out.Output), `"body":"ok"`) {
					t.Fatalf("allowed row: %v %s", err, outputOf(out))
				}
				return
			}
			if !errors.Is(err, broker.ErrCapabilityDenied) || !strings.Contains(err.Error(), row.reason) {
				t.Fatalf("err = %v, want capability_denied with %s", err, row.reason)
			}
			t.Logf("%s: %v", row.reason, err)
		})
	}
	// An oversized response is refused (policy max_response_bytes 1 MiB).
	out, err := approvedCall(ctx, t, h, host.CallRequest{SkillID: "palyra.http_fetch", ToolID: "palyra.http_fetch", Input: json.RawMessage(fmt.Sprintf(`{"url":%q}`, srv.url("api.example.com", "/big")))})
	if err == nil || out == nil || out.ToolError == nil || out.ToolError.Code != "capability_too_large" {
		t.Fatalf("big response: %v %s", err, outputOf(out))
	}
}

// outputOf shows a result for a failure message.
func outputOf(r *host.CallResult) string {
	if r == nil {
		return "<no result>"
	}
	if r.ToolError != nil {
		return r.ToolError.Code + ": " + r.ToolError.Message
	}
	return string(r.Output)
}
