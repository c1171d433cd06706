package daemon_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/errcode"
)

// rawDo sends method path with the token (when token) and returns the
// answer's status, headers and body.
func (p *proc) rawDo(t *testing.T, method, path, body string, token bool) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// TestHTTPManners runs the API's manners against a daemon: 405 with Allow
// on a known path, readable messages with the chain in detail, lower-case
// enum words, and answers that fit the OpenAPI document it serves.
func TestHTTPManners(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.probe_a"), nil)
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", wasmArtifact(t, "test.noisy", "log_spammer.wasm", ""), nil)

	t.Run("method not allowed", func(t *testing.T) {
		cases := []struct {
			method, path string
			token        bool
			status       int
			allow        string
		}{
			{http.MethodDelete, "/v1/tools", true, http.StatusMethodNotAllowed, "GET, HEAD"},
			{http.MethodPatch, "/v1/skills", true, http.StatusMethodNotAllowed, "GET, HEAD, POST"},
			// DELETE /v1/hooks/{id} takes "fire" as an id, as the mux does.
			{http.MethodGet, "/v1/hooks/fire", true, http.StatusMethodNotAllowed, "POST, DELETE"},
			{http.MethodPut, "/v1/skills/test.probe_a", true, http.StatusMethodNotAllowed, "GET, HEAD, DELETE"},
			{http.MethodGet, "/v1/skills/test.probe_a/tools/test.probe/call", true, http.StatusMethodNotAllowed, "POST"},
			{http.MethodPost, "/v1/policy", true, http.StatusMethodNotAllowed, "PUT"},
			{http.MethodPost, "/healthz", true, http.StatusMethodNotAllowed, "GET, HEAD"},
			{http.MethodDelete, daemon.OpenAPIPath, true, http.StatusMethodNotAllowed, "GET, HEAD"},
			// Unknown paths stay 404; without the token nothing is told.
			{http.MethodGet, "/v1/nope", true, http.StatusNotFound, ""},
			{http.MethodPost, "/v1/skills/a/b/c", true, http.StatusNotFound, ""},
			{http.MethodDelete, "/v1/tools", false, http.StatusUnauthorized, ""},
			// A served method is served, HEAD with GET.
			{http.MethodHead, "/v1/tools", true, http.StatusOK, ""},
		}
		for _, c := range cases {
			st, hdr, body := p.rawDo(t, c.method, c.path, "", c.token)
			if st != c.status || hdr.Get("Allow") != c.allow {
				t.Errorf("%s %s: HTTP %d Allow %q, want %d %q: %s", c.method, c.path, st, hdr.Get("Allow"), c.status, c.allow, body)
				continue
			}
			if st == http.StatusMethodNotAllowed {
				var eb daemon.ErrorBody
				if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code != "method_not_allowed" || eb.Error.RequestID == "" ||
					!strings.Contains(eb.Error.Message, c.allow) {
					t.Errorf("%s %s: body %s", c.method, c.path, body)
				}
			}
		}
	})

	t.Run("readable messages", func(t *testing.T) {
		cases := []struct {
			name, method, path, body string
			status                   int
			code                     string
			// message must start with the code's sentence and contain
			// these; detail must contain detail (when set).
			contains []string
			detail   string
		}{
			{"info of a missing skill", http.MethodGet, "/v1/skills/test.missing", "", http.StatusNotFound, "skill_not_found", []string{"test.missing"}, ""},
			{"missing version", http.MethodGet, "/v1/skills/test.probe_a?version=9.9.9", "", http.StatusNotFound, "skill_not_found", []string{"9.9.9"}, ""},
			{"malformed body", http.MethodPost, "/v1/skills/test.probe_a/verify", `{"version":`, http.StatusBadRequest, "bad_request", []string{"request body"}, ""},
			{"unknown field", http.MethodPost, "/v1/skills/test.probe_a/audit", `{"versoin":"1"}`, http.StatusBadRequest, "bad_request", []string{"versoin"}, ""},
			{"bad boolean", http.MethodGet, "/v1/skills?current_only=maybe", "", http.StatusBadRequest, "bad_request", []string{"current_only", "maybe"}, ""},
			{"ids that differ", http.MethodPost, "/v1/skills/test.probe_a/update", `{"skill_id":"test.other"}`, http.StatusBadRequest, "bad_request", []string{"test.other"}, ""},
			{"unknown tool", http.MethodPost, "/v1/skills/test.probe_a/tools/test.nope/call", `{"input":{}}`, http.StatusNotFound, "unknown_tool", []string{"test.nope"}, ""},
			{"unknown route", http.MethodGet, "/v1/nope", "", http.StatusNotFound, "route_not_found", []string{"/v1/nope"}, ""},
		}
		prefix := regexp.MustCompile(`^(install|inventory|host|daemon|supervisor|hooks|audit): `)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				st, _, body := p.rawDo(t, c.method, c.path, c.body, true)
				var eb daemon.ErrorBody
				if err := json.Unmarshal(body, &eb); err != nil {
					t.Fatalf("HTTP %d: not an error body: %s", st, body)
				}
				e := eb.Error
				if st != c.status || e.Code != c.code {
					t.Fatalf("HTTP %d %s, want %d %s: %s", st, e.Code, c.status, c.code, body)
				}
				sentence := errcode.Lookup(c.code).Error()
				if !strings.HasPrefix(e.Message, sentence) || prefix.MatchString(e.Message) {
					t.Errorf("message %q does not start with the code's sentence %q", e.Message, sentence)
				}
				for _, s := range c.contains {
					if !strings.Contains(e.Message, s) {
						t.Errorf("message %q lacks %q", e.Message, s)
					}
				}
				if e.Detail != "" && (!strings.HasSuffix(e.Detail, e.Message) || e.Detail == e.Message) {
					t.Errorf("detail %q does not end with the message %q", e.Detail, e.Message)
				}
			})
		}
		// The plain info lookup of the issue: its internal prefixes are in
		// detail, not in the message.
		_, _, body := p.rawDo(t, http.MethodGet, "/v1/skills/test.missing", "", true)
		var eb daemon.ErrorBody
		json.Unmarshal(body, &eb)
		if eb.Error.Detail == "" || !strings.Contains(eb.Error.Detail, ": "+eb.Error.Message) {
			t.Errorf("info of a missing skill: detail %q, message %q", eb.Error.Detail, eb.Error.Message)
		}
	})

	// Answers, errors included, are validated against the document the
	// daemon serves.
	_, _, docBytes := p.rawDo(t, http.MethodGet, daemon.OpenAPIPath, "", true)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(docBytes))
	if err != nil {
		t.Fatalf("%s: %v: %.200s", daemon.OpenAPIPath, err, docBytes)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const base = "mem:///openapi.json"
	if err := c.AddResource(base, doc); err != nil {
		t.Fatal(err)
	}
	esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }
	check := func(t *testing.T, method, template, path, body string) []byte {
		t.Helper()
		st, hdr, b := p.rawDo(t, method, path, body, true)
		ptr := "/components/schemas/daemon.ErrorBody"
		if st < 300 {
			ptr = "/paths/" + esc(template) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(st) + "/content/application~1json/schema"
		}
		if hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: HTTP %d %s", method, path, st, hdr.Get("Content-Type"))
		}
		sch, err := c.Compile(base + "#" + (&url.URL{Fragment: ptr}).EscapedFragment())
		if err != nil {
			t.Fatalf("%s %s: HTTP %d: no schema at %s: %v", method, path, st, ptr, err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s %s: HTTP %d answer does not fit its schema: %v\n%.500s", method, path, st, err, b)
		}
		return b
	}
	var answers [][]byte
	t.Run("answers fit the document", func(t *testing.T) {
		for _, r := range []struct{ method, template, path, body string }{
			{"GET", "/healthz", "/healthz", ""},
			{"GET", "/readyz", "/readyz", ""},
			{"GET", "/v1/skills", "/v1/skills", ""},
			{"GET", "/v1/skills/{id}", "/v1/skills/test.probe_a", ""},
			{"GET", "/v1/skills/{id}", "/v1/skills/test.noisy", ""},
			{"GET", "/v1/tools", "/v1/tools", ""},
			{"POST", "/v1/skills/{id}/tools/{tool}/call", "/v1/skills/test.probe_a/tools/test.probe/call", `{"input":{"n":1}}`},
			{"POST", "/v1/skills/{id}/tools/{tool}/call", "/v1/skills/test.noisy/tools/test.run/call", `{"input":{}}`},
			{"GET", "/v1/sidecars", "/v1/sidecars", ""},
			{"GET", "/v1/skills/{id}/metrics", "/v1/skills/test.probe_a/metrics", ""},
			{"GET", "/v1/cluster", "/v1/cluster", ""},
			{"GET", "/v1/hooks", "/v1/hooks", ""},
			{"POST", "/v1/skills/{id}/verify", "/v1/skills/test.probe_a/verify", ""},
			{"POST", "/v1/skills/{id}/audit", "/v1/skills/test.probe_a/audit", ""},
			{"POST", "/v1/skills/{id}/disable", "/v1/skills/test.probe_a/disable", `{"reason":"manners test"}`},
			{"POST", "/v1/skills/{id}/enable", "/v1/skills/test.probe_a/enable", ""},
			{"POST", "/v1/reaudit", "/v1/reaudit", ""},
			{"GET", "/v1/skills/{id}", "/v1/skills/test.missing", ""},
		} {
			answers = append(answers, check(t, r.method, r.template, r.path, r.body))
		}
	})

	t.Run("events fit the document", func(t *testing.T) {
		// The journal so far (installs, a disable and an enable), then
		// the end of the stream.
		st, hdr, b := p.rawDo(t, http.MethodGet, "/v1/events?after=0&follow=false", "", true)
		if st != http.StatusOK || hdr.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("events: HTTP %d %s", st, hdr.Get("Content-Type"))
		}
		sch, err := c.Compile(base + "#" + (&url.URL{Fragment: "/paths/~1v1~1events/get/responses/200/content/text~1event-stream/x-event-data"}).EscapedFragment())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Errorf("event %s does not fit x-event-data: %v", data, err)
			}
			n++
		}
		answers = append(answers, b)
		if n < 4 {
			t.Errorf("%d events replayed, want the installs, the disable and the enable: %s", n, b)
		}
	})

	t.Run("enums are lower-case words", func(t *testing.T) {
		// The noisy tool logs at every level; its output (null) fails its
		// schema, so the logs come as the error's details.
		st, _, b := p.rawDo(t, http.MethodPost, "/v1/skills/test.noisy/tools/test.run/call", `{"input":{}}`, true)
		var eb struct {
			Details struct {
				Logs []struct{ Level string } `json:"logs"`
			} `json:"details"`
		}
		if err := json.Unmarshal(b, &eb); err != nil || len(eb.Details.Logs) == 0 {
			t.Fatalf("noisy call: HTTP %d, no logs: %.300s", st, b)
		}
		levels := map[string]bool{}
		for _, l := range eb.Details.Logs {
			levels[l.Level] = true
		}
		for l := range levels {
			if !map[string]bool{"trace": true, "debug": true, "info": true, "warn": true, "error": true}[l] {
				t.Errorf("log level %q is not a lower-case level word", l)
			}
		}
		if len(levels) < 3 {
			t.Errorf("levels %v: the fixture logs at every level", levels)
		}
		// No protobuf enum name anywhere in the answers (an environment
		// variable's name, PALYRA_..., is not one).
		enum := regexp.MustCompile(`"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+"`)
		for _, a := range append(answers, b) {
			for _, m := range enum.FindAllString(string(a), -1) {
				if !strings.HasPrefix(m, `"PALYRA_`) {
					t.Errorf("protobuf enum name %s in %.300s", m, a)
				}
			}
		}
	})
}
