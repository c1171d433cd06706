package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

var testFS = fstest.MapFS{
	"index.html":            {Data: []byte("<!doctype html><title>t</title><script type=module src=/assets/app-abc123.js></script>")},
	"assets/app-abc123.js":  {Data: []byte("console.log(1)")},
	"assets/app-abc123.css": {Data: []byte("body{}")},
	"robots.txt":            {Data: []byte("User-agent: *\nDisallow: /\n")},
}

func TestHandler(t *testing.T) {
	h := newHandler(testFS)
	tests := []struct {
		name, method, path string
		status             int
		ctype, cache, body string
	}{
		{"root is the app", "GET", "/", 200, "text/html; charset=utf-8", CacheNoCache, "<!doctype html>"},
		{"index by name", "GET", "/index.html", 200, "text/html; charset=utf-8", CacheNoCache, "<!doctype html>"},
		{"spa route", "GET", "/skills/palyra.echo", 200, "text/html; charset=utf-8", CacheNoCache, "<!doctype html>"},
		{"deep spa route", "GET", "/skills/palyra.echo/tools/palyra.echo", 200, "text/html; charset=utf-8", CacheNoCache, "<!doctype html>"},
		{"hashed script", "GET", "/assets/app-abc123.js", 200, "text/javascript; charset=utf-8", CacheImmutable, "console.log(1)"},
		{"hashed style", "GET", "/assets/app-abc123.css", 200, "text/css; charset=utf-8", CacheImmutable, "body{}"},
		{"other file", "GET", "/robots.txt", 200, "text/plain; charset=utf-8", CacheNoCache, "User-agent"},
		{"missing asset", "GET", "/assets/app-old999.js", 404, "text/plain; charset=utf-8", CacheNoCache, "not found"},
		{"assets dir", "GET", "/assets/", 404, "text/plain; charset=utf-8", CacheNoCache, "not found"},
		{"traversal stays inside", "GET", "/../../etc/passwd", 200, "text/html; charset=utf-8", CacheNoCache, "<!doctype html>"},
		{"head", "HEAD", "/assets/app-abc123.js", 200, "text/javascript; charset=utf-8", CacheImmutable, ""},
		{"head of a route", "HEAD", "/events", 200, "text/html; charset=utf-8", CacheNoCache, ""},
		{"post refused", "POST", "/", 405, "text/plain; charset=utf-8", "", "method not allowed"},
		{"delete refused", "DELETE", "/assets/app-abc123.js", 405, "text/plain; charset=utf-8", "", "method not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			res := rec.Result()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
			if got := res.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			if got := res.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
			checkSecurityHeaders(t, res.Header)
			body, _ := io.ReadAll(res.Body)
			if tc.method == "HEAD" && len(body) != 0 {
				t.Errorf("HEAD has a body of %d bytes", len(body))
			}
			if !strings.Contains(string(body), tc.body) {
				t.Errorf("body %q does not contain %q", body, tc.body)
			}
			if tc.status == 405 && res.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow %q", res.Header.Get("Allow"))
			}
		})
	}
}

func checkSecurityHeaders(t *testing.T, h http.Header) {
	t.Helper()
	want := map[string]string{
		"Content-Security-Policy": ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s %q, want %q", k, got, v)
		}
	}
}

// TestEmbeddedBuild checks the committed build over a real server: the app
// loads, and every asset index.html names is served with its type.
func TestEmbeddedBuild(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	get := func(p string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, string(b)
	}
	res, index := get("/skills/palyra.report")
	if res.StatusCode != 200 || !strings.Contains(index, `<div id="root">`) {
		t.Fatalf("index: status %d, body %.200q", res.StatusCode, index)
	}
	checkSecurityHeaders(t, res.Header)
	if strings.Contains(index, "<script>") || strings.Contains(index, "style=") {
		t.Errorf("index.html has inline script or style, which the CSP forbids")
	}
	refs := regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(index, -1)
	if len(refs) < 2 {
		t.Fatalf("index.html names %d assets, want a script and a style sheet", len(refs))
	}
	for _, m := range refs {
		res, body := get(m[1])
		if res.StatusCode != 200 || body == "" {
			t.Errorf("%s: status %d, %d bytes", m[1], res.StatusCode, len(body))
		}
		want := "text/javascript; charset=utf-8"
		if strings.HasSuffix(m[1], ".css") {
			want = "text/css; charset=utf-8"
		}
		if got := res.Header.Get("Content-Type"); got != want {
			t.Errorf("%s: Content-Type %q, want %q", m[1], got, want)
		}
		if got := res.Header.Get("Cache-Control"); got != CacheImmutable {
			t.Errorf("%s: Cache-Control %q", m[1], got)
		}
	}
}

func TestMissingIndex(t *testing.T) {
	h := newHandler(fstest.MapFS{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "not built") {
		t.Fatalf("status %d, body %q", rec.Code, rec.Body.String())
	}
}
