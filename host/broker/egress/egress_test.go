package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
)

// testMux is the handler of the main local test server.
func testMux(release chan struct{}) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000")
		w.Write([]byte(strings.Repeat("x", 5000)))
	})
	mux.HandleFunc("/chunked-big", func(w http.ResponseWriter, r *http.Request) {
		for range 5 {
			w.Write([]byte(strings.Repeat("y", 1000)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/to-meta", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/to-other", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := net.SplitHostPort(r.Host)
		http.Redirect(w, r, "http://evil.test:"+port+"/ok", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/to-ok", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok", http.StatusFound)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.Method, b)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	return mux
}

// rawServer answers every connection with the bytes resp and closes it.
func rawServer(t *testing.T, resp string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Read the request head, answer, close.
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
			}
			io.WriteString(c, resp)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return portOf(t, ln.Addr())
}

// closedPort returns a port on 127.0.0.1 nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := portOf(t, ln.Addr())
	ln.Close()
	return p
}

// wantOutcome checks err against the expected reason or sentinel.
func wantOutcome(t *testing.T, err error, wantReason string, wantErr error, wantDetail string) {
	t.Helper()
	switch {
	case wantReason == "" && wantErr == nil:
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	case err == nil:
		t.Fatalf("no error, want reason %q / %v", wantReason, wantErr)
	}
	if wantErr != nil && !errors.Is(err, wantErr) {
		t.Fatalf("error %v (code %s), want %v", err, errcode.Of(err), wantErr)
	}
	if wantReason != "" {
		var de *DenyError
		if !errors.As(err, &de) {
			t.Fatalf("error %v is not a *DenyError", err)
		}
		if de.Reason != wantReason {
			t.Fatalf("reason %q, want %q (%v)", de.Reason, wantReason, err)
		}
		if !errors.Is(err, ErrDenied) || errcode.Of(err) != "egress_denied" {
			t.Fatalf("deny error %v does not carry ErrDenied/egress_denied", err)
		}
		if !strings.HasPrefix(de.Detail, wantDetail) {
			t.Fatalf("detail %q, want prefix %q", de.Detail, wantDetail)
		}
	}
}

func TestSSRF(t *testing.T) {
	release := make(chan struct{})
	_, port := server(t, testMux(release))
	releaseOnCleanup(t, release)
	p := strconv.Itoa(port)
	lie := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nshort")
	refused := closedPort(t)
	anyHost := func(r *Rules) {
		r.Hosts = []string{"*"}
		r.Ports = []int{80, port}
		r.PrivateNetworks = nil
	}
	tests := []struct {
		name       string
		url        string
		method     string
		header     map[string]string
		body       []byte
		setup      func(*testResolver)
		rules      func(*Rules)
		wantReason string
		wantErr    error
		wantDetail string
		wantAddr   string
	}{
		{name: "allowed name", url: "http://api.test:" + p + "/ok"},
		{name: "loopback v4 literal", url: "http://127.0.0.1:" + p + "/ok", rules: anyHost, wantReason: ReasonPrivateAddress, wantAddr: "127.0.0.1"},
		{name: "loopback v6 literal", url: "http://[::1]:" + p + "/ok", rules: anyHost, wantReason: ReasonPrivateAddress, wantAddr: "::1"},
		{name: "rfc1918", url: "http://10.0.0.1/", rules: anyHost, wantReason: ReasonPrivateAddress},
		{name: "metadata", url: "http://169.254.169.254/latest/meta-data/", rules: anyHost, wantReason: ReasonPrivateAddress},
		{name: "unspecified", url: "http://0.0.0.0:" + p + "/", rules: anyHost, wantReason: ReasonPrivateAddress},
		{name: "unspecified even with AllowPrivate", url: "http://0.0.0.0:" + p + "/", rules: func(r *Rules) { anyHost(r); r.AllowPrivate = true }, wantReason: ReasonPrivateAddress},
		{name: "v4-mapped loopback", url: "http://[::ffff:127.0.0.1]:" + p + "/", rules: anyHost, wantReason: ReasonPrivateAddress},
		{name: "nat64 loopback", url: "http://[64:ff9b::7f00:1]:" + p + "/", rules: anyHost, wantReason: ReasonPrivateAddress},
		{name: "cgnat", url: "http://100.64.0.1/", rules: anyHost, wantReason: ReasonPrivateAddress},
		{name: "ula", url: "http://[fd00::1]/", rules: anyHost, wantReason: ReasonPrivateAddress},
		{name: "name to loopback without private networks", url: "http://api.test:" + p + "/ok",
			rules: func(r *Rules) { r.PrivateNetworks = nil }, wantReason: ReasonPrivateAddress, wantAddr: "127.0.0.1"},
		{name: "name to public and private", url: "http://mixed.test/",
			setup: func(tr *testResolver) { tr.set("mixed.test", "93.184.216.34", "10.0.0.1") },
			rules: func(r *Rules) { r.Hosts = []string{"mixed.test"}; r.Ports = []int{80} }, wantReason: ReasonPrivateAddress, wantAddr: "10.0.0.1"},
		{name: "name to v4-mapped private", url: "http://mapped.test/",
			setup: func(tr *testResolver) { tr.set("mapped.test", "::ffff:192.168.1.1") },
			rules: func(r *Rules) { r.Hosts = []string{"mapped.test"}; r.Ports = []int{80} }, wantReason: ReasonPrivateAddress},
		{name: "unresolvable", url: "http://nowhere.test/", rules: func(r *Rules) { r.Hosts = []string{"*"}; r.Ports = []int{80} }, wantReason: ReasonResolveFailed},
		{name: "redirect to metadata", url: "http://api.test:" + p + "/to-meta",
			rules: func(r *Rules) { r.Hosts = []string{"*"}; r.Ports = []int{80, port} }, wantReason: ReasonRedirectDenied, wantDetail: ReasonPrivateAddress},
		{name: "redirect to non-granted host", url: "http://api.test:" + p + "/to-other", wantReason: ReasonRedirectDenied, wantDetail: ReasonHostNotAllowed},
		{name: "redirect to granted host", url: "http://api.test:" + p + "/to-other",
			setup: func(tr *testResolver) { tr.set("evil.test", "127.0.0.1") },
			rules: func(r *Rules) { r.Hosts = []string{"api.test", "evil.test"} }},
		{name: "same-origin redirect", url: "http://api.test:" + p + "/to-ok"},
		{name: "too many redirects", url: "http://api.test:" + p + "/loop", wantReason: ReasonRedirectLimit},
		{name: "redirect not followed with MaxRedirects 0", url: "http://api.test:" + p + "/loop", rules: func(r *Rules) { r.MaxRedirects = 0 }},
		{name: "case and trailing dot", url: "http://API.Test.:" + p + "/ok"},
		{name: "wildcard subdomain", url: "http://api.test:" + p + "/ok", rules: func(r *Rules) { r.Hosts = []string{"*.test"} }},
		{name: "wildcard is not the apex", url: "http://test:" + p + "/ok", rules: func(r *Rules) { r.Hosts = []string{"*.test"} }, wantReason: ReasonHostNotAllowed},
		{name: "suffix is not a subdomain", url: "http://evilapi.test:" + p + "/ok", rules: func(r *Rules) { r.Hosts = []string{"*.api.test", "api.test"} }, wantReason: ReasonHostNotAllowed},
		{name: "idn look-alike", url: "http://\u0430pi.test:" + p + "/ok", wantReason: ReasonInvalidURL},
		{name: "idn look-alike punycode", url: "http://xn--pi-6kc.test:" + p + "/ok", wantReason: ReasonHostNotAllowed},
		{name: "wrong scheme", url: "https://api.test:" + p + "/ok", wantReason: ReasonSchemeNotAllowed},
		{name: "non-http scheme", url: "ftp://api.test:" + p + "/ok", rules: func(r *Rules) { r.Schemes = []string{"ftp", "http"} }, wantReason: ReasonSchemeNotAllowed},
		{name: "wrong port", url: "http://api.test:8081/ok", wantReason: ReasonPortNotAllowed},
		{name: "default port not granted", url: "http://api.test/ok", wantReason: ReasonPortNotAllowed},
		{name: "userinfo", url: "http://user:pw@api.test:" + p + "/ok", wantReason: ReasonInvalidURL},
		{name: "zone id", url: "http://[fe80::1%25lo]:" + p + "/ok", rules: anyHost, wantReason: ReasonInvalidURL},
		{name: "numeric host", url: "http://127.1:" + p + "/ok", rules: anyHost, wantReason: ReasonInvalidURL},
		{name: "hex host", url: "http://0x7f000001:" + p + "/ok", rules: anyHost, wantReason: ReasonInvalidURL},
		{name: "relative URL", url: "/ok", wantReason: ReasonInvalidURL},
		{name: "empty host", url: "http:///ok", wantReason: ReasonInvalidURL},
		{name: "method", url: "http://api.test:" + p + "/ok", method: "CONNECT", wantReason: ReasonMethodNotAllowed},
		{name: "host header", url: "http://api.test:" + p + "/ok", header: map[string]string{"Host": "evil.test"}, wantReason: ReasonHeaderNotAllowed},
		{name: "proxy header", url: "http://api.test:" + p + "/ok", header: map[string]string{"Proxy-Authorization": "x"}, wantReason: ReasonHeaderNotAllowed},
		{name: "header injection by value", url: "http://api.test:" + p + "/ok", header: map[string]string{"x-a": "1\r\nHost: evil"}, wantReason: ReasonHeaderNotAllowed},
		{name: "oversized response", url: "http://api.test:" + p + "/big", wantErr: ErrResponseTooLarge},
		{name: "oversized chunked response", url: "http://api.test:" + p + "/chunked-big", wantErr: ErrResponseTooLarge},
		{name: "oversized request", url: "http://api.test:" + p + "/echo", method: "POST", body: make([]byte, 1025), wantErr: ErrRequestTooLarge},
		{name: "request at the limit", url: "http://api.test:" + p + "/echo", method: "POST", body: make([]byte, 1024)},
		{name: "content-length lie", url: "http://api.test:" + strconv.Itoa(lie) + "/", rules: func(r *Rules) { r.Ports = []int{lie} }, wantErr: ErrUpstream},
		{name: "connection refused", url: "http://api.test:" + strconv.Itoa(refused) + "/", rules: func(r *Rules) { r.Ports = []int{refused} }, wantErr: ErrUpstream},
		{name: "slow server", url: "http://api.test:" + p + "/slow", rules: func(r *Rules) { r.RequestTimeout = 200 * time.Millisecond }, wantErr: ErrTimeout},
		{name: "slow body", url: "http://api.test:" + p + "/slow-body", rules: func(r *Rules) { r.RequestTimeout = 200 * time.Millisecond }, wantErr: ErrTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := newResolver().set("api.test", "127.0.0.1")
			if tc.setup != nil {
				tc.setup(res)
			}
			rules := localRules([]string{"api.test"}, port)
			if tc.rules != nil {
				tc.rules(&rules)
			}
			c := New(Config{Resolver: res})
			resp, err := c.Do(context.Background(), rules, Request{Method: tc.method, URL: tc.url, Header: tc.header, Body: tc.body})
			wantOutcome(t, err, tc.wantReason, tc.wantErr, tc.wantDetail)
			if tc.wantAddr != "" {
				var de *DenyError
				errors.As(err, &de)
				if de.Addr != tc.wantAddr {
					t.Fatalf("deny addr %q, want %q", de.Addr, tc.wantAddr)
				}
			}
			if err != nil {
				if resp != nil {
					t.Fatal("response with an error")
				}
				return
			}
			if resp.Addr.Addr() != netip.MustParseAddr("127.0.0.1") || resp.Addr.Port() == 0 {
				t.Fatalf("connected to %v, want 127.0.0.1", resp.Addr)
			}
		})
	}
}

