package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/errcode"
)

// Environment variables the CLI reads (Palyra's names).
const (
	EnvURL   = "PALYRA_DAEMON_URL"
	EnvToken = "PALYRA_ADMIN_TOKEN"
)

// MaxResponseBytes caps a response body the client reads.
const MaxResponseBytes = 64 << 20

// ErrTransport is a request that got no answer from the daemon.
var ErrTransport = errcode.New("daemon_unreachable", "the palyra-host daemon could not be reached")

// Client calls one daemon. It implements host.Service over the daemon's
// HTTP API, so code written against the Service runs the same against a
// local host and a daemon. It is safe for concurrent use.
type Client struct {
	base      *url.URL
	token     string
	principal string
	http      *http.Client
}

// Compile-time check: the client is a Service.
var _ host.Service = (*Client)(nil)

// Option tunes a Client.
type Option func(*Client)

// WithPrincipal names who acts in every request whose context names nobody
// (host.WithPrincipal names someone for one request).
func WithPrincipal(p string) Option { return func(c *Client) { c.principal = p } }

// WithHTTPClient replaces the HTTP client (TLS roots, timeouts). Its
// Timeout, if any, bounds event streams too.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client of the daemon at baseURL (http or https) that sends
// token as `Authorization: Bearer`.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(baseURL), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: daemon URL %q is not an http(s) URL", host.ErrBadRequest, baseURL)
	}
	c := &Client{base: u, token: strings.TrimSpace(token), http: &http.Client{}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Error is an error answer of the daemon.
type Error struct {
	Status    int
	ErrorCode string
	// Message is the daemon's readable sentence.
	Message string
	// Detail is the daemon's whole error chain when it says more than
	// Message (the internal context: which step failed where), "" when not.
	Detail    string
	RequestID string
	// Details is the result the daemon sent with the error (a refused
	// install's result, a failed call's logs), raw JSON.
	Details json.RawMessage
}

// Error returns the daemon's whole error text (Detail, else Message), so a
// remote failure reads as the same failure of a local Host does; Message
// is the readable sentence alone.
func (e *Error) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	return e.Message
}

// Code returns the stable code (errcode.Coder).
func (e *Error) Code() string { return e.ErrorCode }

// Unwrap returns the sentinel registered for the code, so errors.Is works
// as it does on a local error.
func (e *Error) Unwrap() error {
	if s := errcode.Lookup(e.ErrorCode); s != nil {
		return s
	}
	return nil
}

// errorOf decodes an error answer.
func errorOf(status int, method, path string, data []byte) error {
	var eb daemon.ErrorBody
	var details struct {
		Details json.RawMessage `json:"details"`
	}
	if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
		return &Error{Status: status, ErrorCode: errcode.Internal, Message: fmt.Sprintf("%s %s: HTTP %d", method, path, status)}
	}
	json.Unmarshal(data, &details)
	return &Error{Status: status, ErrorCode: eb.Error.Code, Message: eb.Error.Message, Detail: eb.Error.Detail, RequestID: eb.Error.RequestID, Details: details.Details}
}

// request builds a request to path with the token and who acts.
func (c *Client) request(ctx context.Context, method, path string, q url.Values, body io.Reader) (*http.Request, string, error) {
	u := *c.base
	u.Path += path
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, "", err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	p, ok := host.NamedPrincipal(ctx)
	if !ok {
		p = c.principal
	}
	if p != "" {
		req.Header.Set(daemon.HeaderPrincipal, p)
	}
	return req, u.Redacted(), nil
}

// do sends a request and decodes a JSON answer into out (when non-nil).
func (c *Client) do(ctx context.Context, method, path string, q url.Values, contentType string, body io.Reader, out any) error {
	req, where, err := c.request(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrTransport, method, where, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("%w: reading the answer: %v", ErrTransport, err)
	}
	if len(data) > MaxResponseBytes {
		return fmt.Errorf("%w: answer over %d bytes", ErrTransport, MaxResponseBytes)
	}
	if resp.StatusCode >= 300 {
		return errorOf(resp.StatusCode, method, path, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: decoding the answer of %s %s: %v", ErrTransport, method, path, err)
	}
	return nil
}

func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, q, "", nil, out)
}

func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, nil, "application/json", bytes.NewReader(b), out)
}

func esc(s string) string { return url.PathEscape(s) }

