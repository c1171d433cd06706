package daemon_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/daemon"
)

var recordSeeds = flag.Bool("record-seeds", false, "the API tests write the requests they send to testdata/fuzz/FuzzAPI (seeds of FuzzAPI)")

// recordAPISeed writes a request the API tests send as a FuzzAPI seed
// when -record-seeds is set. Artifacts (the install bodies) are kept
// when small; the fuzz target installs its own skill.
func recordAPISeed(t testing.TB, method, path string, req *http.Request) {
	if !*recordSeeds {
		return
	}
	var body []byte
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(rc)
		rc.Close()
	}
	if len(body) > 16<<10 {
		return
	}
	principal := "user:tester"
	data := fmt.Appendf(nil, "go test fuzz v1\nstring(%q)\nstring(%q)\nstring(%q)\n[]byte(%q)\n", method, path, principal, body)
	sum := sha256.Sum256(data)
	dir := filepath.Join("testdata", "fuzz", "FuzzAPI")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, hex.EncodeToString(sum[:8])), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// skillOutputRefusals are the codes of a tool output the host refuses.
var skillOutputRefusals = map[string]bool{
	"invalid_output": true, "output_too_large": true, "a2ui_invalid": true, "a2ui_limit_exceeded": true,
	"a2ui_invalid_patch": true, "a2ui_patch_conflict": true, "a2ui_surface_mismatch": true,
}

// FuzzAPI drives the daemon's real HTTP handler in process (a real host on
// a temporary state directory, one installed skill whose tool calls run
// in a real sidecar) with any method, path and query, principal header and
// body. The seeds are the requests the API tests send (recorded with
// go test -run 'TestHTTPAPI|TestA2UI|TestHooks|TestRefusals' -record-seeds).
// Whatever arrives, the answer is never a 5xx (a readyz before Serve, a
// call's own timeout_ms and a tool output the host refuses aside), and
// every error is the API's error body with a specific code.
func FuzzAPI(f *testing.F) {
	state := f.TempDir()
	ctx := context.Background()
	d, err := daemon.Open(ctx, daemon.Options{StateDir: state, SidecarPath: filepath.Join(bin, "palyra-sidecar")})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := d.Close(cctx); err != nil {
			f.Error(err)
		}
	})
	token, err := daemon.ReadToken(daemon.TokenPath(state))
	if err != nil {
		f.Fatal(err)
	}
	h := d.Handler()
	// serve sends one request to the handler; ok is false for a request
	// net/http refuses before any handler runs.
	serve := func(ctx context.Context, method, target, principal string, body []byte) (rec *httptest.ResponseRecorder, ok bool) {
		// The target is read as net/http's server reads a request line's
		// (url.ParseRequestURI: a '#' is part of the path there).
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return nil, false
		}
		req, err := http.NewRequestWithContext(ctx, method, "http://127.0.0.1/", bytes.NewReader(body))
		if err != nil {
			return nil, false
		}
		req.URL, req.RequestURI = u, target
		req.Header.Set("Authorization", "Bearer "+token)
		if principal != "" {
			if strings.ContainsFunc(principal, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
				// Not a header value a client can send.
				return nil, false
			}
			req.Header.Set(daemon.HeaderPrincipal, principal)
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec, true
	}
	// The skill every seed names: the hookprobe skill as test.probe_a.
	art := probeArtifact(f, "test.probe_a")
	pub := hex.EncodeToString(publisherKey.Public().(ed25519.PublicKey))
	if rec, _ := serve(ctx, http.MethodPost, "/v1/skills?trusted_publisher=test="+pub, "user:fuzz", art); rec.Code != http.StatusCreated {
		f.Fatalf("install: HTTP %d %s", rec.Code, rec.Body)
	}
	f.Add("GET", "/v1/skills?current_only=1&eligible_only=maybe", "user:fuzz", []byte(nil))
	f.Add("POST", "/v1/skills/test.probe_a/tools/test.probe/call", "user:fuzz", []byte(`{"input":{"hello":"world"},"timeout_ms":-9223372036854775808}`))
	f.Fuzz(func(t *testing.T, method, target, principal string, body []byte) {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return // net/http refuses it before any handler runs
		}
		if u.Path == "/mcp" || strings.HasPrefix(u.Path, "/mcp/") {
			return // the MCP transport: FuzzServer in host/mcpserver
		}
		rctx := ctx
		if u.Path == "/v1/events" {
			// A followed stream ends with its client: this one has
			// gone once the query is read.
			c, cancel := context.WithCancel(ctx)
			cancel()
			rctx = c
		}
		rec, ok := serve(rctx, method, target, principal, body)
		if !ok {
			return
		}
		st := rec.Code
		var eb daemon.ErrorBody
		isErr := st >= 400 && json.Unmarshal(rec.Body.Bytes(), &eb) == nil && eb.Error.Code != ""
		switch {
		case st == http.StatusServiceUnavailable && u.Path == "/readyz":
		case st == http.StatusGatewayTimeout && eb.Error.Code == "timeout" && bytes.Contains(body, []byte("timeout_ms")):
		case st == http.StatusBadGateway && skillOutputRefusals[eb.Error.Code]:
			// The probe tool echoes its input: a request can make the
			// tool's output one the host refuses, which is the tool's
			// failure (502), not the request's.
		case st >= 500:
			t.Fatalf("%s %s (principal %q, body %q): HTTP %d %s", method, target, principal, body, st, rec.Body)
		case st >= 400 && st != http.StatusMethodNotAllowed && st != http.StatusMovedPermanently && (!isErr || eb.Error.Code == "internal"):
			t.Fatalf("%s %s (body %q): HTTP %d without a specific error code: %s", method, target, body, st, rec.Body)
		}
	})
}
