package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/install"
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

// Client calls one daemon. It is safe for concurrent use.
type Client struct {
	base      *url.URL
	token     string
	principal string
	http      *http.Client
}

// Option tunes a Client.
type Option func(*Client)

// WithPrincipal sends x-palyra-principal with every request.
func WithPrincipal(p string) Option { return func(c *Client) { c.principal = p } }

// WithHTTPClient replaces the HTTP client (TLS roots, timeouts).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// New returns a client of the daemon at baseURL (http or https) that sends
// token as `Authorization: Bearer`.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(baseURL), "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: daemon URL %q is not an http(s) URL", daemon.ErrBadRequest, baseURL)
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
	Message   string
	RequestID string
	// Details is the result the daemon sent with the error (a refused
	// install's result, a failed call's logs), raw JSON.
	Details json.RawMessage
}

// Error returns the daemon's message.
func (e *Error) Error() string { return e.Message }

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
	var eb struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
		Details json.RawMessage `json:"details"`
	}
	if json.Unmarshal(data, &eb) != nil || eb.Error.Code == "" {
		return &Error{Status: status, ErrorCode: errcode.Internal, Message: fmt.Sprintf("%s %s: HTTP %d", method, path, status)}
	}
	return &Error{Status: status, ErrorCode: eb.Error.Code, Message: eb.Error.Message, RequestID: eb.Error.RequestID, Details: eb.Details}
}

// do sends a request and decodes a JSON answer into out (when non-nil).
func (c *Client) do(ctx context.Context, method, path string, q url.Values, contentType string, body io.Reader, out any) error {
	u := *c.base
	u.Path += path
	if q != nil {
		u.RawQuery = q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.principal != "" {
		req.Header.Set(daemon.HeaderPrincipal, c.principal)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrTransport, method, u.Redacted(), err)
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

func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, nil, "application/json", bytes.NewReader(b), out)
}

func esc(s string) string { return url.PathEscape(s) }

// Health checks /healthz.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", nil, "", nil, nil)
}

// SkillList is the answer of List.
type SkillList struct {
	SkillsRoot string            `json:"skills_root"`
	Count      int               `json:"count"`
	Entries    []install.Listing `json:"entries"`
}

// List lists installed versions.
func (c *Client) List(ctx context.Context, o install.ListOptions) (*SkillList, error) {
	q := url.Values{}
	if o.SkillID != "" {
		q.Set("skill_id", o.SkillID)
	}
	if o.Publisher != "" {
		q.Set("publisher", o.Publisher)
	}
	for k, v := range map[string]bool{"current_only": o.CurrentOnly, "quarantined_only": o.QuarantinedOnly, "eligible_only": o.EligibleOnly} {
		if v {
			q.Set(k, "true")
		}
	}
	var out SkillList
	return &out, c.do(ctx, http.MethodGet, "/v1/skills", q, "", nil, &out)
}

// Info describes a version ("" = current).
func (c *Client) Info(ctx context.Context, id, version string) (*install.Info, error) {
	q := url.Values{}
	if version != "" {
		q.Set("version", version)
	}
	var out install.Info
	return &out, c.do(ctx, http.MethodGet, "/v1/skills/"+esc(id), q, "", nil, &out)
}