func TestResponses(t *testing.T) {
	release := make(chan struct{})
	_, port := server(t, testMux(release))
	releaseOnCleanup(t, release)
	p := strconv.Itoa(port)
	longLie := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nhello"+strings.Repeat("z", 8000))
	tests := []struct {
		name          string
		url           string
		method        string
		body          string
		rules         func(*Rules)
		wantStatus    int
		wantBody      string
		wantRedirects int
		wantFinal     string
		wantHeader    map[string]string
	}{
		{name: "get", url: "http://api.test:" + p + "/ok", wantStatus: 200, wantBody: "hello", wantFinal: "http://api.test:" + p + "/ok",
			wantHeader: map[string]string{"content-length": "5", "content-type": "text/plain; charset=utf-8"}},
		{name: "normalized final URL", url: "http://API.TEST.:" + p + "/ok#frag", wantStatus: 200, wantBody: "hello", wantFinal: "http://api.test:" + p + "/ok"},
		{name: "head", url: "http://api.test:" + p + "/ok", method: "HEAD", wantStatus: 200, wantBody: ""},
		{name: "head of a body over the cap", url: "http://api.test:" + p + "/big", method: "HEAD", wantStatus: 200, wantBody: "",
			wantHeader: map[string]string{"content-length": "5000"}},
		{name: "post body", url: "http://api.test:" + p + "/echo", method: "POST", body: "payload", wantStatus: 200, wantBody: "POST payload"},
		{name: "redirect followed", url: "http://api.test:" + p + "/to-ok", wantStatus: 200, wantBody: "hello", wantRedirects: 1, wantFinal: "http://api.test:" + p + "/ok"},
		{name: "redirect returned with MaxRedirects 0", url: "http://api.test:" + p + "/to-ok", rules: func(r *Rules) { r.MaxRedirects = 0 },
			wantStatus: 302, wantBody: "<a href=\"/ok\">Found</a>.\n\n", wantHeader: map[string]string{"location": "/ok"}},
		{name: "content-length shorter than body", url: "http://api.test:" + strconv.Itoa(longLie) + "/", rules: func(r *Rules) { r.Ports = []int{longLie} },
			wantStatus: 200, wantBody: "hello", wantHeader: map[string]string{"set-cookie": "a=1, b=2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules := localRules([]string{"api.test"}, port)
			if tc.rules != nil {
				tc.rules(&rules)
			}
			c := New(Config{Resolver: newResolver().set("api.test", "127.0.0.1")})
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			resp, err := c.Do(context.Background(), rules, Request{Method: tc.method, URL: tc.url, Body: body})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != tc.wantStatus || string(resp.Body) != tc.wantBody || resp.Redirects != tc.wantRedirects {
				t.Fatalf("got %d %q after %d redirects, want %d %q after %d", resp.Status, resp.Body, resp.Redirects, tc.wantStatus, tc.wantBody, tc.wantRedirects)
			}
			if tc.wantFinal != "" && resp.FinalURL != tc.wantFinal {
				t.Fatalf("final URL %q, want %q", resp.FinalURL, tc.wantFinal)
			}
			for k, v := range tc.wantHeader {
				if resp.Header[k] != v {
					t.Fatalf("header %q = %q, want %q (all: %v)", k, resp.Header[k], v, resp.Header)
				}
			}
			for k := range resp.Header {
				if k != strings.ToLower(k) {
					t.Fatalf("header name %q is not lower-case", k)
				}
			}
			if resp.BytesReceived != int64(len(tc.wantBody)) || resp.BytesSent != int64(len(tc.body)) {
				t.Fatalf("bytes sent %d received %d", resp.BytesSent, resp.BytesReceived)
			}
		})
	}
}

