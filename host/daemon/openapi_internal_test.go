package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/inventory"
)

// servedDaemon is a Daemon whose API mux is built (not serving): its
// routes as registered, the mux and the OpenAPI document.
func servedDaemon(t *testing.T) (*Daemon, *http.ServeMux, map[string]any) {
	t.Helper()
	d := &Daemon{}
	mux := d.apiMux()
	b, err := json.Marshal(openAPIDocument(d.served, APIVersion))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return d, mux, doc
}

// concretePath fills a path template's parameters with a value no
// literal route uses.
func concretePath(p string) string {
	return wildcardRE.ReplaceAllString(strings.TrimSuffix(p, "{$}"), "x-param")
}

// TestOpenAPICoversRoutes fails when a registered route has no operation
// in the OpenAPI document, and when an operation has no route: each
// registered (method, path) is an operation, each operation is one, and
// the mux itself serves each operation's method and path with the route
// that declared it.
func TestOpenAPICoversRoutes(t *testing.T) {
	d, mux, doc := servedDaemon(t)
	registered := map[string]string{} // "METHOD /openapi/path" -> mux pattern
	for _, rt := range d.served {
		if rt.op == nil {
			if rt.pattern != consolePattern {
				t.Errorf("route %q has no OpenAPI entry (op); every API route needs one", rt.pattern)
			}
			continue
		}
		_, p := splitPattern(rt.pattern)
		ms := rt.methodsOf()
		if len(ms) == 0 {
			t.Errorf("route %q serves every method but its op lists none", rt.pattern)
		}
		for _, m := range ms {
			k := m + " " + openAPIPath(p)
			if prev, dup := registered[k]; dup {
				t.Errorf("%s is declared by %q and %q", k, prev, rt.pattern)
			}
			registered[k] = rt.pattern
		}
	}
	documented := map[string]bool{}
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		for m := range item.(map[string]any) {
			documented[strings.ToUpper(m)+" "+p] = true
		}
	}
	for k := range registered {
		if !documented[k] {
			t.Errorf("route %s is served but not in the OpenAPI document", k)
		}
	}
	for k := range documented {
		pattern, ok := registered[k]
		if !ok {
			t.Errorf("the OpenAPI document has %s, which no route serves", k)
			continue
		}
		m, p, _ := strings.Cut(k, " ")
		r := httptest.NewRequest(m, concretePath(p), nil)
		if _, got := mux.Handler(r); got != pattern {
			t.Errorf("the mux serves %s %s with %q, want %q", m, r.URL.Path, got, pattern)
		}
	}
	if len(registered) < 30 {
		t.Errorf("only %d operations registered: the table is not being read", len(registered))
	}
}

