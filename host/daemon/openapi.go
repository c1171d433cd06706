package daemon

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The HTTP API is declared once, as a table of apiRoute (routes.go): the
// mux serves each entry and the OpenAPI 3.1 document at /v1/openapi.json
// is generated from the same entries, its schemas derived from the Go
// types the handlers decode and encode (jsonschema.go). A route cannot be
// served without its document entry, nor described without being served;
// TestOpenAPICoversRoutes checks both against the mux.
//
// Adding a route is one entry in apiRoutes: its pattern, handler and op
// (operation id, tag, summary, query parameters, body and responses as Go
// values of the types on the wire).

// OpenAPIPath is the route of the API's OpenAPI document.
const OpenAPIPath = "/v1/openapi.json"

// apiRoute is one route of the HTTP API.
type apiRoute struct {
	// pattern is the http.ServeMux pattern, "METHOD /path/{param}"; a
	// pattern without a method serves the methods op.methods lists.
	pattern string
	// public routes need no token.
	public bool
	// op describes the route in the OpenAPI document; nil only for the
	// console's catch-all, which is not part of the API.
	op *apiOp
	h  func(w http.ResponseWriter, r *http.Request) error
}

// apiOp is a route's OpenAPI facts.
type apiOp struct {
	id, tag, summary, description string
	// methods are the methods of a pattern without one.
	methods []string
	// path describes path parameters by name (each is a required string).
	path  map[string]string
	query []apiParam
	body  *apiBody
	// responses are the answers besides the errors (every operation
	// answers an error with the ErrorBody document).
	responses []apiResponse
}

// apiParam is a query parameter.
type apiParam struct {
	name, desc string
	// typ is "string", "boolean" or "integer".
	typ    string
	repeat bool
}

// apiBody is a request body: JSON decoded into a value of json's type,
// and/or another media type with its schema.
type apiBody struct {
	desc     string
	json     any
	media    string
	schema   map[string]any
	required bool
}

// apiResponse is a non-error answer: JSON of json's type, or another media
// type with its schema (nil schema: any). A server-sent event stream
// names the type of its data lines in eventData (the document's
// x-event-data extension of the media type, a schema of its own).
type apiResponse struct {
	status    int
	desc      string
	json      any
	media     string
	schema    map[string]any
	eventData any
}

// method and path of a pattern ("" method: any).
func splitPattern(p string) (method, path string) {
	if m, rest, ok := strings.Cut(p, " "); ok {
		return m, strings.TrimSpace(rest)
	}
	return "", p
}

var wildcardRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}`)

// openAPIPath converts a mux path to an OpenAPI path template.
func openAPIPath(p string) string {
	p = strings.TrimSuffix(p, "{$}")
	return wildcardRE.ReplaceAllString(p, "{$1}")
}

// methodsOf are the methods a route serves (its pattern's, or op.methods).
func (rt apiRoute) methodsOf() []string {
	if m, _ := splitPattern(rt.pattern); m != "" {
		return []string{m}
	}
	if rt.op != nil {
		return rt.op.methods
	}
	return nil
}

// openAPIDocument is the OpenAPI 3.1 document of routes.
func openAPIDocument(routes []apiRoute, version string) map[string]any {
	out := newSchemaGen(false)
	in := out.inputGen()
	errBody := out.schemaOf(ErrorBody{})
	paths := map[string]any{}
	tags := map[string]bool{}
	for _, rt := range routes {
		if rt.op == nil {
			continue
		}
		_, p := splitPattern(rt.pattern)
		tp := openAPIPath(p)
		item, _ := paths[tp].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[tp] = item
		}
		for _, m := range rt.methodsOf() {
			item[strings.ToLower(m)] = rt.op.operation(rt, p, m, in, out)
		}
		tags[rt.op.tag] = true
	}
	var tagList []any
	for _, t := range sortedKeys(tags) {
		tagList = append(tagList, map[string]any{"name": t})
	}
	return map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"info": map[string]any{
			"title":   "palyra-host API",
			"version": version,
			"summary": "The daemon's HTTP JSON API: the operator verbs of host.Service, the tool catalog, events and MCP.",
			"description": "Every route but /healthz and /readyz needs the admin token as `Authorization: Bearer <token>`. " +
				"Every error is the ErrorBody document: a stable snake_case `code`, a `message` a person can read, " +
				"the internal `detail` when it says more, and the `request_id` of the daemon's log line. " +
				"A known path asked with a method it does not serve answers 405 with an `Allow` header.",
		},
		"tags":     tagList,
		"security": []any{map[string]any{"bearer": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{
				"bearer": map[string]any{
					"type": "http", "scheme": "bearer",
					"description": "The admin token (daemon/admin-token in the state directory; `palyra-host token rotate` replaces it).",
				},
			},
			"schemas": out.defs,
			"responses": map[string]any{
				"Error": map[string]any{
					"description": "An error: the code, a readable message, the internal detail and the request id; details carry a result where the verb has one (a refused install, a failed call).",
					"content":     map[string]any{"application/json": map[string]any{"schema": errBody}},
				},
				"Unauthorized": map[string]any{
					"description": "No token, or the wrong one (code unauthorized).",
					"headers": map[string]any{"WWW-Authenticate": map[string]any{
						"description": `Bearer realm="palyra-host"`, "schema": map[string]any{"type": "string"},
					}},
					"content": map[string]any{"application/json": map[string]any{"schema": errBody}},
				},
			},
		},
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// operation is the OpenAPI operation of op served at path with method.
func (op *apiOp) operation(rt apiRoute, path, method string, in, out *schemaGen) map[string]any {
	id := op.id
	if len(rt.methodsOf()) > 1 {
		id += strings.ToUpper(method[:1]) + strings.ToLower(method[1:])
	}
	o := map[string]any{"operationId": id, "summary": op.summary, "tags": []any{op.tag}}
	if op.description != "" {
		o["description"] = op.description
	}
	var params []any
	for _, m := range wildcardRE.FindAllStringSubmatch(path, -1) {
		params = append(params, map[string]any{
			"name": m[1], "in": "path", "required": true,
			"description": op.path[m[1]], "schema": map[string]any{"type": "string"},
		})
	}
	for _, q := range op.query {
		s := map[string]any{"type": q.typ}
		p := map[string]any{"name": q.name, "in": "query", "description": q.desc, "schema": s}
		if q.repeat {
			p["schema"] = map[string]any{"type": "array", "items": s}
			p["explode"] = true
		}
		params = append(params, p)
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if b := op.body; b != nil {
		content := map[string]any{}
		if b.media != "" {
			content[b.media] = map[string]any{"schema": b.schema}
		}
		if b.json != nil {
			content["application/json"] = map[string]any{"schema": in.schemaOf(b.json)}
		}
		o["requestBody"] = map[string]any{"description": b.desc, "required": b.required, "content": content}
	}
	resp := map[string]any{"default": map[string]any{"$ref": "#/components/responses/Error"}}
	for _, r := range op.responses {
		x := map[string]any{"description": r.desc}
		switch {
		case r.json != nil:
			x["content"] = map[string]any{"application/json": map[string]any{"schema": out.schemaOf(r.json)}}
		case r.media != "":
			s := r.schema
			if s == nil {
				s = map[string]any{}
			}
			mt := map[string]any{"schema": s}
			if r.eventData != nil {
				mt["x-event-data"] = out.schemaOf(r.eventData)
			}
			x["content"] = map[string]any{r.media: mt}
		}
		resp[strconv.Itoa(r.status)] = x
	}
	if rt.public {
		o["security"] = []any{}
	} else {
		resp["401"] = map[string]any{"$ref": "#/components/responses/Unauthorized"}
	}
	o["responses"] = resp
	return o
}