// TestRedirectMethods checks which redirects keep the method and body.
func TestRedirectMethods(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	mux := http.NewServeMux()
	mux.HandleFunc("/r/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.Header().Set("Location", "/final")
		w.WriteHeader(code)
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %q %q", r.Method, b, r.Header.Get("Content-Type")))
		mu.Unlock()
		fmt.Fprintf(w, "%s %s", r.Method, b)
	})
	_, port := server(t, mux)
	tests := []struct {
		code     int
		method   string
		wantBody string
		wantSent int64
	}{
		{301, "POST", "GET ", 4},
		{302, "POST", "GET ", 4},
		{303, "PUT", "GET ", 4},
		{303, "HEAD", "", 0},
		{307, "POST", "POST data", 8},
		{308, "PATCH", "PATCH data", 8},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d %s", tc.code, tc.method), func(t *testing.T) {
			c := New(Config{Resolver: newResolver().set("api.test", "127.0.0.1")})
			var body []byte
			if tc.method != "HEAD" {
				body = []byte("data")
			}
			resp, err := c.Do(context.Background(), localRules([]string{"api.test"}, port), Request{
				Method: tc.method, URL: fmt.Sprintf("http://api.test:%d/r/%d", port, tc.code), Body: body,
				Header: map[string]string{"Content-Type": "text/plain"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != tc.wantBody || resp.Redirects != 1 || resp.BytesSent != tc.wantSent {
				t.Fatalf("got %q after %d redirects, %d bytes sent; want %q, %d", resp.Body, resp.Redirects, resp.BytesSent, tc.wantBody, tc.wantSent)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.HasPrefix(s, "GET") && !strings.HasSuffix(s, `""`) {
			t.Errorf("a body-less redirect kept its content-type: %s", s)
		}
	}
}

// TestDNSRebinding: a resolver that answers an allowed address first and
// something else afterwards. Each hop must resolve exactly once and connect
// to the address that was checked.
func TestDNSRebinding(t *testing.T) {
	var mu sync.Mutex
	hits := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		io.WriteString(w, "pinned")
	})
	mux.HandleFunc("/again", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok", http.StatusFound)
	})
	_, port := server(t, mux)
	rules := localRules([]string{"rebind.test"}, port)
	u := fmt.Sprintf("http://rebind.test:%d", port)

	t.Run("single hop", func(t *testing.T) {
		// A second lookup would answer loopback on another address, which
		// the rules do not allow; a dial after a second lookup would fail.
		res := newResolver().seq("rebind.test", []string{"127.0.0.1"}, []string{"127.0.0.2"})
		resp, err := New(Config{Resolver: res}).Do(context.Background(), rules, Request{URL: u + "/ok"})
		if err != nil {
			t.Fatal(err)
		}
		if n := res.count("rebind.test"); n != 1 {
			t.Fatalf("%d lookups, want 1", n)
		}
		if want := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)); resp.Addr != want || string(resp.Body) != "pinned" {
			t.Fatalf("connected to %v (%q), want %v", resp.Addr, resp.Body, want)
		}
	})
	t.Run("second hop rebinds", func(t *testing.T) {
		res := newResolver().seq("rebind.test", []string{"127.0.0.1"}, []string{"127.0.0.2"})
		_, err := New(Config{Resolver: res}).Do(context.Background(), rules, Request{URL: u + "/again"})
		wantOutcome(t, err, ReasonRedirectDenied, nil, ReasonPrivateAddress)
		if n := res.count("rebind.test"); n != 2 {
			t.Fatalf("%d lookups, want 2 (one per hop)", n)
		}
	})
	t.Run("one lookup per hop", func(t *testing.T) {
		res := newResolver().set("rebind.test", "127.0.0.1")
		resp, err := New(Config{Resolver: res}).Do(context.Background(), rules, Request{URL: u + "/again"})
		if err != nil {
			t.Fatal(err)
		}
		if n := res.count("rebind.test"); n != 2 || resp.Redirects != 1 {
			t.Fatalf("%d lookups for %d redirects, want 2 for 1", n, resp.Redirects)
		}
	})
	t.Run("unreachable first address falls through to the next checked one", func(t *testing.T) {
		rules := rules
		rules.PrivateNetworks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		// 127.0.0.3 has no listener on the port: connection refused, then
		// the second checked address answers.
		res := newResolver().set("rebind.test", "127.0.0.3", "127.0.0.1")
		resp, err := New(Config{Resolver: res}).Do(context.Background(), rules, Request{URL: u + "/ok"})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Addr.Addr() != netip.MustParseAddr("127.0.0.1") {
			t.Fatalf("connected to %v", resp.Addr)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if hits != 3 {
		t.Fatalf("server saw %d requests, want 3", hits)
	}
}

func TestIPv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skip("no IPv6 loopback:", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "v6") })}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	port := portOf(t, ln.Addr())
	rules := localRules([]string{"six.test", "::1"}, port)
	rules.PrivateNetworks = []netip.Prefix{netip.MustParsePrefix("::1/128")}
	c := New(Config{Resolver: newResolver().set("six.test", "::1")})
	for _, u := range []string{fmt.Sprintf("http://six.test:%d/", port), fmt.Sprintf("http://[::1]:%d/", port)} {
		resp, err := c.Do(context.Background(), rules, Request{URL: u})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if string(resp.Body) != "v6" || resp.Addr != netip.AddrPortFrom(netip.IPv6Loopback(), uint16(port)) {
			t.Fatalf("%s: got %q from %v", u, resp.Body, resp.Addr)
		}
	}
	// Without the private network, the same request is refused.
	rules.PrivateNetworks = nil
	_, err = c.Do(context.Background(), rules, Request{URL: fmt.Sprintf("http://six.test:%d/", port)})
	wantOutcome(t, err, ReasonPrivateAddress, nil, "")
}

func TestTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	mux := testMux(release)
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		mux.ServeHTTP(w, r)
	})
	_, port := server(t, wrapped)
	releaseOnCleanup(t, release)
	c := New(Config{Resolver: newResolver().set("api.test", "127.0.0.1")})
	rules := localRules([]string{"api.test"}, port)
	u := fmt.Sprintf("http://api.test:%d/slow", port)

	t.Run("guest timeout tightens the rules", func(t *testing.T) {
		_, err := c.Do(context.Background(), rules, Request{URL: u, Timeout: 200 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || errcode.Of(err) != "egress_timeout" {
			t.Fatalf("error %v, want a timeout", err)
		}
		<-started
	})
	t.Run("context deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := c.Do(ctx, rules, Request{URL: u})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("error %v, want a timeout", err)
		}
		<-started
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-started
			cancel()
		}()
		_, err := c.Do(ctx, rules, Request{URL: u})
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
			t.Fatalf("error %v, want a cancellation", err)
		}
	})
	t.Run("cancelled before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Do(ctx, rules, Request{URL: u})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want a cancellation", err)
		}
	})
}

func TestInvalidRulesAndRequests(t *testing.T) {
	good := localRules([]string{"api.test"}, 80)
	tests := []struct {
		name    string
		rules   func(*Rules)
		inject  []Injection
		header  map[string]string
		url     string
		wantErr error
		reason  string
	}{
		{name: "zero timeout", rules: func(r *Rules) { r.RequestTimeout = 0 }, wantErr: ErrInvalidRules},
		{name: "negative redirects", rules: func(r *Rules) { r.MaxRedirects = -1 }, wantErr: ErrInvalidRules},
		{name: "negative response cap", rules: func(r *Rules) { r.MaxResponseBytes = -1 }, wantErr: ErrInvalidRules},
		{name: "zero Rules", rules: func(r *Rules) { *r = Rules{RequestTimeout: time.Second} }, wantErr: ErrDenied, reason: ReasonSchemeNotAllowed},
		{name: "injection with both", inject: []Injection{{Header: "a", Query: "b", Value: "v"}}, wantErr: ErrInvalidRequest},
		{name: "injection with neither", inject: []Injection{{Value: "v"}}, wantErr: ErrInvalidRequest},
		{name: "injection value with newline", inject: []Injection{{Header: "authorization", Value: "x\r\ny"}}, wantErr: ErrInvalidRequest},
		{name: "injection into host", inject: []Injection{{Header: "Host", Value: "v"}}, wantErr: ErrDenied, reason: ReasonHeaderNotAllowed},
		{name: "injected twice", inject: []Injection{{Header: "a", Value: "1"}, {Header: "A", Value: "2"}}, wantErr: ErrInvalidRequest},
		{name: "guest sets injected header", inject: []Injection{{Header: "authorization", Value: "v"}}, header: map[string]string{"Authorization": "mine"}, wantErr: ErrDenied, reason: ReasonHeaderNotAllowed},
		{name: "guest sets injected query", inject: []Injection{{Query: "key", Value: "v"}}, url: "http://api.test/?key=mine", wantErr: ErrDenied, reason: ReasonQueryNotAllowed},
		{name: "guest header twice", header: map[string]string{"X-A": "1", "x-a": "2"}, wantErr: ErrDenied, reason: ReasonHeaderNotAllowed},
		{name: "headers too large", header: map[string]string{"x-big": strings.Repeat("a", MaxRequestHeaderBytes)}, wantErr: ErrRequestTooLarge},
		{name: "URL too long", url: "http://api.test/" + strings.Repeat("a", MaxURLBytes), wantErr: ErrDenied, reason: ReasonInvalidURL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			if tc.rules != nil {
				tc.rules(&r)
			}
			u := tc.url
			if u == "" {
				u = "http://api.test/"
			}
			// The resolver has no answers: nothing may get as far as a lookup.
			res := newResolver()
			_, err := New(Config{Resolver: res}).Do(context.Background(), r, Request{URL: u, Inject: tc.inject, Header: tc.header})
			wantOutcome(t, err, tc.reason, tc.wantErr, "")
			if res.count("api.test") != 0 {
				t.Fatal("a refused request was resolved")
			}
		})
	}
}

