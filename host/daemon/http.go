package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/trust"
)

// ErrRequestTooLarge is a request body over its limit.
var ErrRequestTooLarge = errcode.New("request_too_large", "request body over its limit")

// Headers the API reads and writes.
const (
	HeaderPrincipal = "X-Palyra-Principal"
	HeaderRequestID = "X-Request-Id"
)

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// sseHeartbeat is how often an idle event stream gets a comment line, so
// proxies and clients see it alive.
const sseHeartbeat = 15 * time.Second

type ctxKey int

const keyRequestID ctxKey = 0

func requestIDOf(ctx context.Context) string {
	s, _ := ctx.Value(keyRequestID).(string)
	return s
}

func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// handler is the daemon's HTTP handler: gRPC (HTTP/2, content-type
// application/grpc) goes to the gRPC server, the rest to the JSON API.
func (d *Daemon) handler() http.Handler {
	api := d.apiMux()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			d.grpc.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// statusRecorder records the status code a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// route registers rt on mux, wrapped: request id, principal, auth (unless
// public), metrics and a structured log line.
func (d *Daemon) route(mux *http.ServeMux, rt apiRoute) {
	d.served = append(d.served, rt)
	pattern, public, h := rt.pattern, rt.public, rt.h
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rid := r.Header.Get(HeaderRequestID)
		if !requestIDRE.MatchString(rid) {
			rid = newRequestID()
		}
		w.Header().Set(HeaderRequestID, rid)
		ctx := context.WithValue(r.Context(), keyRequestID, rid)
		rec := &statusRecorder{ResponseWriter: w}
		err := func() error {
			if !public {
				if err := d.auth.CheckAuthorization(r.Header.Get("Authorization")); err != nil {
					rec.Header().Set("WWW-Authenticate", `Bearer realm="palyra-host"`)
					return err
				}
			}
			p, err := principalOf(r.Header.Get(HeaderPrincipal))
			if err != nil {
				return err
			}
			ctx = host.WithPrincipal(ctx, p)
			return h(rec, r.WithContext(ctx))
		}()
		if err != nil {
			d.writeError(rec, err)
		}
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		d.metrics.ObserveRequest("http", pattern, status, time.Since(start))
		args := []any{"request_id", rid, "method", r.Method, "route", pattern, "status", status, "duration", time.Since(start), "principal", host.PrincipalFrom(ctx)}
		if err != nil {
			args = append(args, "code", errcode.Of(err), "error", err)
		}
		if status >= 500 {
			d.log.Error("api request", args...)
		} else {
			d.log.Debug("api request", args...)
		}
	})
}

func (d *Daemon) httpOutdated(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	tofu, err := boolParam(q.Get("allow_tofu"), "allow_tofu")
	if err != nil {
		return err
	}
	rep, err := d.svc.Outdated(r.Context(), host.OutdatedRequest{SkillID: q.Get("skill_id"), AllowTOFU: tofu})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

func (d *Daemon) httpUpdate(w http.ResponseWriter, r *http.Request) error {
	var req host.UpdateRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	if req.SkillID != "" && req.SkillID != r.PathValue("id") {
		return fmt.Errorf("%w: skill_id %q in the body differs from %q in the path", ErrBadRequest, req.SkillID, r.PathValue("id"))
	}
	req.SkillID = r.PathValue("id")
	res, err := d.svc.Update(r.Context(), req)
	if err != nil {
		if res != nil {
			return &detailedError{err: err, details: res}
		}
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// httpApply takes {"document": "<palyra.toml>", "dry_run", "prune"}.
func (d *Daemon) httpApply(w http.ResponseWriter, r *http.Request) error {
	var req host.ApplyRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	res, err := d.svc.Apply(r.Context(), req)
	if err != nil {
		if res != nil {
			return &detailedError{err: err, details: res}
		}
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (d *Daemon) httpInfo(w http.ResponseWriter, r *http.Request) error {
	info, err := d.svc.Info(r.Context(), host.SkillRef{SkillID: r.PathValue("id"), Version: r.URL.Query().Get("version")})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, info)
}

func (d *Daemon) httpRemove(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	purge, err := boolParam(q.Get("purge_storage"), "purge_storage")
	if err != nil {
		return err
	}
	force, err := boolParam(q.Get("force"), "force")
	if err != nil {
		return err
	}
	out, err := d.svc.Remove(r.Context(), host.RemoveRequest{SkillID: r.PathValue("id"), Version: q.Get("version"), PurgeStorage: purge, Force: force})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Daemon) httpVerify(w http.ResponseWriter, r *http.Request) error {
	var req versionRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	res, err := d.svc.Verify(r.Context(), host.SkillRef{SkillID: r.PathValue("id"), Version: req.Version})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (d *Daemon) httpAudit(w http.ResponseWriter, r *http.Request) error {
	var req versionRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	res, err := d.svc.Audit(r.Context(), host.SkillRef{SkillID: r.PathValue("id"), Version: req.Version})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (d *Daemon) httpReaudit(w http.ResponseWriter, r *http.Request) error {
	rep, err := d.svc.Reaudit(r.Context())
	if err != nil {
		if rep != nil {
			return &detailedError{err: err, details: rep}
		}
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

// httpRotateTrust takes the rotation statement itself (the file palyra
// keys rotate writes).
func (d *Daemon) httpRotateTrust(w http.ResponseWriter, r *http.Request) error {
	stmt, err := d.readBody(r, trust.MaxRotationSize)
	if err != nil {
		return err
	}
	res, err := d.svc.RotateTrust(r.Context(), host.RotateTrustRequest{Statement: stmt})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// httpUpdateDenyFeed takes the signed deny feed file itself.
func (d *Daemon) httpUpdateDenyFeed(w http.ResponseWriter, r *http.Request) error {
	req := host.UpdateDenyFeedRequest{}
	for _, v := range r.URL.Query()[QueryTrustedPublisher] {
		pub, key, ok := strings.Cut(v, "=")
		if !ok || pub == "" || key == "" {
			return fmt.Errorf("%w: query parameter %s=%q is not PUBLISHER=PUBLIC_KEY_HEX", ErrBadRequest, QueryTrustedPublisher, v)
		}
		req.TrustedPublishers = append(req.TrustedPublishers, host.TrustedKey{Publisher: pub, PublicKeyHex: key})
	}
	data, err := d.readBody(r, feed.MaxFileBytes)
	if err != nil {
		return err
	}
	req.Feed = data
	res, err := d.svc.UpdateDenyFeed(r.Context(), req)
	if err != nil {
		if res != nil {
			return &detailedError{err: err, details: res}
		}
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (d *Daemon) httpDenyFeed(w http.ResponseWriter, r *http.Request) error {
	info, err := d.svc.DenyFeed(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, info)
}

// httpSetPolicy takes the profile's TOML (policy.toml).
func (d *Daemon) httpSetPolicy(w http.ResponseWriter, r *http.Request) error {
	prof, err := d.readBody(r, policy.MaxProfileBytes)
	if err != nil {
		return err
	}
	res, err := d.svc.SetPolicy(r.Context(), host.SetPolicyRequest{Profile: prof})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (d *Daemon) httpSkillMetrics(w http.ResponseWriter, r *http.Request) error {
	m, err := d.svc.SkillMetrics(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

func (d *Daemon) httpTools(w http.ResponseWriter, r *http.Request) error {
	cat, err := d.svc.Tools(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, cat)
}

func (d *Daemon) httpSidecars(w http.ResponseWriter, r *http.Request) error {
	st, err := d.svc.Sidecars(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sidecarList{Sidecars: st})
}

func (d *Daemon) httpCluster(w http.ResponseWriter, r *http.Request) error {
	st, err := d.cluster(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, clusterDoc{ClusterStatus: st, Posture: d.Posture()})
}

func (d *Daemon) httpHooks(w http.ResponseWriter, r *http.Request) error {
	bs, err := d.svc.Hooks(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, hookList{Bindings: bs})
}

// bindHookBody is POST /v1/hooks's body: a binding whose enabled, when
// absent, is true (a binding is made to run, as the CLI's hooks bind makes
// it); an explicit false makes a disabled binding.
type bindHookBody struct {
	host.HookBinding
	// Enabled shadows HookBinding.Enabled to tell absent from false.
	Enabled *bool `json:"enabled,omitempty"`
}

func (d *Daemon) httpBindHook(w http.ResponseWriter, r *http.Request) error {
	var body bindHookBody
	if err := d.decode(r, &body); err != nil {
		return err
	}
	b := body.HookBinding
	b.Enabled = body.Enabled == nil || *body.Enabled
	out, err := d.svc.BindHook(r.Context(), b)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, out)
}

func (d *Daemon) httpRemoveHook(w http.ResponseWriter, r *http.Request) error {
	if err := d.svc.RemoveHook(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, hookRemoved{Removed: r.PathValue("id")})
}

func (d *Daemon) httpFireHooks(w http.ResponseWriter, r *http.Request) error {
	var req host.FireRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	out, err := d.svc.FireHooks(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// sidecarList is the GET /v1/sidecars document.
type sidecarList struct {
	Sidecars []host.SidecarState `json:"sidecars"`
}

// hookList is the GET /v1/hooks document.
type hookList struct {
	Bindings []host.HookBinding `json:"bindings"`
}

// apiPrefixes are the paths of the API; the console serves the rest.
var apiPrefixes = []string{"/v1/", "/admin/", "/mcp/", "/metrics/", "/healthz/", "/readyz/"}

// isAPIPath reports whether path is under the API (then an unknown route is
// a JSON route_not_found, not the console's page).
func isAPIPath(path string) bool {
	for _, p := range apiPrefixes {
		if strings.HasPrefix(path, p) || path == strings.TrimSuffix(p, "/") {
			return true
		}
	}
	return false
}

// ErrRouteNotFound is a request for a path the API does not serve.
var ErrRouteNotFound = errcode.New("route_not_found", "no such API route")

type versionRequest struct {
	Version string `json:"version"`
}

// statusRequest is the body of quarantine, enable and disable (Palyra's
// admin body {version, reason?, override?}).
type statusRequest struct {
	Version  string `json:"version"`
	Reason   string `json:"reason"`
	Override bool   `json:"override"`
}

func (d *Daemon) httpStatus(verb string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req statusRequest
		if err := d.decode(r, &req); err != nil {
			return err
		}
		res, err := d.changeStatus(r.Context(), verb, r.PathValue("id"), req)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, res)
	}
}

// changeStatus is one status route: quarantine, disable, enable, or
// Palyra's admin enable (which needs override: true).
func (d *Daemon) changeStatus(ctx context.Context, verb, id string, req statusRequest) (*host.StatusResult, error) {
	switch verb {
	case "quarantine":
		return d.svc.Quarantine(ctx, host.StatusRequest{SkillID: id, Version: req.Version, Reason: req.Reason})
	case "disable":
		return d.svc.Disable(ctx, host.StatusRequest{SkillID: id, Version: req.Version, Reason: req.Reason})
	case "admin-enable":
		if !req.Override {
			return nil, fmt.Errorf("%w (Palyra's admin API)", ErrOverrideRequired)
		}
	}
	return d.svc.Enable(ctx, host.EnableRequest{SkillID: id, Version: req.Version, Reason: req.Reason, Override: req.Override})
}

// configSetRequest is the body of PATCH /v1/skills/{id}/config.
type configSetRequest struct {
	// Values are the values to set: each one JSON, by key.
	Values map[string]json.RawMessage `json:"values"`
}

func (d *Daemon) httpSkillConfig(w http.ResponseWriter, r *http.Request) error {
	res, err := d.svc.SkillConfig(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (d *Daemon) httpSetSkillConfig(w http.ResponseWriter, r *http.Request) error {
	var req configSetRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	res, err := d.svc.SetSkillConfig(r.Context(), host.SetConfigRequest{SkillID: r.PathValue("id"), Values: req.Values})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (d *Daemon) httpUnsetSkillConfig(w http.ResponseWriter, r *http.Request) error {
	res, err := d.svc.UnsetSkillConfig(r.Context(), host.UnsetConfigRequest{SkillID: r.PathValue("id"), Keys: r.URL.Query()["key"]})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// reviewRequest is the body of POST /v1/skills/{id}/review/approve.
type reviewRequest struct {
	Version string `json:"version,omitempty"`
	Reason  string `json:"reason"`
}

func (d *Daemon) httpApproveReview(w http.ResponseWriter, r *http.Request) error {
	var req reviewRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	res, err := d.svc.ApproveReview(r.Context(), host.ReviewRequest{SkillID: r.PathValue("id"), Version: req.Version, Reason: req.Reason})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (d *Daemon) httpListSkills(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req := host.ListRequest{SkillID: q.Get("skill_id"), Publisher: q.Get("publisher")}
	var err error
	for name, dst := range map[string]*bool{"current_only": &req.CurrentOnly, "quarantined_only": &req.QuarantinedOnly, "eligible_only": &req.EligibleOnly} {
		if *dst, err = boolParam(q.Get(name), name); err != nil {
			return err
		}
	}
	ls, err := d.svc.List(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ls)
}

// QueryTrustedPublisher is the repeatable query parameter of POST
// /v1/skills that allowlists a publisher key first, as PUBLISHER=HEX (the
// CLI's --trusted-publisher).
const QueryTrustedPublisher = "trusted_publisher"

// installFromRequest is the JSON body of POST /v1/skills that installs
// from a registry: a source.Ref and the install's options.
type installFromRequest struct {
	host.SourceRef
	AllowTOFU          bool `json:"allow_tofu"`
	AcceptCapabilities bool `json:"accept_capabilities"`
	Force              bool `json:"force"`
	DryRun             bool `json:"dry_run"`
}

func (d *Daemon) httpInstall(w http.ResponseWriter, r *http.Request) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		return d.httpInstallFrom(w, r)
	}
	q := r.URL.Query()
	var req host.InstallRequest
	var err error
	for name, dst := range map[string]*bool{"allow_tofu": &req.AllowTOFU, "force": &req.Force, "accept_capabilities": &req.AcceptCapabilities, "dry_run": &req.DryRun} {
		if *dst, err = boolParam(q.Get(name), name); err != nil {
			return err
		}
	}
	for _, v := range q[QueryTrustedPublisher] {
		pub, key, ok := strings.Cut(v, "=")
		if !ok || pub == "" || key == "" {
			return fmt.Errorf("%w: query parameter %s=%q is not PUBLISHER=PUBLIC_KEY_HEX", ErrBadRequest, QueryTrustedPublisher, v)
		}
		req.TrustedPublishers = append(req.TrustedPublishers, host.TrustedKey{Publisher: pub, PublicKeyHex: key})
	}
	if req.Artifact, err = d.readBody(r, d.cfg.MaxArtifactBytes); err != nil {
		return err
	}
	res, err := d.install(r.Context(), req)
	if err != nil {
		if res != nil {
			return &detailedError{err: err, details: res}
		}
		return err
	}
	if req.DryRun {
		return writeJSON(w, http.StatusOK, res)
	}
	return writeJSON(w, http.StatusCreated, res)
}

// httpInstallFrom installs from a registry: the daemon fetches the
// artifact with its own registry configuration and credentials.
func (d *Daemon) httpInstallFrom(w http.ResponseWriter, r *http.Request) error {
	var body installFromRequest
	if err := d.decode(r, &body); err != nil {
		return err
	}
	from := body.SourceRef
	req := host.InstallRequest{From: &from, AllowTOFU: body.AllowTOFU, AcceptCapabilities: body.AcceptCapabilities, Force: body.Force, DryRun: body.DryRun}
	res, err := d.svc.Install(r.Context(), req)
	if err != nil {
		if res != nil {
			return &detailedError{err: err, details: res}
		}
		return err
	}
	status := http.StatusCreated
	if body.DryRun {
		status = http.StatusOK
	}
	return writeJSON(w, status, res)
}

// install installs with the API's source: the request that uploaded the
// artifact.
func (d *Daemon) install(ctx context.Context, req host.InstallRequest) (*host.InstallResult, error) {
	req.Source = host.InstallSource{Kind: "managed_artifact", Ref: "api:" + requestIDOf(ctx)}
	return d.svc.Install(ctx, req)
}

// callRequest is the body of a tool call.
type callRequest struct {
	Input     json.RawMessage `json:"input"`
	TimeoutMS int64           `json:"timeout_ms"`
	// ApprovalID runs a call that needs approval with the approval given
	// (host.CallRequest.ApprovalID).
	ApprovalID string `json:"approval_id,omitempty"`
}

// timeoutOf converts a request's timeout_ms, refusing one the duration
// cannot hold (the Service refuses the rest of what is out of range).
func timeoutOf(ms int64) (time.Duration, error) {
	if ms > int64(host.MaxCallTimeout/time.Millisecond) || ms < -int64(host.MaxCallTimeout/time.Millisecond) {
		return 0, fmt.Errorf("%w: timeout_ms %d is outside 0..%d", ErrBadRequest, ms, host.MaxCallTimeout.Milliseconds())
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func (d *Daemon) httpCall(w http.ResponseWriter, r *http.Request) error {
	var req callRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	timeout, err := timeoutOf(req.TimeoutMS)
	if err != nil {
		return err
	}
	out, err := d.svc.Call(r.Context(), host.CallRequest{SkillID: r.PathValue("id"), ToolID: r.PathValue("tool"), Input: req.Input, Timeout: timeout, ApprovalID: req.ApprovalID})
	return writeCall(w, out, err)
}

// inlineRequest is the body of an inline run: the module as standard
// base64, the skill.toml (optional), the tool, its input and the timeout.
type inlineRequest struct {
	Module     []byte          `json:"module"`
	ModuleName string          `json:"module_name"`
	Manifest   string          `json:"manifest"`
	ToolID     string          `json:"tool_id"`
	Input      json.RawMessage `json:"input"`
	TimeoutMS  int64           `json:"timeout_ms"`
}

// maxInlineRequestBytes bounds the body of an inline run: a module a
// little over the module cap in base64, so that the Service, not the
// transport, refuses it with the limit named (artifact_entry_too_large),
// plus the manifest and the input.
const maxInlineRequestBytes = (host.MaxInlineModuleBytes+1<<20)/3*4 + 2*manifest.MaxManifestBytes + 2*host.MaxInputBytes + 64<<10

// httpRunInline is an inline run (POST /v1/dev/run), refused unless the
// daemon's profile sets [dev] allow_inline = true.
func (d *Daemon) httpRunInline(w http.ResponseWriter, r *http.Request) error {
	body, err := d.readBody(r, maxInlineRequestBytes)
	if err != nil {
		return err
	}
	var req inlineRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("%w: request body: %v", ErrBadRequest, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: request body: more than one JSON value", ErrBadRequest)
	}
	timeout, err := timeoutOf(req.TimeoutMS)
	if err != nil {
		return err
	}
	out, err := d.svc.RunInline(r.Context(), host.InlineRunRequest{Module: req.Module, ModuleName: req.ModuleName, Manifest: req.Manifest, ToolID: req.ToolID, Input: req.Input, Timeout: timeout})
	return writeCall(w, out, err)
}

// httpSubmit is a form submit, {componentId, values}, checked as A2UI
// submits are (a2ui.ParseSubmit) before it goes to the Service.
func (d *Daemon) httpSubmit(w http.ResponseWriter, r *http.Request) error {
	body, err := d.readBody(r, d.cfg.MaxRequestBytes)
	if err != nil {
		return err
	}
	req, err := submitRequest(r.PathValue("doc"), body)
	if err != nil {
		return err
	}
	req.ApprovalID = r.URL.Query().Get("approval_id")
	out, err := d.svc.SubmitForm(r.Context(), req)
	return writeCall(w, out, err)
}

// submitRequest decodes a form submit's JSON for document id.
func submitRequest(id string, body []byte) (host.SubmitRequest, error) {
	sub, err := a2ui.ParseSubmit(body)
	if err != nil {
		return host.SubmitRequest{}, err
	}
	return host.SubmitRequest{DocumentID: id, ComponentID: sub.ComponentID, Values: sub.Values}, nil
}

// writeCall answers a call or a submit: the result, or the error with the
// result the sidecar reported as details.
func writeCall(w http.ResponseWriter, out *host.CallResult, err error) error {
	if pa := host.PendingApprovalOf(err); pa != nil {
		return writePending(w, pa, err)
	}
	if err != nil {
		if res := host.CallResultOf(err); res != nil {
			return &detailedError{err: err, details: res}
		}
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// httpEvents streams events as server-sent events: `id:` is the journal
// id (absent on hook outcomes), `event:` the kind, `data:` the event JSON.
// ?after=ID (or the Last-Event-ID header of a reconnecting client) replays
// the journal after that id first; ?follow=false ends the stream after
// that replay instead of following live events.
func (d *Daemon) httpEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req := host.EventsRequest{After: -1, Follow: true}
	v := q.Get("after")
	if v == "" {
		v = r.Header.Get("Last-Event-ID")
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: after %q is not a non-negative event id", ErrBadRequest, v)
		}
		req.After = n
	}
	if v := q.Get("follow"); v != "" {
		f, err := boolParam(v, "follow")
		if err != nil {
			return err
		}
		req.Follow = f
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming unsupported")
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": palyra-host events\n\n")
	fl.Flush()
	ctx, cancel := context.WithCancel(r.Context())
	var mu sync.Mutex
	write := func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := w.Write(b); err != nil {
			cancel() // the client went away
			return nil
		}
		fl.Flush()
		return nil
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		hb := time.NewTicker(sseHeartbeat)
		defer hb.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-d.stopping:
				// Shutdown ends the streams, so the drain does not wait
				// for them.
				cancel()
				return
			case <-hb.C:
				write([]byte(": heartbeat\n\n"))
			}
		}
	}()
	defer wg.Wait()
	defer cancel()
	err := d.svc.Events(ctx, req, func(ev host.Event) error {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if ev.ID != 0 {
			fmt.Fprintf(&buf, "id: %d\n", ev.ID)
		}
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", ev.Kind, b)
		return write(buf.Bytes())
	})
	if err != nil && ctx.Err() != nil {
		// The stream ended with the client or the daemon: not an error.
		return nil
	}
	if err != nil {
		// The headers are out: the error can only be logged, and the
		// stream ends.
		d.log.Warn("event stream ended", "request_id", requestIDOf(r.Context()), "code", errcode.Of(err), "error", err)
	}
	return nil
}

// decode reads a JSON body (at most MaxRequestBytes; an empty body is {})
// into v; unknown fields are errors.
func (d *Daemon) decode(r *http.Request, v any) error {
	body, err := d.readBody(r, d.cfg.MaxRequestBytes)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: request body: %v", ErrBadRequest, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: request body: more than one JSON value", ErrBadRequest)
	}
	return nil
}

// readBody reads the whole body, refusing one over limit with the limit and
// the size seen.
func (d *Daemon) readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrRequestTooLarge, r.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the body: %v", ErrBadRequest, err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes, over the %d-byte limit", ErrRequestTooLarge, limit, limit)
	}
	return body, nil
}

func boolParam(v, name string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: query parameter %s=%q is not a boolean", ErrBadRequest, name, v)
	}
	return b, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
	return nil
}

// detailedError is an error that carries a result to show with it (the
// install result of a refused install, the logs of a failed call).
type detailedError struct {
	err     error
	details any
}

func (e *detailedError) Error() string { return e.err.Error() }
func (e *detailedError) Unwrap() error { return e.err }

// ErrorBody is the JSON of every API error:
// {"error":{"code","message","detail","request_id"},"details":...}.
// message is the sentence a person reads (readableMessage); detail, when
// it says more, is the whole error chain with the internal context the
// message leaves out (also in the daemon's log line of request_id).
type ErrorBody struct {
	Error struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Detail    string `json:"detail,omitempty"`
		RequestID string `json:"request_id,omitempty"`
	} `json:"error"`
	Details any `json:"details,omitempty"`
}

func (d *Daemon) writeError(w http.ResponseWriter, err error) {
	var body ErrorBody
	body.Error.Code = errcode.Of(err)
	body.Error.Message, body.Error.Detail = readableMessage(err)
	body.Error.RequestID = w.Header().Get(HeaderRequestID)
	var de *detailedError
	if errors.As(err, &de) {
		body.Details = de.details
	}
	writeJSON(w, HTTPStatus(body.Error.Code), body)
}
