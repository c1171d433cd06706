package daemon_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestConsoleServed: the console's page is served without the token at /
// and at its own routes, with a CSP that keeps it to the daemon's origin;
// the API around it still wants the token, and an unknown API path is a
// JSON error, not the page.
func TestConsoleServed(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(p.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, path := range []string{"/", "/skills/palyra.echo", "/events", "/cluster"} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, `<div id="root"`) {
			t.Errorf("GET %s: HTTP %d %s %.200s", path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
	}
	for _, path := range []string{"/v1/skills", "/v1/nothing", "/admin/v1/x", "/metrics"} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `"unauthorized"`) {
			t.Errorf("GET %s without the token: HTTP %d %.200s", path, resp.StatusCode, body)
		}
	}
	for _, path := range []string{"/v1/nothing", "/admin/v1/x", "/healthz/x"} {
		st, body := p.do(http.MethodGet, path, nil, nil)
		if st != http.StatusNotFound || errCode(t, body) != "route_not_found" {
			t.Errorf("GET %s: HTTP %d %.200s", path, st, body)
		}
	}
}