// setBools sets each true flag as name=true.
func setBools(q url.Values, flags map[string]bool) {
	for k, v := range flags {
		if v {
			q.Set(k, "true")
		}
	}
}

// withDetails decodes the result a daemon error carries into out and
// reports whether there was one.
func withDetails(err error, out any) bool {
	var e *Error
	return errors.As(err, &e) && len(e.Details) > 0 && json.Unmarshal(e.Details, out) == nil
}

// Health checks /healthz.
func (c *Client) Health(ctx context.Context) error {
	return c.get(ctx, "/healthz", nil, nil)
}

// Install implements host.Service: POST /v1/skills with the artifact.
// On a refusal that still produced a result (a quarantined install, a
// capability escalation), the result is returned with the error. The
// daemon records the request as the install's source (req.Source is not
// sent).
func (c *Client) Install(ctx context.Context, req host.InstallRequest) (*host.InstallResult, error) {
	if req.From != nil {
		return c.installFrom(ctx, req)
	}
	q := url.Values{}
	setBools(q, map[string]bool{"allow_tofu": req.AllowTOFU, "force": req.Force, "accept_capabilities": req.AcceptCapabilities, "dry_run": req.DryRun})
	for _, k := range req.TrustedPublishers {
		q.Add(daemon.QueryTrustedPublisher, k.Publisher+"="+k.PublicKeyHex)
	}
	var out host.InstallResult
	err := c.do(ctx, http.MethodPost, "/v1/skills", q, "application/octet-stream", bytes.NewReader(req.Artifact), &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}

// List implements host.Service: GET /v1/skills.
func (c *Client) List(ctx context.Context, req host.ListRequest) (*host.SkillList, error) {
	q := url.Values{}
	if req.SkillID != "" {
		q.Set("skill_id", req.SkillID)
	}
	if req.Publisher != "" {
		q.Set("publisher", req.Publisher)
	}
	setBools(q, map[string]bool{"current_only": req.CurrentOnly, "quarantined_only": req.QuarantinedOnly, "eligible_only": req.EligibleOnly})
	var out host.SkillList
	if err := c.get(ctx, "/v1/skills", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Info implements host.Service: GET /v1/skills/{id}.
func (c *Client) Info(ctx context.Context, ref host.SkillRef) (*host.SkillInfo, error) {
	q := url.Values{}
	if ref.Version != "" {
		q.Set("version", ref.Version)
	}
	var out host.SkillInfo
	if err := c.get(ctx, "/v1/skills/"+esc(ref.SkillID), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// versionBody is the body of verify and audit.
type versionBody struct {
	Version string `json:"version,omitempty"`
}

// Verify implements host.Service: POST /v1/skills/{id}/verify.
func (c *Client) Verify(ctx context.Context, ref host.SkillRef) (*host.VerifyResult, error) {
	var out host.VerifyResult
	if err := c.postJSON(ctx, "/v1/skills/"+esc(ref.SkillID)+"/verify", versionBody{ref.Version}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Audit implements host.Service: POST /v1/skills/{id}/audit.
func (c *Client) Audit(ctx context.Context, ref host.SkillRef) (*host.AuditResult, error) {
	var out host.AuditResult
	if err := c.postJSON(ctx, "/v1/skills/"+esc(ref.SkillID)+"/audit", versionBody{ref.Version}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// statusBody is the body of quarantine, enable and disable.
type statusBody struct {
	Version  string `json:"version,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Override bool   `json:"override,omitempty"`
}

func (c *Client) status(ctx context.Context, verb, id string, b statusBody) (*host.StatusResult, error) {
	var out host.StatusResult
	if err := c.postJSON(ctx, "/v1/skills/"+esc(id)+"/"+verb, b, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Enable implements host.Service: POST /v1/skills/{id}/enable.
func (c *Client) Enable(ctx context.Context, req host.EnableRequest) (*host.StatusResult, error) {
	return c.status(ctx, "enable", req.SkillID, statusBody{Version: req.Version, Reason: req.Reason, Override: req.Override})
}

// ApproveReview implements host.Service: POST
// /v1/skills/{id}/review/approve.
func (c *Client) ApproveReview(ctx context.Context, req host.ReviewRequest) (*host.StatusResult, error) {
	var out host.StatusResult
	body := struct {
		Version string `json:"version,omitempty"`
		Reason  string `json:"reason"`
	}{req.Version, req.Reason}
	if err := c.postJSON(ctx, "/v1/skills/"+esc(req.SkillID)+"/review/approve", body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Disable implements host.Service: POST /v1/skills/{id}/disable.
func (c *Client) Disable(ctx context.Context, req host.StatusRequest) (*host.StatusResult, error) {
	return c.status(ctx, "disable", req.SkillID, statusBody{Version: req.Version, Reason: req.Reason})
}

// Quarantine implements host.Service: POST /v1/skills/{id}/quarantine.
func (c *Client) Quarantine(ctx context.Context, req host.StatusRequest) (*host.StatusResult, error) {
	return c.status(ctx, "quarantine", req.SkillID, statusBody{Version: req.Version, Reason: req.Reason})
}

// Remove implements host.Service: DELETE /v1/skills/{id}.
func (c *Client) Remove(ctx context.Context, req host.RemoveRequest) (*host.RemoveResult, error) {
	q := url.Values{}
	if req.Version != "" {
		q.Set("version", req.Version)
	}
	setBools(q, map[string]bool{"purge_storage": req.PurgeStorage, "force": req.Force})
	var out host.RemoveResult
	if err := c.do(ctx, http.MethodDelete, "/v1/skills/"+esc(req.SkillID), q, "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Reaudit implements host.Service: POST /v1/reaudit. When some version
// could not be re-audited, the report is returned with the error.
func (c *Client) Reaudit(ctx context.Context) (*host.ReauditReport, error) {
	var out host.ReauditReport
	err := c.postJSON(ctx, "/v1/reaudit", struct{}{}, &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}

// RotateTrust implements host.Service: POST /v1/trust/rotate with the
// statement as the body.
func (c *Client) RotateTrust(ctx context.Context, req host.RotateTrustRequest) (*host.RotateTrustResult, error) {
	var out host.RotateTrustResult
	if err := c.do(ctx, http.MethodPost, "/v1/trust/rotate", nil, "application/json", bytes.NewReader(req.Statement), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateDenyFeed implements host.Service: PUT /v1/feed with the feed file
// as the body and the trusted publishers as trusted_publisher query
// parameters. When some version could not be re-audited, the result is
// returned with the error.
func (c *Client) UpdateDenyFeed(ctx context.Context, req host.UpdateDenyFeedRequest) (*host.DenyFeedUpdate, error) {
	q := url.Values{}
	for _, k := range req.TrustedPublishers {
		q.Add(daemon.QueryTrustedPublisher, k.Publisher+"="+k.PublicKeyHex)
	}
	var out host.DenyFeedUpdate
	err := c.do(ctx, http.MethodPut, "/v1/feed", q, "application/json", bytes.NewReader(req.Feed), &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}

// DenyFeed implements host.Service: GET /v1/feed.
func (c *Client) DenyFeed(ctx context.Context) (*host.DenyFeedInfo, error) {
	var out host.DenyFeedInfo
	if err := c.get(ctx, "/v1/feed", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetPolicy implements host.Service: PUT /v1/policy with the profile's
// TOML as the body.
func (c *Client) SetPolicy(ctx context.Context, req host.SetPolicyRequest) (*host.PolicyResult, error) {
	var out host.PolicyResult
	if err := c.do(ctx, http.MethodPut, "/v1/policy", nil, "application/toml", bytes.NewReader(req.Profile), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SkillConfig implements host.Service: GET /v1/skills/{id}/config.
func (c *Client) SkillConfig(ctx context.Context, skillID string) (*host.SkillConfig, error) {
	var out host.SkillConfig
	if err := c.get(ctx, "/v1/skills/"+esc(skillID)+"/config", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetSkillConfig implements host.Service: PATCH /v1/skills/{id}/config
// with {"values": {...}}.
func (c *Client) SetSkillConfig(ctx context.Context, req host.SetConfigRequest) (*host.SkillConfig, error) {
	body, err := json.Marshal(struct {
		Values map[string]json.RawMessage `json:"values"`
	}{req.Values})
	if err != nil {
		return nil, fmt.Errorf("client: encode config: %w", err)
	}
	var out host.SkillConfig
	if err := c.do(ctx, http.MethodPatch, "/v1/skills/"+esc(req.SkillID)+"/config", nil, "application/json", bytes.NewReader(body), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UnsetSkillConfig implements host.Service: DELETE
// /v1/skills/{id}/config?key=K&key=...
func (c *Client) UnsetSkillConfig(ctx context.Context, req host.UnsetConfigRequest) (*host.SkillConfig, error) {
	q := url.Values{"key": req.Keys}
	var out host.SkillConfig
	if err := c.do(ctx, http.MethodDelete, "/v1/skills/"+esc(req.SkillID)+"/config", q, "", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// callBody is the body of a tool call.
type callBody struct {
	Input      json.RawMessage `json:"input,omitempty"`
	TimeoutMS  int64           `json:"timeout_ms,omitempty"`
	ApprovalID string          `json:"approval_id,omitempty"`
}

// Call implements host.Service: POST /v1/skills/{id}/tools/{tool}/call.
// A timeout is sent in whole milliseconds, rounded up. On a failure the
// sidecar reported, the result comes with the error, which is a
// *host.CallError carrying it (host.CallResultOf).
func (c *Client) Call(ctx context.Context, req host.CallRequest) (*host.CallResult, error) {
	ms := req.Timeout.Milliseconds()
	if req.Timeout > 0 && req.Timeout%time.Millisecond != 0 {
		ms++
	}
	var out host.CallResult
	err := c.postJSON(ctx, "/v1/skills/"+esc(req.SkillID)+"/tools/"+esc(req.ToolID)+"/call", callBody{Input: req.Input, TimeoutMS: ms, ApprovalID: req.ApprovalID}, &out)
	return callResult(&out, err)
}

// inlineBody is the body of an inline run (POST /v1/dev/run); module is
// standard base64 in JSON.
type inlineBody struct {
	Module     []byte          `json:"module"`
	ModuleName string          `json:"module_name,omitempty"`
	Manifest   string          `json:"manifest,omitempty"`
	ToolID     string          `json:"tool_id"`
	Input      json.RawMessage `json:"input,omitempty"`
	TimeoutMS  int64           `json:"timeout_ms,omitempty"`
}

// RunInline implements host.Service: POST /v1/dev/run with the module
// (base64), the manifest, the tool, the input and the timeout in whole
// milliseconds, rounded up. Errors are as Call's; a daemon whose profile
// does not allow inline modules answers inline_not_allowed.
func (c *Client) RunInline(ctx context.Context, req host.InlineRunRequest) (*host.CallResult, error) {
	ms := req.Timeout.Milliseconds()
	if req.Timeout > 0 && req.Timeout%time.Millisecond != 0 {
		ms++
	}
	var out host.CallResult
	err := c.postJSON(ctx, "/v1/dev/run", inlineBody{Module: req.Module, ModuleName: req.ModuleName, Manifest: req.Manifest, ToolID: req.ToolID, Input: req.Input, TimeoutMS: ms}, &out)
	return callResult(&out, err)
}

// SubmitForm implements host.Service: POST /v1/a2ui/{doc}/submit with
// {componentId, values}. Errors are as Call's.
func (c *Client) SubmitForm(ctx context.Context, req host.SubmitRequest) (*host.CallResult, error) {
	body := struct {
		ComponentID string         `json:"componentId"`
		Values      map[string]any `json:"values"`
	}{req.ComponentID, req.Values}
	var out host.CallResult
	path := "/v1/a2ui/" + esc(req.DocumentID) + "/submit"
	if req.ApprovalID != "" {
		path += "?approval_id=" + url.QueryEscape(req.ApprovalID)
	}
	err := c.postJSON(ctx, path, body, &out)
	return callResult(&out, err)
}

// callResult is a call's answer: the result, or the error as a
// *host.CallError with the result the daemon sent in its details.
func callResult(out *host.CallResult, err error) (*host.CallResult, error) {
	if err == nil {
		if pa := out.Pending; pa != nil {
			// 202: the call waits for approval; nothing else is set.
			return &host.CallResult{SkillID: pa.SkillID, Version: pa.Version, ToolID: pa.ToolID, Pending: pa}, &host.PendingError{Approval: pa}
		}
		return out, nil
	}
	var res host.CallResult
	if !withDetails(err, &res) {
		return nil, err
	}
	return &res, &host.CallError{Err: err, Result: &res}
}

// Tools implements host.Service: GET /v1/tools.
func (c *Client) Tools(ctx context.Context) (*host.ToolCatalog, error) {
	var out host.ToolCatalog
	if err := c.get(ctx, "/v1/tools", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Hooks implements host.Service: GET /v1/hooks.
func (c *Client) Hooks(ctx context.Context) ([]host.HookBinding, error) {
	var out struct {
		Bindings []host.HookBinding `json:"bindings"`
	}
	if err := c.get(ctx, "/v1/hooks", nil, &out); err != nil {
		return nil, err
	}
	if out.Bindings == nil {
		out.Bindings = []host.HookBinding{}
	}
	return out.Bindings, nil
}

// BindHook implements host.Service: POST /v1/hooks.
func (c *Client) BindHook(ctx context.Context, b host.HookBinding) (*host.HookBinding, error) {
	var out host.HookBinding
	if err := c.postJSON(ctx, "/v1/hooks", b, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetHookEnabled implements host.Service: POST /v1/hooks/{id}/enable or
// /disable.
func (c *Client) SetHookEnabled(ctx context.Context, hookID string, enabled bool) (*host.HookBinding, error) {
	verb := "disable"
	if enabled {
		verb = "enable"
	}
	var out host.HookBinding
	if err := c.postJSON(ctx, "/v1/hooks/"+esc(hookID)+"/"+verb, struct{}{}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveHook implements host.Service: DELETE /v1/hooks/{id}.
func (c *Client) RemoveHook(ctx context.Context, hookID string) error {
	return c.do(ctx, http.MethodDelete, "/v1/hooks/"+esc(hookID), nil, "", nil, nil)
}

// FireHooks implements host.Service: POST /v1/hooks/fire. A nil payload
// lets the daemon send its default one (naming the API and who acts).
func (c *Client) FireHooks(ctx context.Context, req host.FireRequest) (*host.FireResult, error) {
	var out host.FireResult
	if err := c.postJSON(ctx, "/v1/hooks/fire", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Sidecars implements host.Service: GET /v1/sidecars.
func (c *Client) Sidecars(ctx context.Context) ([]host.SidecarState, error) {
	var out struct {
		Sidecars []host.SidecarState `json:"sidecars"`
	}
	if err := c.get(ctx, "/v1/sidecars", nil, &out); err != nil {
		return nil, err
	}
	if out.Sidecars == nil {
		out.Sidecars = []host.SidecarState{}
	}
	return out.Sidecars, nil
}

// Cluster implements host.Service: GET /v1/cluster.
func (c *Client) Cluster(ctx context.Context) (*host.ClusterStatus, error) {
	var out host.ClusterStatus
	if err := c.get(ctx, "/v1/cluster", nil, &out); err != nil {
		return nil, err
	}
	if out.Nodes == nil {
		out.Nodes = []host.NodeStatus{}
	}
	return &out, nil
}

// SkillMetrics implements host.Service: GET /v1/skills/{id}/metrics.
func (c *Client) SkillMetrics(ctx context.Context, skillID string) (*host.SkillMetrics, error) {
	var out host.SkillMetrics
	if err := c.get(ctx, "/v1/skills/"+esc(skillID)+"/metrics", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Approvals implements host.Service: GET /v1/approvals.
func (c *Client) Approvals(ctx context.Context, req host.ApprovalsRequest) (*host.ApprovalList, error) {
	q := url.Values{}
	if req.State != "" {
		q.Set("state", string(req.State))
	}
	if req.SkillID != "" {
		q.Set("skill_id", req.SkillID)
	}
	var out host.ApprovalList
	if err := c.get(ctx, "/v1/approvals", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Approval implements host.Service: GET /v1/approvals/{id}.
func (c *Client) Approval(ctx context.Context, id string) (*host.ApprovalInfo, error) {
	var out host.ApprovalInfo
	if err := c.get(ctx, "/v1/approvals/"+esc(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DecideApproval implements host.Service: POST /v1/approvals/{id}/approve
// or /deny.
func (c *Client) DecideApproval(ctx context.Context, req host.DecideRequest) (*host.ApprovalInfo, error) {
	verb := "deny"
	if req.Approve {
		verb = "approve"
	}
	body := struct {
		Reason string `json:"reason,omitempty"`
	}{req.Reason}
	var out host.ApprovalInfo
	if err := c.postJSON(ctx, "/v1/approvals/"+esc(req.ID)+"/"+verb, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
