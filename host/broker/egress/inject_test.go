package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	headerSecret = "Bearer s3cr3t"
	// querySecret needs escaping in a query: the server must still get it
	// exactly.
	querySecret = "q-s3cr3t/+&= x"
)

// recorder remembers what the second origin's server was sent.
type recorder struct {
	mu   sync.Mutex
	reqs []string
}

func (r *recorder) add(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, fmt.Sprintf("query=%q auth=%q key=%q cookie=%q custom=%q",
		req.URL.RawQuery, req.Header.Get("Authorization"), req.Header.Get("X-Api-Key"), req.Header.Get("Cookie"), req.Header.Get("X-Custom")))
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// injectionServers starts the origin (api.test) and a second origin
// (other.test) and returns the client, rules and base URLs.
func injectionServers(t *testing.T) (c *Client, rules Rules, a, b string, rec *recorder) {
	t.Helper()
	rec = &recorder{}
	var bURL, aURL string
	muxB := http.NewServeMux()
	muxB.HandleFunc("/record", func(w http.ResponseWriter, r *http.Request) {
		rec.add(r)
		io.WriteString(w, "recorded")
	})
	muxB.HandleFunc("/back", func(w http.ResponseWriter, r *http.Request) {
		rec.add(r)
		http.Redirect(w, r, aURL+"/check-auth", http.StatusFound)
	})
	muxA := http.NewServeMux()
	muxA.HandleFunc("/check-auth", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != headerSecret {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "authorized")
	})
	muxA.HandleFunc("/check-query", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if len(q["api_key"]) != 1 || q.Get("api_key") != querySecret || q.Get("page") != "2" {
			http.Error(w, "bad query", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "query ok")
	})
	muxA.HandleFunc("/to-auth", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/check-auth", http.StatusFound)
	})
	muxA.HandleFunc("/to-self-echo", func(w http.ResponseWriter, r *http.Request) {
		// Same origin, echoing the key as many servers do.
		http.Redirect(w, r, "/check-query?page=2&api_key="+url.QueryEscape(r.URL.Query().Get("api_key")), http.StatusFound)
	})
	muxA.HandleFunc("/to-b", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, bURL+"/record?x=1", http.StatusFound)
	})
	muxA.HandleFunc("/to-b-back", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, bURL+"/back", http.StatusFound)
	})
	muxA.HandleFunc("/to-b-leak", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, bURL+"/record?leak="+url.QueryEscape(r.URL.Query().Get("api_key")), http.StatusFound)
	})
	muxA.HandleFunc("/to-b-leak-lower", func(w http.ResponseWriter, r *http.Request) {
		// The key again, with lower-case escapes this time.
		esc := regexp.MustCompile("%[0-9A-F]{2}").ReplaceAllStringFunc(url.QueryEscape(r.URL.Query().Get("api_key")), strings.ToLower)
		http.Redirect(w, r, bURL+"/record?leak="+esc, http.StatusFound)
	})
	_, portA := server(t, muxA)
	_, portB := server(t, muxB)
	aURL = "http://api.test:" + strconv.Itoa(portA)
	bURL = "http://other.test:" + strconv.Itoa(portB)
	res := newResolver().set("api.test", "127.0.0.1").set("other.test", "127.0.0.1")
	return New(Config{Resolver: res}), localRules([]string{"api.test", "other.test"}, portA, portB), aURL, bURL, rec
}

func TestInjection(t *testing.T) {
	c, rules, a, _, rec := injectionServers(t)
	hdr := Injection{Header: "Authorization", Value: headerSecret}
	query := Injection{Query: "api_key", Value: querySecret}
	key := Injection{Header: "x-api-key", Value: "k-s3cr3t"}
	tests := []struct {
		name       string
		url        string
		inject     []Injection
		header     map[string]string
		wantStatus int
		wantBody   string
		wantB      []string // what the other origin must have seen
		wantReason string
		wantDetail string
	}{
		{name: "header reaches the server", url: a + "/check-auth", inject: []Injection{hdr}, wantStatus: 200, wantBody: "authorized"},
		{name: "no header, no access", url: a + "/check-auth", wantStatus: 401, wantBody: "no\n"},
		{name: "query reaches the server", url: a + "/check-query?page=2", inject: []Injection{query}, wantStatus: 200, wantBody: "query ok"},
		{name: "same-origin redirect keeps the header", url: a + "/to-auth", inject: []Injection{hdr}, wantStatus: 200, wantBody: "authorized"},
		{name: "same-origin redirect echoing the key", url: a + "/to-self-echo", inject: []Injection{query}, wantStatus: 200, wantBody: "query ok"},
		{name: "cross-origin redirect drops secrets and credentials", url: a + "/to-b", inject: []Injection{key, query},
			header:     map[string]string{"Authorization": "guest-token", "Cookie": "c=1", "X-Custom": "kept"},
			wantStatus: 200, wantBody: "recorded",
			wantB: []string{`query="x=1" auth="" key="" cookie="" custom="kept"`}},
		{name: "no secret after leaving the origin", url: a + "/to-b-back", inject: []Injection{hdr}, wantStatus: 401, wantBody: "no\n",
			wantB: []string{`query="" auth="" key="" cookie="" custom=""`}},
		{name: "cross-origin redirect carrying the secret", url: a + "/to-b-leak", inject: []Injection{query},
			wantReason: ReasonRedirectDenied, wantDetail: ReasonSecretInRedirect},
		{name: "cross-origin redirect carrying the secret, escaped differently", url: a + "/to-b-leak-lower", inject: []Injection{query},
			wantReason: ReasonRedirectDenied, wantDetail: ReasonSecretInRedirect},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.all())
			resp, err := c.Do(context.Background(), rules, Request{URL: tc.url, Inject: tc.inject, Header: tc.header})
			if tc.wantReason != "" {
				wantOutcome(t, err, tc.wantReason, nil, tc.wantDetail)
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Status != tc.wantStatus || string(resp.Body) != tc.wantBody {
					t.Fatalf("got %d %q, want %d %q", resp.Status, resp.Body, tc.wantStatus, tc.wantBody)
				}
				if strings.Contains(resp.FinalURL, "s3cr3t") || strings.Contains(resp.FinalURL, "api_key") {
					t.Fatalf("final URL %q shows an injected parameter", resp.FinalURL)
				}
			}
			got := rec.all()[before:]
			if strings.Join(got, "\n") != strings.Join(tc.wantB, "\n") {
				t.Fatalf("other origin saw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantB, "\n"))
			}
		})
	}
}