// TestInvalidHeaderNameRuleCutOnRune checks that the quoted name in the
// refusal of an invalid header name is cut on a rune boundary: a cut
// through a multi-byte rune would quote a stray byte as a \x escape.
func TestInvalidHeaderNameRuleCutOnRune(t *testing.T) {
	// "x" first puts byte 64 inside a 2-byte rune.
	name := "x" + strings.Repeat("é", 40)
	res := newResolver()
	_, err := New(Config{Resolver: res}).Do(context.Background(), localRules([]string{"api.test"}, 80), Request{URL: "http://api.test/", Header: map[string]string{name: "v"}})
	wantOutcome(t, err, ReasonHeaderNotAllowed, ErrDenied, "not a valid HTTP header name")
	var de *DenyError
	if !errors.As(err, &de) {
		t.Fatalf("error %v is not a *DenyError", err)
	}
	if want := strconv.Quote(name[:63] + "..."); de.Rule != want {
		t.Errorf("rule %s, want %s", de.Rule, want)
	}
}

func TestConcurrent(t *testing.T) {
	_, port := server(t, testMux(nil))
	c := New(Config{Resolver: newResolver().set("api.test", "127.0.0.1")})
	rules := localRules([]string{"api.test"}, port)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/ok"
			if i%2 == 1 {
				path = "/to-ok"
			}
			resp, err := c.Do(context.Background(), rules, Request{URL: fmt.Sprintf("http://api.test:%d%s", port, path)})
			if err == nil && string(resp.Body) != "hello" {
				err = fmt.Errorf("body %q", resp.Body)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckConn(t *testing.T) {
	r := localRules([]string{"*"}, 80)
	ap := netip.MustParseAddrPort
	tests := []struct {
		name           string
		pinned, remote netip.AddrPort
		want           string
	}{
		{"same", ap("127.0.0.1:80"), ap("127.0.0.1:80"), ""},
		{"mapped remote", ap("127.0.0.1:80"), ap("[::ffff:127.0.0.1]:80"), ""},
		{"other address", ap("127.0.0.1:80"), ap("127.0.0.2:80"), ReasonAddressMismatch},
		{"other port", ap("127.0.0.1:80"), ap("127.0.0.1:81"), ReasonAddressMismatch},
		{"no remote", ap("127.0.0.1:80"), netip.AddrPort{}, ReasonAddressMismatch},
		{"pinned but not allowed", ap("10.0.0.1:80"), ap("10.0.0.1:80"), ReasonPrivateAddress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			de := checkConn(&r, "h", tc.pinned, tc.remote)
			got := ""
			if de != nil {
				got = de.Reason
			}
			if got != tc.want {
				t.Fatalf("reason %q, want %q", got, tc.want)
			}
		})
	}
}

func BenchmarkDo(b *testing.B) {
	_, port := server(b, testMux(nil))
	c := New(Config{Resolver: newResolver().set("api.test", "127.0.0.1")})
	rules := localRules([]string{"api.test"}, port)
	req := Request{URL: fmt.Sprintf("http://api.test:%d/ok", port)}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Do(context.Background(), rules, req)
		if err != nil || string(resp.Body) != "hello" {
			b.Fatal(err)
		}
	}
}