// Install uploads and installs an artifact. On a refusal that still
// produced a result (a quarantined install, a capability escalation), the
// result is returned with the error.
func (c *Client) Install(ctx context.Context, artifact []byte, o install.InstallOptions) (*install.InstallResult, error) {
	q := url.Values{}
	for k, v := range map[string]bool{"allow_tofu": o.AllowTOFU, "force": o.Force, "accept_capabilities": o.AcceptCapabilities} {
		if v {
			q.Set(k, "true")
		}
	}
	var out install.InstallResult
	err := c.do(ctx, http.MethodPost, "/v1/skills", q, "application/octet-stream", bytes.NewReader(artifact), &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}

// Verify re-verifies an installed version.
func (c *Client) Verify(ctx context.Context, id, version string) (*install.VerifyResult, error) {
	var out install.VerifyResult
	return &out, c.postJSON(ctx, "/v1/skills/"+esc(id)+"/verify", map[string]string{"version": version}, &out)
}

// Audit re-audits an installed version.
func (c *Client) Audit(ctx context.Context, id, version string) (*install.AuditResult, error) {
	var out install.AuditResult
	return &out, c.postJSON(ctx, "/v1/skills/"+esc(id)+"/audit", map[string]string{"version": version}, &out)
}

// StatusRequest is the body of Quarantine, Enable and Disable.
type StatusRequest struct {
	Version  string `json:"version,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Override bool   `json:"override,omitempty"`
}

func (c *Client) status(ctx context.Context, verb, id string, r StatusRequest) (*install.StatusResult, error) {
	var out install.StatusResult
	if err := c.postJSON(ctx, "/v1/skills/"+esc(id)+"/"+verb, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Quarantine blocks a version.
func (c *Client) Quarantine(ctx context.Context, id string, r StatusRequest) (*install.StatusResult, error) {
	return c.status(ctx, "quarantine", id, r)
}

// Enable lets a version run again.
func (c *Client) Enable(ctx context.Context, id string, r StatusRequest) (*install.StatusResult, error) {
	return c.status(ctx, "enable", id, r)
}

// Disable turns a version off.
func (c *Client) Disable(ctx context.Context, id string, r StatusRequest) (*install.StatusResult, error) {
	return c.status(ctx, "disable", id, r)
}

// Remove uninstalls a version ("" = all) and, with purge, the skill's
// storage.
func (c *Client) Remove(ctx context.Context, id, version string, purge bool) (*host.RemoveResult, error) {
	q := url.Values{}
	if version != "" {
		q.Set("version", version)
	}
	if purge {
		q.Set("purge_storage", "true")
	}
	var out host.RemoveResult
	return &out, c.do(ctx, http.MethodDelete, "/v1/skills/"+esc(id), q, "", nil, &out)
}

// Reaudit re-audits every installed version now. When some version could
// not be re-audited, the report is returned with the error.
func (c *Client) Reaudit(ctx context.Context) (*install.ReauditReport, error) {
	var out install.ReauditReport
	err := c.postJSON(ctx, "/v1/reaudit", struct{}{}, &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}

// withDetails decodes the result a daemon error carries into out and
// reports whether there was one.
func withDetails(err error, out any) bool {
	var e *Error
	return errors.As(err, &e) && len(e.Details) > 0 && json.Unmarshal(e.Details, out) == nil
}

// Call runs a tool. On a failure the sidecar reported, the result (logs,
// tool error) is returned with the error.
func (c *Client) Call(ctx context.Context, id, tool string, input json.RawMessage, timeout time.Duration) (*daemon.CallResponse, error) {
	var out daemon.CallResponse
	err := c.postJSON(ctx, "/v1/skills/"+esc(id)+"/tools/"+esc(tool)+"/call", map[string]any{"input": input, "timeout_ms": timeout.Milliseconds()}, &out)
	if err != nil && !withDetails(err, &out) {
		return nil, err
	}
	return &out, err
}

// Submit posts an A2UI form submit {componentId, values} for a document.
func (c *Client) Submit(ctx context.Context, documentID, componentID string, values map[string]any) (*daemon.CallResponse, error) {
	var out daemon.CallResponse
	return &out, c.postJSON(ctx, "/v1/a2ui/"+esc(documentID)+"/submit", map[string]any{"componentId": componentID, "values": values}, &out)
}

// Hooks lists the hook bindings.
func (c *Client) Hooks(ctx context.Context) ([]hooks.Binding, error) {
	var out struct {
		Bindings []hooks.Binding `json:"bindings"`
	}
	return out.Bindings, c.do(ctx, http.MethodGet, "/v1/hooks", nil, "", nil, &out)
}

// BindHook creates a binding.
func (c *Client) BindHook(ctx context.Context, b hooks.Binding) (*hooks.Binding, error) {
	var out hooks.Binding
	return &out, c.postJSON(ctx, "/v1/hooks", b, &out)
}

// SetHookEnabled enables or disables a binding.
func (c *Client) SetHookEnabled(ctx context.Context, hookID string, enabled bool) (*hooks.Binding, error) {
	verb := "disable"
	if enabled {
		verb = "enable"
	}
	var out hooks.Binding
	return &out, c.postJSON(ctx, "/v1/hooks/"+esc(hookID)+"/"+verb, struct{}{}, &out)
}

// RemoveHook deletes a binding.
func (c *Client) RemoveHook(ctx context.Context, hookID string) error {
	return c.do(ctx, http.MethodDelete, "/v1/hooks/"+esc(hookID), nil, "", nil, nil)
}

// FireHooks runs the hooks bound to event with payload (nil: a default
// payload naming the API) and returns their outcomes.
func (c *Client) FireHooks(ctx context.Context, event string, payload json.RawMessage) (*daemon.FireResponse, error) {
	var out daemon.FireResponse
	return &out, c.postJSON(ctx, "/v1/hooks/fire", daemon.FireRequest{Event: event, Payload: payload}, &out)
}

// Events follows the event stream (server-sent events) and calls fn for
// each event until ctx ends, fn returns an error, or the stream closes.
// after < 0 starts with live events; after ≥ 0 replays the journal after
// that id first.
func (c *Client) Events(ctx context.Context, after int64, fn func(events.Event) error) error {
	q := url.Values{}
	if after >= 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	u := *c.base
	u.Path += "/v1/events"
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTransport, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return errorOf(resp.StatusCode, http.MethodGet, "/v1/events", data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev events.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return fmt.Errorf("%w: event: %v", ErrTransport, err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}