// TestOpenAPIDocument checks the document's structure as OpenAPI 3.1
// states it, and compiles every schema in it as JSON Schema 2020-12.
func TestOpenAPIDocument(t *testing.T) {
	_, _, doc := servedDaemon(t)
	if doc["openapi"] != "3.1.0" || doc["jsonSchemaDialect"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("openapi %v, dialect %v", doc["openapi"], doc["jsonSchemaDialect"])
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] == "" || info["version"] != APIVersion {
		t.Errorf("info %v", info)
	}
	comps := doc["components"].(map[string]any)
	schemes := comps["securitySchemes"].(map[string]any)
	if b, _ := schemes["bearer"].(map[string]any); b["type"] != "http" || b["scheme"] != "bearer" {
		t.Errorf("bearer scheme %v", b)
	}
	tags := map[string]bool{}
	for _, tg := range doc["tags"].([]any) {
		tags[tg.(map[string]any)["name"].(string)] = true
	}

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	raw, _ := json.Marshal(doc)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	const base = "mem:///openapi.json"
	if err := c.AddResource(base, inst); err != nil {
		t.Fatal(err)
	}
	compile := func(ptr string) {
		t.Helper()
		if _, err := c.Compile(base + "#" + pointerFragment(ptr)); err != nil {
			t.Errorf("schema at %s: %v", ptr, err)
		}
	}
	for name := range comps["schemas"].(map[string]any) {
		compile("/components/schemas/" + name)
	}
	ops := map[string]bool{}
	paths := doc["paths"].(map[string]any)
	for p, item := range paths {
		if !strings.HasPrefix(p, "/") {
			t.Errorf("path %q does not start with /", p)
		}
		params := map[string]bool{}
		for _, m := range wildcardRE.FindAllStringSubmatch(p, -1) {
			params[m[1]] = true
		}
		for m, o := range item.(map[string]any) {
			op := o.(map[string]any)
			where := strings.ToUpper(m) + " " + p
			if !slices.Contains([]string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}, m) {
				t.Errorf("%s: %q is not an OpenAPI method", where, m)
			}
			id, _ := op["operationId"].(string)
			if id == "" || ops[id] {
				t.Errorf("%s: operationId %q empty or not unique", where, id)
			}
			ops[id] = true
			if s, _ := op["summary"].(string); s == "" {
				t.Errorf("%s: no summary", where)
			}
			for _, tg := range op["tags"].([]any) {
				if !tags[tg.(string)] {
					t.Errorf("%s: tag %v not declared", where, tg)
				}
			}
			seen := map[string]bool{}
			for i, pp := range asSlice(op["parameters"]) {
				prm := pp.(map[string]any)
				if prm["in"] == "path" {
					if prm["required"] != true || !params[prm["name"].(string)] {
						t.Errorf("%s: path parameter %v not required or not in the path", where, prm["name"])
					}
					seen[prm["name"].(string)] = true
				}
				compile(fmt.Sprintf("/paths/%s/%s/parameters/%d/schema", escapePointer(p), m, i))
			}
			for n := range params {
				if !seen[n] {
					t.Errorf("%s: path parameter %s not declared", where, n)
				}
			}
			if rb, ok := op["requestBody"].(map[string]any); ok {
				for mt := range rb["content"].(map[string]any) {
					compile(fmt.Sprintf("/paths/%s/%s/requestBody/content/%s/schema", escapePointer(p), m, escapePointer(mt)))
				}
			}
			resp := op["responses"].(map[string]any)
			if _, ok := resp["default"]; !ok {
				t.Errorf("%s: no default (error) response", where)
			}
			ok2xx := false
			for st, r := range resp {
				if strings.HasPrefix(st, "2") {
					ok2xx = true
				}
				rm := r.(map[string]any)
				if ref, ok := rm["$ref"].(string); ok {
					if resolve(doc, ref) == nil {
						t.Errorf("%s: response %s: $ref %s does not resolve", where, st, ref)
					}
					continue
				}
				if d, _ := rm["description"].(string); d == "" {
					t.Errorf("%s: response %s has no description", where, st)
				}
				for mt := range asMap(rm["content"]) {
					compile(fmt.Sprintf("/paths/%s/%s/responses/%s/content/%s/schema", escapePointer(p), m, st, escapePointer(mt)))
				}
			}
			if !ok2xx {
				t.Errorf("%s: no success response", where)
			}
			if sec, ok := op["security"]; ok && len(sec.([]any)) != 0 {
				t.Errorf("%s: security %v: an operation only overrides it to none (public)", where, sec)
			}
		}
	}
	// Every $ref anywhere resolves inside the document.
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && resolve(doc, ref) == nil {
				t.Errorf("$ref %s does not resolve", ref)
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	// The public routes are exactly the health probes.
	for p, item := range paths {
		for m, o := range item.(map[string]any) {
			_, public := o.(map[string]any)["security"]
			if want := p == "/healthz" || p == "/readyz"; public != want {
				t.Errorf("%s %s: public %v, want %v", m, p, public, want)
			}
		}
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pointerFragment is ptr as a URL fragment.
func pointerFragment(ptr string) string {
	return (&url.URL{Fragment: ptr}).EscapedFragment()
}

// resolve follows a local $ref ("#/a/b") in doc, nil when it does not
// resolve.
func resolve(doc map[string]any, ref string) any {
	ptr, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	var cur any = doc
	for _, tok := range strings.Split(ptr, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[tok]; !ok {
			return nil
		}
	}
	return cur
}

// TestResponseSchemasFitTheirTypes validates what encoding/json writes for
// each response type of the document (zero values, whose nil slices and
// maps are null, and filled ones) against the type's generated schema,
// checks that the schemas refuse what the type never writes, and that
// request body schemas take what the decoder takes and refuse an unknown
// field.
func TestResponseSchemasFitTheirTypes(t *testing.T) {
	d, _, doc := servedDaemon(t)
	raw, _ := json.Marshal(doc)
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const base = "mem:///openapi.json"
	if err := c.AddResource(base, inst); err != nil {
		t.Fatal(err)
	}
	validate := func(t *testing.T, ptr string, v any) error {
		t.Helper()
		sch, err := c.Compile(base + "#" + pointerFragment(ptr))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		x, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return sch.Validate(x)
	}
	n := 0
	for _, rt := range d.served {
		if rt.op == nil {
			continue
		}
		_, p := splitPattern(rt.pattern)
		for _, m := range rt.methodsOf() {
			for _, r := range rt.op.responses {
				if r.json == nil {
					continue
				}
				ptr := fmt.Sprintf("/paths/%s/%s/responses/%d/content/application~1json/schema", escapePointer(openAPIPath(p)), strings.ToLower(m), r.status)
				if err := validate(t, ptr, r.json); err != nil {
					t.Errorf("%s %s %d: the zero %T does not fit its schema: %v", m, p, r.status, r.json, err)
				}
				n++
			}
		}
	}
	if n < 25 {
		t.Errorf("only %d JSON responses checked", n)
	}

	list := "/paths/~1v1~1skills/get/responses/200/content/application~1json/schema"
	call := "/paths/~1v1~1skills~1{id}~1tools~1{tool}~1call/post/responses/200/content/application~1json/schema"
	errb := "/components/schemas/daemon.ErrorBody"
	callIn := "/paths/~1v1~1skills~1{id}~1tools~1{tool}~1call/post/requestBody/content/application~1json/schema"
	statusIn := "/paths/~1v1~1skills~1{id}~1quarantine/post/requestBody/content/application~1json/schema"
	cases := []struct {
		name, ptr string
		v         any
		ok        bool
	}{
		{"filled list", list, host.SkillList{SkillsRoot: "/s", Count: 1, Entries: []host.SkillListing{{SkillID: "a.b", Version: "1.0.0", Status: "active"}}}, true},
		{"list count as a string", list, map[string]any{"skills_root": "/s", "count": "1", "entries": []any{}}, false},
		{"list without entries", list, map[string]any{"skills_root": "/s", "count": 0}, false},
		{"call with logs", call, host.CallResult{InvocationID: "i", Output: json.RawMessage(`{"a":1}`), Logs: []host.LogRecord{{Level: "info", Message: "m"}},
			Stats: host.Stats{WallTime: time.Second}}, true},
		{"call with a negative fuel", call, map[string]any{"invocation_id": "i", "skill_id": "s", "version": "v", "tool_id": "t", "output": nil, "exit_code": 0,
			"stats": map[string]any{"fuel_consumed": -1, "peak_memory_bytes": 0, "wall_time_ns": 0, "capability_calls": 0, "prepared": false}}, false},
		{"error body", errb, errorBodyOf(fmt.Errorf("install: %w: a.b", inventory.ErrNotFound), "rid"), true},
		{"error body without a message", errb, map[string]any{"error": map[string]any{"code": "x"}}, false},
		// Request bodies: what the decoder takes, and not an unknown field
		// (DisallowUnknownFields).
		{"call body", callIn, map[string]any{"input": map[string]any{"n": 1}, "timeout_ms": 500}, true},
		{"empty call body", callIn, map[string]any{}, true},
		{"call body with an unknown field", callIn, map[string]any{"inputs": map[string]any{}}, false},
		{"status body", statusIn, statusRequest{Version: "1.0.0", Reason: "r", Override: true}, true},
		{"status body with a string override", statusIn, map[string]any{"override": "yes"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validate(t, tc.ptr, tc.v)
			if (err == nil) != tc.ok {
				t.Errorf("valid %v, want %v: %v", err == nil, tc.ok, err)
			}
		})
	}
}

func errorBodyOf(err error, rid string) ErrorBody {
	var b ErrorBody
	b.Error.Code = errcode.Of(err)
	b.Error.Message, b.Error.Detail = readableMessage(err)
	b.Error.RequestID = rid
	return b
}

// TestInputSchemas checks request bodies are described as the decoder
// reads them: any field may be left out, an unknown one is refused.
func TestInputSchemas(t *testing.T) {
	g := newSchemaGen(false).inputGen()
	s := g.schemaOf(host.FireRequest{})
	ref, _ := s["$ref"].(string)
	name := strings.TrimPrefix(ref, "#/components/schemas/")
	def, _ := g.defs[name].(map[string]any)
	if name != "host.FireRequestInput" || def["additionalProperties"] != false || def["required"] != nil {
		t.Errorf("input schema %s: %v", ref, def)
	}
}

type recursive struct {
	Name     string       `json:"name"`
	Children []*recursive `json:"children,omitempty"`
	Skip     string       `json:"-"`
	Opt      *int         `json:"opt,omitempty"`
	Embedded
}

// Embedded is promoted into recursive's object.
type Embedded struct {
	Inner string `json:"inner"`
}

// TestSchemaGen covers the encoding/json rules the generator follows.
func TestSchemaGen(t *testing.T) {
	g := newSchemaGen(false)
	s := g.schemaOf(recursive{})
	if s["$ref"] != "#/components/schemas/daemon.recursive" {
		t.Fatalf("schema %v", s)
	}
	def := g.defs["daemon.recursive"].(map[string]any)
	props := def["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "children,inner,name,opt" {
		t.Errorf("properties %v", keys)
	}
	req := def["required"].([]string)
	sort.Strings(req)
	if strings.Join(req, ",") != "inner,name" {
		t.Errorf("required %v", req)
	}
	items := props["children"].(map[string]any)["items"].(map[string]any)
	if items["$ref"] != "#/components/schemas/daemon.recursive" {
		t.Errorf("children items %v", items)
	}
	for _, tc := range []struct {
		v    any
		want string
	}{{time.Time{}, "string"}, {time.Duration(0), "integer"}, {uint8(0), "integer"}, {1.5, "number"}, {true, "boolean"}, {[]byte(nil), "string"}} {
		if got := g.schemaOf(tc.v)["type"]; got != tc.want {
			t.Errorf("%T: type %v, want %s", tc.v, got, tc.want)
		}
	}
	if s := g.schemaOf(json.RawMessage(nil)); s["type"] != nil {
		t.Errorf("RawMessage is any JSON, got %v", s)
	}
}

// TestReadableMessage: the message starts at the error's code sentence,
// dropping where it happened (kept in detail); an error without a code
// says so and keeps its text in detail.
func TestReadableMessage(t *testing.T) {
	coded := errcode.Lookup("skill_not_found")
	if coded == nil {
		t.Fatal("skill_not_found is not registered")
	}
	cases := []struct {
		name          string
		err           error
		message, detl string
	}{
		{"bare sentinel", coded, "skill not found", ""},
		{"sentinel with specifics", fmt.Errorf("%w: a.b 1.0.0", coded), "skill not found: a.b 1.0.0", ""},
		{"stacked package prefixes", fmt.Errorf("install: %w", fmt.Errorf("inventory: %w", fmt.Errorf("%w: a.b (no installed version)", coded))),
			"skill not found: a.b (no installed version)", "install: inventory: skill not found: a.b (no installed version)"},
		{"context with the subject", fmt.Errorf("quarantine a.b 1.0.0: %w", host.ErrQuarantined), host.ErrQuarantined.Error(), "quarantine a.b 1.0.0: " + host.ErrQuarantined.Error()},
		{"phrase inside a word is not a segment", fmt.Errorf("noskill not found: %w", coded), "skill not found", "noskill not found: skill not found"},
		{"bad request with the decoder's words", fmt.Errorf("%w: request body: unexpected EOF", ErrBadRequest), ErrBadRequest.Error() + ": request body: unexpected EOF", ""},
		{"detailed error", &detailedError{err: fmt.Errorf("call: %w", errcode.ErrInvalidOutput)}, errcode.ErrInvalidOutput.Error(), "call: " + errcode.ErrInvalidOutput.Error()},
		{"no code", errors.New("open /x/y: permission denied"), internalMessage, "open /x/y: permission denied"},
		{"typed coder", fmt.Errorf("client: sidecar: %w", &codedText{code: "skill_not_found", text: "gone away"}), "gone away", "client: sidecar: gone away"},
		{"coder text not in the chain", &wrapped{msg: "install: inventory: lost", err: &codedText{code: "skill_not_found", text: "x"}}, "lost", "install: inventory: lost"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, d := readableMessage(tc.err)
			if m != tc.message || d != tc.detl {
				t.Errorf("readableMessage(%q) = %q, %q; want %q, %q", tc.err, m, d, tc.message, tc.detl)
			}
		})
	}
}

// codedText is a Coder whose text is not a sentence it owns.
type codedText struct{ code, text string }

func (e *codedText) Error() string { return e.text }
func (e *codedText) Code() string  { return e.code }

// wrapped is an error whose text does not contain its cause's.
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }
