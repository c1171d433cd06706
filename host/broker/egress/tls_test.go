package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
)

func TestHTTPS(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls %s %s", r.Host, r.Header.Get("Accept-Encoding"))
	})
	mux.HandleFunc("/downgrade", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/ok", http.StatusFound)
	})
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	port := portOf(t, srv.Listener.Addr())
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	res := newResolver().set("example.com", "127.0.0.1").set("api.example.com", "127.0.0.1").set("api.test", "127.0.0.1")
	rules := Rules{
		Hosts:            []string{"example.com", "*.example.com", "api.test", "127.0.0.1"},
		Schemes:          []string{"https"},
		Ports:            []int{port},
		PrivateNetworks:  []netip.Prefix{loopback4},
		MaxRedirects:     2,
		MaxResponseBytes: 1 << 10,
		RequestTimeout:   srvTimeout,
	}
	tests := []struct {
		name       string
		host       string
		path       string
		tlsConfig  *tls.Config
		wantBody   string
		wantErr    error
		wantReason string
		wantOp     string
	}{
		{name: "name the certificate covers", host: "example.com", tlsConfig: &tls.Config{RootCAs: roots}, wantBody: fmt.Sprintf("tls example.com:%d ", port)},
		{name: "wildcard name", host: "api.example.com", tlsConfig: &tls.Config{RootCAs: roots}, wantBody: fmt.Sprintf("tls api.example.com:%d ", port)},
		{name: "IP address in the certificate", host: "127.0.0.1", tlsConfig: &tls.Config{RootCAs: roots}, wantBody: fmt.Sprintf("tls 127.0.0.1:%d ", port)},
		{name: "name the certificate does not cover", host: "api.test", tlsConfig: &tls.Config{RootCAs: roots}, wantErr: ErrUpstream, wantOp: "tls handshake"},
		{name: "unknown authority", host: "example.com", wantErr: ErrUpstream, wantOp: "tls handshake"},
		{name: "InsecureSkipVerify is ignored", host: "example.com", tlsConfig: &tls.Config{InsecureSkipVerify: true}, wantErr: ErrUpstream, wantOp: "tls handshake"},
		{name: "downgrade redirect", host: "example.com", path: "/downgrade", tlsConfig: &tls.Config{RootCAs: roots}, wantReason: ReasonRedirectDenied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Config{Resolver: res, TLSConfig: tc.tlsConfig})
			path := tc.path
			if path == "" {
				path = "/ok"
			}
			resp, err := c.Do(context.Background(), rules, Request{URL: fmt.Sprintf("https://%s:%d%s", tc.host, port, path)})
			if tc.wantErr == nil && tc.wantReason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if string(resp.Body) != tc.wantBody {
					t.Fatalf("body %q, want %q", resp.Body, tc.wantBody)
				}
				return
			}
			wantOutcome(t, err, tc.wantReason, tc.wantErr, "")
			if tc.wantOp != "" {
				var ue *UpstreamError
				if !errors.As(err, &ue) || ue.Op != tc.wantOp || ue.Host != tc.host {
					t.Fatalf("error %v, want an UpstreamError of %q for %q", err, tc.wantOp, tc.host)
				}
				var hostErr x509.HostnameError
				var authErr x509.UnknownAuthorityError
				var certErr *tls.CertificateVerificationError
				if !errors.As(err, &hostErr) && !errors.As(err, &authErr) && !errors.As(err, &certErr) {
					t.Fatalf("error %v does not keep the certificate error", err)
				}
			}
		})
	}
}

// TestNoProxy: the proxy environment is never used.
func TestNoProxy(t *testing.T) {
	var proxied atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Store(true)
		io.WriteString(w, "proxy")
	}))
	t.Cleanup(proxy.Close)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	_, port := server(t, testMux(nil))
	c := New(Config{Resolver: newResolver().set("api.test", "127.0.0.1")})
	resp, err := c.Do(context.Background(), localRules([]string{"api.test"}, port), Request{URL: fmt.Sprintf("http://api.test:%d/ok", port)})
	if err != nil {
		t.Fatal(err)
	}
	if proxied.Load() || string(resp.Body) != "hello" {
		t.Fatalf("request went through the proxy: %q", resp.Body)
	}
}