// echoLineServer answers each connection with a malformed status line that
// repeats the request line (and so any query secret in it).
func echoLineServer(t *testing.T) int {
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
			br := bufio.NewReader(c)
			first, _ := br.ReadString('\n')
			for {
				line, err := br.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
			}
			// A status line without a space: net/http quotes it whole.
			io.WriteString(c, strings.ReplaceAll(strings.TrimSpace(first), " ", "_")+"\r\n\r\n")
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return portOf(t, ln.Addr())
}

// errorTexts returns the text of err and of every error in its chain.
func errorTexts(err error) []string {
	if err == nil {
		return nil
	}
	out := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, errorTexts(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, errorTexts(e)...)
		}
	}
	return out
}

// TestSecretsNeverInErrors drives every failure mode with injected secrets
// and scans each error, and every error in its chain, for them.
func TestSecretsNeverInErrors(t *testing.T) {
	const secret = "s3cr3t"
	release := make(chan struct{})
	mux := testMux(release)
	mux.(*http.ServeMux).HandleFunc("/to-secret-host", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+secret+".evil.test/", http.StatusFound)
	})
	mux.(*http.ServeMux).HandleFunc("/to-secret-query", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://evil.test/?k="+secret, http.StatusFound)
	})
	_, port := server(t, mux)
	releaseOnCleanup(t, release)
	echo := echoLineServer(t)
	refused := closedPort(t)
	res := newResolver().set("api.test", "127.0.0.1").set("evil.test", "127.0.0.1")
	res.fail["broken.test"] = errors.New("resolver exploded near " + secret)
	c := New(Config{Resolver: res})
	inject := []Injection{{Header: "authorization", Value: "Bearer " + secret}, {Query: "api_key", Value: secret}}
	base := func(r *Rules) {}
	p := strconv.Itoa(port)
	tests := []struct {
		name    string
		url     string
		method  string
		body    []byte
		inject  []Injection
		rules   func(*Rules)
		wantErr error
	}{
		{name: "host not granted", url: "http://nope.test:" + p + "/", wantErr: ErrDenied},
		{name: "private address", url: "http://api.test:" + p + "/ok", rules: func(r *Rules) { r.PrivateNetworks = nil }, wantErr: ErrDenied},
		{name: "resolver error", url: "http://broken.test:" + p + "/", rules: func(r *Rules) { r.Hosts = []string{"*"} }, wantErr: ErrDenied},
		{name: "timeout", url: "http://api.test:" + p + "/slow", rules: func(r *Rules) { r.RequestTimeout = 200 * time.Millisecond }, wantErr: ErrTimeout},
		{name: "connection refused", url: "http://api.test:" + strconv.Itoa(refused) + "/", rules: func(r *Rules) { r.Ports = []int{refused} }, wantErr: ErrUpstream},
		{name: "malformed response echoing the URL", url: "http://api.test:" + strconv.Itoa(echo) + "/", rules: func(r *Rules) { r.Ports = []int{echo} }, wantErr: ErrUpstream},
		{name: "tls to a plain server", url: "https://api.test:" + p + "/ok", rules: func(r *Rules) { r.Schemes = []string{"https"} }, wantErr: ErrUpstream},
		{name: "response too large", url: "http://api.test:" + p + "/big", wantErr: ErrResponseTooLarge},
		{name: "request too large", url: "http://api.test:" + p + "/echo", method: "POST", body: make([]byte, 2048), wantErr: ErrRequestTooLarge},
		{name: "redirect to a host named after the secret", url: "http://api.test:" + p + "/to-secret-host", wantErr: ErrDenied},
		{name: "redirect carrying the secret", url: "http://api.test:" + p + "/to-secret-query", rules: func(r *Rules) { r.Hosts = []string{"*"}; r.Ports = []int{80, port} }, wantErr: ErrDenied},
		{name: "redirect limit", url: "http://api.test:" + p + "/loop", wantErr: ErrDenied},
		{name: "bad injection value", url: "http://api.test:" + p + "/ok", inject: []Injection{{Header: "x-k", Value: secret + "\n"}}, wantErr: ErrInvalidRequest},
		{name: "invalid rules", url: "http://api.test:" + p + "/ok", rules: func(r *Rules) { r.RequestTimeout = 0 }, wantErr: ErrInvalidRules},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rules := localRules([]string{"api.test"}, port)
			if tc.rules == nil {
				tc.rules = base
			}
			tc.rules(&rules)
			in := inject
			if tc.inject != nil {
				in = tc.inject
			}
			_, err := c.Do(context.Background(), rules, Request{Method: tc.method, URL: tc.url, Body: tc.body, Inject: in})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			for _, text := range errorTexts(err) {
				if strings.Contains(text, secret) {
					t.Fatalf("error text holds the secret: %s", text)
				}
			}
		})
	}
}
