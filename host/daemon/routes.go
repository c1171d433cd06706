package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/console"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/trust"
)

// APIVersion is the version of the HTTP API the OpenAPI document states.
const APIVersion = "v1"

// ErrMethodNotAllowed is a known API path asked with a method it does not
// serve; the answer's Allow header lists the ones it does.
var ErrMethodNotAllowed = errcode.New("method_not_allowed", "method not allowed on this path")

// apiMux serves apiRoutes.
func (d *Daemon) apiMux() *http.ServeMux {
	mux := http.NewServeMux()
	for _, rt := range d.apiRoutes(mux) {
		d.route(mux, rt)
	}
	return mux
}

// consolePattern is the catch-all: the console, and the API's 404 and 405.
const consolePattern = "/"

// probeMethods are the methods a 405's Allow may list.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods are the methods mux serves at r's path by a route of the
// API (not the catch-all); none for a path the API does not know.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var out []string
	for _, m := range probeMethods {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := mux.Handler(probe); p != "" && p != consolePattern {
			out = append(out, m)
		}
	}
	return out
}

// apiRoutes is the HTTP API, every route once with its OpenAPI facts (see
// openapi.go); mux is the mux they are registered on (the catch-all asks
// it which methods a path serves).
func (d *Daemon) apiRoutes(mux *http.ServeMux) []apiRoute {
	var routes []apiRoute
	doc := sync.OnceValues(func() ([]byte, error) {
		return json.Marshal(openAPIDocument(routes, APIVersion))
	})
	ok := func(status int, desc string, v any) []apiResponse {
		return []apiResponse{{status: status, desc: desc, json: v}}
	}
	version := apiParam{name: "version", typ: "string", desc: "The version; the current one when absent."}
	skill := map[string]string{"id": "The skill id."}
	status := func(verb, summary string, admin bool) apiRoute {
		p := "POST /v1/skills/{id}/" + verb
		id := verb + "Skill"
		if admin {
			p = "POST /admin/v1/skills/{id}/" + verb
			id = "admin" + strings.ToUpper(verb[:1]) + verb[1:] + "Skill"
			verb = "admin-" + verb
		}
		if verb == "admin-quarantine" {
			verb = "quarantine"
		}
		return apiRoute{pattern: p, h: d.httpStatus(verb), op: &apiOp{
			id: id, tag: "skills", summary: summary, path: skill,
			body:      &apiBody{desc: "The version (the current one when absent), the reason recorded, and override (enable).", json: statusRequest{}},
			responses: ok(http.StatusOK, "The status change.", host.StatusResult{}),
		}}
	}
	routes = []apiRoute{
		{pattern: "GET /healthz", public: true, h: func(w http.ResponseWriter, r *http.Request) error {
			return writeJSON(w, http.StatusOK, healthStatus{Status: "ok"})
		}, op: &apiOp{id: "health", tag: "daemon", summary: "Liveness: the daemon answers.",
			responses: ok(http.StatusOK, "Alive.", healthStatus{})}},
		{pattern: "GET /readyz", public: true, h: func(w http.ResponseWriter, r *http.Request) error {
			if !d.ready.Load() {
				return writeJSON(w, http.StatusServiceUnavailable, readiness{Status: "not_ready", Posture: d.Posture()})
			}
			return writeJSON(w, http.StatusOK, readiness{Status: "ready", Posture: d.Posture()})
		}, op: &apiOp{id: "ready", tag: "daemon", summary: "Readiness: the daemon serves its skills, and the security posture it serves with.",
			responses: []apiResponse{
				{status: http.StatusOK, desc: "Ready.", json: readiness{}},
				{status: http.StatusServiceUnavailable, desc: "Still starting, or shutting down.", json: readiness{}},
			}}},
		{pattern: "GET /metrics", h: func(w http.ResponseWriter, r *http.Request) error {
			d.metrics.Handler().ServeHTTP(w, r)
			return nil
		}, op: &apiOp{id: "metrics", tag: "daemon", summary: "Prometheus metrics.",
			responses: []apiResponse{{status: http.StatusOK, desc: "The Prometheus text exposition format.", media: "text/plain", schema: map[string]any{"type": "string"}}}}},
		{pattern: "GET " + OpenAPIPath, h: func(w http.ResponseWriter, r *http.Request) error {
			b, err := doc()
			if err != nil {
				return fmt.Errorf("openapi document: %w", err)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
			return nil
		}, op: &apiOp{id: "openapi", tag: "daemon", summary: "This document: the OpenAPI 3.1 description of the HTTP API.",
			responses: []apiResponse{{status: http.StatusOK, desc: "The OpenAPI 3.1 document.", media: "application/json", schema: map[string]any{"type": "object"}}}}},

		{pattern: "GET /v1/skills", h: d.httpListSkills, op: &apiOp{
			id: "listSkills", tag: "skills", summary: "List installed skill versions.",
			query: []apiParam{
				{name: "skill_id", typ: "string", desc: "Only this skill."},
				{name: "publisher", typ: "string", desc: "Only this publisher's skills."},
				{name: "current_only", typ: "boolean", desc: "Only the current version of each skill."},
				{name: "quarantined_only", typ: "boolean", desc: "Only quarantined versions."},
				{name: "eligible_only", typ: "boolean", desc: "Only versions that may run."},
			},
			responses: ok(http.StatusOK, "The installed versions.", host.SkillList{}),
		}},
		{pattern: "POST /v1/skills", h: d.httpInstall, op: &apiOp{
			id: "installSkill", tag: "skills", summary: "Install a skill: an uploaded artifact, or one fetched from a registry.",
			description: "With Content-Type application/json the body names a registry source and the options; any other body is the artifact itself, the options in the query.",
			query: []apiParam{
				{name: "allow_tofu", typ: "boolean", desc: "Pin an unknown publisher key on first use (upload)."},
				{name: "force", typ: "boolean", desc: "Replace an installed version (upload)."},
				{name: "accept_capabilities", typ: "boolean", desc: "Accept the capabilities the skill requests (upload)."},
				{name: "dry_run", typ: "boolean", desc: "Check everything, install nothing (upload)."},
				{name: QueryTrustedPublisher, typ: "string", repeat: true, desc: "PUBLISHER=PUBLIC_KEY_HEX: trust this key first (upload)."},
			},
			body: &apiBody{desc: "The artifact (any content type but JSON; the options in the query), or a registry source and the options as JSON.", required: true,
				media: "application/octet-stream", schema: map[string]any{"type": "string", "contentMediaType": "application/octet-stream"}, json: installFromRequest{}},
			responses: []apiResponse{
				{status: http.StatusCreated, desc: "Installed.", json: host.InstallResult{}},
				{status: http.StatusOK, desc: "The dry run's result.", json: host.InstallResult{}},
			},
		}},
		// A literal segment wins over {id} in the mux, whatever the query: the
		// info of a skill whose id is "outdated" (a valid one-segment id) is
		// not reachable here; List (GET /v1/skills?skill_id=outdated) shows it.
		{pattern: "GET /v1/skills/outdated", h: d.httpOutdated, op: &apiOp{
			id: "listOutdated", tag: "registry", summary: "Installed skills with a newer version at their source.",
			query: []apiParam{
				{name: "skill_id", typ: "string", desc: "Only this skill."},
				{name: "allow_tofu", typ: "boolean", desc: "Pin an unknown index key on first use."},
			},
			responses: ok(http.StatusOK, "The skills and their latest versions.", host.OutdatedReport{}),
		}},
		{pattern: "POST /v1/skills/{id}/update", h: d.httpUpdate, op: &apiOp{
			id: "updateSkill", tag: "registry", summary: "Update a skill from its source.", path: skill,
			body:      &apiBody{desc: "The version to update to (the newest when absent) and the options; skill_id, if given, must equal the path's.", json: host.UpdateRequest{}},
			responses: ok(http.StatusOK, "The update.", host.UpdateResult{}),
		}},
		{pattern: "POST /v1/apply", h: d.httpApply, op: &apiOp{
			id: "apply", tag: "registry", summary: "Bring the installed skills and hooks to a desired state (palyra.toml).",
			body:      &apiBody{desc: "The desired state document and the options.", required: true, json: host.ApplyRequest{}},
			responses: ok(http.StatusOK, "The plan and what was done of it.", host.ApplyResult{}),
		}},
		{pattern: "GET /v1/skills/{id}", h: d.httpInfo, op: &apiOp{
			id: "getSkill", tag: "skills", summary: "A skill version's info: inventory, manifest, grants, audit, history.", path: skill,
			query:     []apiParam{version},
			responses: ok(http.StatusOK, "The info.", host.SkillInfo{}),
		}},
		{pattern: "DELETE /v1/skills/{id}", h: d.httpRemove, op: &apiOp{
			id: "removeSkill", tag: "skills", summary: "Remove a skill version, or every version.", path: skill,
			query: []apiParam{
				{name: "version", typ: "string", desc: "The version; every version when absent."},
				{name: "purge_storage", typ: "boolean", desc: "Delete the skill's storage too."},
				{name: "force", typ: "boolean", desc: "When no version would be left, disable the enabled hook bindings that run the skill in the same change; without it such a remove fails with skill_referenced_by_hook (412)."},
			},
			responses: ok(http.StatusOK, "What was removed.", host.RemoveResult{}),
		}},
		{pattern: "GET /v1/skills/{id}/config", h: d.httpSkillConfig, op: &apiOp{
			id: "getSkillConfig", tag: "skills", summary: "A skill's operator config (manifest [config]), sensitive values redacted.",
			description: "Every key of the current version's [config] schema and every value kept for the skill (per skill, not per version), " +
				"with its type, whether it is required, sensitive and set, and its default. A sensitive value that is set shows as \"***\", never itself. " +
				"missing lists the required keys with neither a value nor a default, unfit the values the schema no longer accepts: while either is non-empty " +
				"the skill is not eligible (config_missing, config_invalid).",
			path:      skill,
			responses: ok(http.StatusOK, "The config.", host.SkillConfig{}),
		}},
		{pattern: "PATCH /v1/skills/{id}/config", h: d.httpSetSkillConfig, op: &apiOp{
			id: "setSkillConfig", tag: "skills", summary: "Set config values of a skill.",
			description: "Each value (JSON) is checked against the schema of the skill's current version before any is stored: a key the schema does not " +
				"declare or a value that does not fit fails with config_invalid (400) naming the key and why, never quoting a sensitive value. " +
				"Sensitive values are kept in the vault, the others in the inventory; keys not named keep their values. The next call sees the change.",
			path:      skill,
			body:      &apiBody{desc: "The values to set, by key.", required: true, json: configSetRequest{}},
			responses: ok(http.StatusOK, "The config after the change.", host.SkillConfig{}),
		}},
		{pattern: "DELETE /v1/skills/{id}/config", h: d.httpUnsetSkillConfig, op: &apiOp{
			id: "unsetSkillConfig", tag: "skills", summary: "Remove config values of a skill.", path: skill,
			query:     []apiParam{{name: "key", typ: "string", repeat: true, desc: "A key to unset (repeat for several); at least one."}},
			responses: ok(http.StatusOK, "The config after the change.", host.SkillConfig{}),
		}},
		{pattern: "POST /v1/skills/{id}/verify", h: d.httpVerify, op: &apiOp{
			id: "verifySkill", tag: "skills", summary: "Verify a skill version's artifact and signature again.", path: skill,
			body:      &apiBody{desc: "The version (the current one when absent).", json: versionRequest{}},
			responses: ok(http.StatusOK, "The verification.", host.VerifyResult{}),
		}},
		{pattern: "POST /v1/skills/{id}/audit", h: d.httpAudit, op: &apiOp{
			id: "auditSkill", tag: "skills", summary: "Audit a skill version again.", path: skill,
			body:      &apiBody{desc: "The version (the current one when absent).", json: versionRequest{}},
			responses: ok(http.StatusOK, "The audit report.", host.AuditResult{}),
		}},
		status("quarantine", "Quarantine a skill version: it stops running.", false),
		status("enable", "Enable a skill version (a quarantined one needs override).", false),
		status("disable", "Disable a skill version.", false),
		{pattern: "POST /v1/skills/{id}/review/approve", h: d.httpApproveReview, op: &apiOp{
			id: "approveSkillReview", tag: "skills", summary: "Approve the review of builder output awaiting review, then enable it.",
			description: "A version whose manifest is dynamic tool builder output awaiting review ([builder] review_status neither approved nor signed) " +
				"installs quarantined with review_pending, and enable refuses it. The approval records the principal and the reason in the journal " +
				"(skill.review_approved), clears the hold, and enables the version with enable's checks (verify, audit, policy).",
			path:      skill,
			body:      &apiBody{desc: "The version (the current one when absent) and the reason (required).", required: true, json: reviewRequest{}},
			responses: ok(http.StatusOK, "The status change.", host.StatusResult{}),
		}},
		// Palyra's admin routes, so Palyra's CLI works against this daemon:
		// enable needs override: true.
		status("quarantine", "Quarantine a skill version (Palyra's admin API).", true),
		status("enable", "Enable a skill version (Palyra's admin API; needs override: true).", true),
		{pattern: "POST /v1/reaudit", h: d.httpReaudit, op: &apiOp{
			id: "reaudit", tag: "skills", summary: "Re-audit every installed skill now; what no longer passes is quarantined.",
			responses: ok(http.StatusOK, "The re-audit report.", host.ReauditReport{}),
		}},
		{pattern: "POST /v1/trust/rotate", h: d.httpRotateTrust, op: &apiOp{
			id: "rotateTrust", tag: "trust", summary: "Apply a publisher key rotation statement.",
			body: &apiBody{desc: "The rotation statement (the file `palyra keys rotate` writes).", required: true, media: "application/json",
				schema: map[string]any{"type": "object", "description": fmt.Sprintf("at most %d bytes", trust.MaxRotationSize)}},
			responses: ok(http.StatusOK, "The rotation.", host.RotateTrustResult{}),
		}},
		{pattern: "PUT /v1/feed", h: d.httpUpdateDenyFeed, op: &apiOp{
			id: "updateDenyFeed", tag: "trust", summary: "Install a signed deny feed, then re-audit every installed skill.",
			description: "The feed must be signed by a key the trust store allowlists for its issuer, and newer than the installed feed " +
				"(deny_feed_not_newer otherwise). Every installed version is then re-audited; each one the feed denies is quarantined with " +
				"the entry's reason and reference. When some version could not be re-audited, the error carries the result as details.",
			query: []apiParam{
				{name: QueryTrustedPublisher, typ: "string", repeat: true, desc: "ISSUER=PUBLIC_KEY_HEX: allowlist this key with the feed (persisted once the feed verifies with it)."},
			},
			body: &apiBody{desc: "The signed deny feed (a DSSE envelope; docs/deny-feed.md).", required: true, media: "application/json",
				schema: map[string]any{"type": "object", "description": fmt.Sprintf("at most %d bytes", feed.MaxFileBytes)}},
			responses: ok(http.StatusOK, "The feed installed and the re-audit.", host.DenyFeedUpdate{}),
		}},
		{pattern: "GET /v1/feed", h: d.httpDenyFeed, op: &apiOp{
			id: "denyFeed", tag: "trust", summary: "The installed deny feed: issuer, serial, entries, when and by whom it was installed.",
			responses: ok(http.StatusOK, "The installed feed (installed is false when there is none).", host.DenyFeedInfo{}),
		}},
		{pattern: "PUT /v1/policy", h: d.httpSetPolicy, op: &apiOp{
			id: "setPolicy", tag: "policy", summary: "Replace the operator policy profile.",
			body: &apiBody{desc: "The profile (policy.toml).", required: true, media: "application/toml",
				schema: map[string]any{"type": "string", "maxLength": policy.MaxProfileBytes}},
			responses: ok(http.StatusOK, "The new policy and its effect.", host.PolicyResult{}),
		}},
		{pattern: "POST /v1/skills/{id}/tools/{tool}/call", h: d.httpCall, op: &apiOp{
			id: "callTool", tag: "tools", summary: "Call a tool of an active skill.",
			description: "A failed call's error carries the call result (logs, stats, tool error) as details.",
			path:        map[string]string{"id": "The skill id.", "tool": "The tool id."},
			body:        &apiBody{desc: "The tool's input, an optional timeout, and the approval id of an approved call.", required: true, json: callRequest{}},
			responses: []apiResponse{
				{status: http.StatusOK, desc: "The call's result.", json: host.CallResult{}},
				{status: http.StatusAccepted, desc: "The call needs approval and did not run: the pending approval (result.pending), " +
					"its URL (approval_url, also in Location). Once approved, call again with the same input and approval_id.", json: pendingCall{}},
			},
		}},
		{pattern: "GET " + ApprovalsPath, h: d.httpApprovals, op: &apiOp{
			id: "listApprovals", tag: "approvals", summary: "List the approvals kept (pending first to decide), newest first.",
			description: "A call of a tool that needs approval (manifest requires_approval or default_sensitive, a capability class the profile marks " +
				"require_approval, a run hook asking for it) becomes a pending approval. Expired approvals are marked when listed.",
			query: []apiParam{
				{name: "state", typ: "string", desc: "Only approvals in this state: pending, approved, denied, expired or used."},
				{name: "skill_id", typ: "string", desc: "Only this skill's approvals."},
			},
			responses: ok(http.StatusOK, "The approvals, each with the grants its skill version has now.", host.ApprovalList{}),
		}},
		{pattern: "GET " + ApprovalsPath + "/{approval}", h: d.httpApproval, op: &apiOp{
			id: "getApproval", tag: "approvals", summary: "Show an approval: the call, its input, why it needs approval, its state.",
			path:      map[string]string{"approval": "The approval id."},
			responses: ok(http.StatusOK, "The approval.", host.ApprovalInfo{}),
		}},
		{pattern: "POST " + ApprovalsPath + "/{approval}/approve", h: d.httpDecide(true), op: &apiOp{
			id: "approveApproval", tag: "approvals", summary: "Approve a pending approval; the caller's next call with its id and the same input runs once.",
			path:      map[string]string{"approval": "The approval id."},
			body:      &apiBody{desc: "The reason recorded (optional to approve).", json: decideBody{}},
			responses: ok(http.StatusOK, "The approval, approved.", host.ApprovalInfo{}),
		}},
		{pattern: "POST " + ApprovalsPath + "/{approval}/deny", h: d.httpDecide(false), op: &apiOp{
			id: "denyApproval", tag: "approvals", summary: "Deny a pending approval; a call with its id fails approval_denied with the reason.",
			path:      map[string]string{"approval": "The approval id."},
			body:      &apiBody{desc: "The reason recorded (required to deny).", required: true, json: decideBody{}},
			responses: ok(http.StatusOK, "The approval, denied.", host.ApprovalInfo{}),
		}},
		{pattern: "GET /v1/skills/{id}/metrics", h: d.httpSkillMetrics, op: &apiOp{
			id: "skillMetrics", tag: "skills", summary: "A skill's call summary since the daemon started.", path: skill,
			responses: ok(http.StatusOK, "The summary.", host.SkillMetrics{}),
		}},
		{pattern: "POST /v1/a2ui/{doc}/submit", h: d.httpSubmit, op: &apiOp{
			id: "submitForm", tag: "tools", summary: "Submit a form of a kept A2UI document to the tool that returned it.",
			path:      map[string]string{"doc": "The A2UI document id (a call result's a2ui.document_id)."},
			query:     []apiParam{{name: "approval_id", typ: "string", desc: "The approval of a submit whose tool needs approval (as a call's approval_id)."}},
			body:      &apiBody{desc: "The submit: the form's componentId and its values.", required: true, json: a2uiSubmit{}},
			responses: ok(http.StatusOK, "The tool's result.", host.CallResult{}),
		}},
		{pattern: "POST /v1/dev/run", h: d.httpRunInline, op: &apiOp{
			id: "runInline", tag: "dev", summary: "Run a tool of an unsigned inline module in a sidecar (refused unless the profile sets [dev] allow_inline = true).",
			description: "Nothing is installed: the module runs under the manifest's (or the default manifest's) grants and limits intersected with the profile, with the schema checks of an installed skill. Refused with 403 inline_not_allowed by default.",
			body:        &apiBody{desc: "The module (standard base64), its file name, the skill.toml (optional), the tool, its input and an optional timeout.", required: true, json: inlineRequest{}},
			responses:   ok(http.StatusOK, "The call's result.", host.CallResult{}),
		}},
		{pattern: "GET /v1/tools", h: d.httpTools, op: &apiOp{
			id: "listTools", tag: "tools", summary: "The tools that can be called now.",
			responses: ok(http.StatusOK, "The catalog.", host.ToolCatalog{}),
		}},
		{pattern: "GET /v1/sidecars", h: d.httpSidecars, op: &apiOp{
			id: "listSidecars", tag: "daemon", summary: "The sidecars' states.",
			responses: ok(http.StatusOK, "The states.", sidecarList{}),
		}},
		{pattern: "GET /v1/cluster", h: d.httpCluster, op: &apiOp{
			id: "cluster", tag: "daemon", summary: "This daemon's cluster membership and peers, and its security posture.",
			responses: ok(http.StatusOK, "The cluster state.", clusterDoc{}),
		}},
		{pattern: "GET /v1/hooks", h: d.httpHooks, op: &apiOp{
			id: "listHooks", tag: "hooks", summary: "The hook bindings.",
			responses: ok(http.StatusOK, "The bindings.", hookList{}),
		}},
		{pattern: "POST /v1/hooks", h: d.httpBindHook, op: &apiOp{
			id: "bindHook", tag: "hooks", summary: "Bind a tool to an event.",
			body:      &apiBody{desc: "The binding; enabled defaults to true when absent.", required: true, json: host.HookBinding{}},
			responses: ok(http.StatusCreated, "The binding made.", host.HookBinding{}),
		}},
		d.hookSwitch(true),
		d.hookSwitch(false),
		{pattern: "DELETE /v1/hooks/{id}", h: d.httpRemoveHook, op: &apiOp{
			id: "removeHook", tag: "hooks", summary: "Remove a hook binding.", path: map[string]string{"id": "The hook id."},
			responses: ok(http.StatusOK, "The id removed.", hookRemoved{}),
		}},
		{pattern: "POST /v1/hooks/fire", h: d.httpFireHooks, op: &apiOp{
			id: "fireHooks", tag: "hooks", summary: "Fire an event: run the hooks bound to it and resolve their decision.",
			body:      &apiBody{desc: "The event and its payload.", required: true, json: host.FireRequest{}},
			responses: ok(http.StatusOK, "What the hooks did and the decision.", host.FireResult{}),
		}},
		{pattern: "GET /v1/events", h: d.httpEvents, op: &apiOp{
			id: "events", tag: "events", summary: "The event stream, as server-sent events.",
			description: "`id:` is the journal id (absent on hook outcomes), `event:` the kind, `data:` the event as JSON.",
			query: []apiParam{
				{name: "after", typ: "integer", desc: "Replay the journal after this event id first (or the Last-Event-ID header)."},
				{name: "follow", typ: "boolean", desc: "false ends the stream after the replay; default true."},
			},
			responses: []apiResponse{{status: http.StatusOK, desc: "The stream; each data line is an event (x-event-data).", media: "text/event-stream",
				schema: map[string]any{"type": "string"}, eventData: host.Event{}}},
		}},
		{pattern: "/mcp", h: d.httpMCP, op: &apiOp{
			id: "mcp", tag: "mcp", methods: []string{http.MethodPost, http.MethodGet, http.MethodDelete},
			summary:   "MCP's streamable HTTP transport: the active skills' tools.",
			body:      &apiBody{desc: "A JSON-RPC message of the Model Context Protocol (POST).", media: "application/json", schema: map[string]any{"type": "object"}},
			responses: []apiResponse{{status: http.StatusOK, desc: "A JSON-RPC answer, or a server-sent event stream.", media: "application/json"}, {status: http.StatusAccepted, desc: "A notification or response accepted."}},
		}},
		// Every other path: the web console (static files, public; its API
		// calls carry the token), except under the API prefixes, where an
		// unknown route is a JSON error.
		{pattern: consolePattern, public: true, h: d.httpFallback(mux)},
	}
	return routes
}

// healthStatus is the /healthz document.
type healthStatus struct {
	Status string `json:"status"`
}

// readiness is the GET /readyz document: whether the daemon serves, and
// the security posture it serves with.
type readiness struct {
	Status  string  `json:"status"`
	Posture Posture `json:"posture"`
}

// clusterDoc is the GET /v1/cluster document: the service's cluster
// status and the answering daemon's security posture.
type clusterDoc struct {
	*host.ClusterStatus
	Posture Posture `json:"posture"`
}

// hookRemoved is the DELETE /v1/hooks/{id} document.
type hookRemoved struct {
	Removed string `json:"removed"`
}

// a2uiSubmit is the JSON of a form submit (a2ui.ParseSubmit checks it).
type a2uiSubmit struct {
	ComponentID string         `json:"componentId"`
	Values      map[string]any `json:"values"`
}

// httpFallback serves what no route does: an API path is a JSON 405 (a
// known path, another method) or 404, the rest the console.
func (d *Daemon) httpFallback(mux *http.ServeMux) func(w http.ResponseWriter, r *http.Request) error {
	ui := console.Handler()
	return func(w http.ResponseWriter, r *http.Request) error {
		if !isAPIPath(r.URL.Path) {
			ui.ServeHTTP(w, r)
			return nil
		}
		// Only a caller with the token learns which routes exist.
		if err := d.auth.CheckAuthorization(r.Header.Get("Authorization")); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="palyra-host"`)
			return err
		}
		if allow := allowedMethods(mux, r); len(allow) > 0 && !slices.Contains(allow, r.Method) {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			return fmt.Errorf("%w: %s serves %s, not %s", ErrMethodNotAllowed, r.URL.Path, strings.Join(allow, ", "), r.Method)
		}
		return fmt.Errorf("%w: no route %s %s", ErrRouteNotFound, r.Method, r.URL.Path)
	}
}

func (d *Daemon) hookSwitch(enable bool) apiRoute {
	verb, summary := "disable", "Disable a hook binding."
	if enable {
		verb, summary = "enable", "Enable a hook binding."
	}
	return apiRoute{pattern: "POST /v1/hooks/{id}/" + verb, h: func(w http.ResponseWriter, r *http.Request) error {
		out, err := d.svc.SetHookEnabled(r.Context(), r.PathValue("id"), enable)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, out)
	}, op: &apiOp{id: verb + "Hook", tag: "hooks", summary: summary, path: map[string]string{"id": "The hook id."},
		responses: []apiResponse{{status: http.StatusOK, desc: "The binding.", json: host.HookBinding{}}}}}
}
