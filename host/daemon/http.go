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
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host/console"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/install"
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

const (
	keyRequestID ctxKey = iota
	keyPrincipal
)

func requestIDOf(ctx context.Context) string {
	s, _ := ctx.Value(keyRequestID).(string)
	return s
}

func principalFrom(ctx context.Context) string {
	if s, _ := ctx.Value(keyPrincipal).(string); s != "" {
		return s
	}
	return DefaultPrincipal
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

// route wraps a handler: request id, principal, auth (unless public),
// metrics and a structured log line.
func (d *Daemon) route(mux *http.ServeMux, pattern string, public bool, h func(w http.ResponseWriter, r *http.Request) error) {
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
			ctx = context.WithValue(ctx, keyPrincipal, p)
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
		args := []any{"request_id", rid, "method", r.Method, "route", pattern, "status", status, "duration", time.Since(start), "principal", principalFrom(ctx)}
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

func (d *Daemon) apiMux() *http.ServeMux {
	mux := http.NewServeMux()
	d.route(mux, "GET /healthz", true, func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	d.route(mux, "GET /readyz", true, func(w http.ResponseWriter, r *http.Request) error {
		if !d.ready.Load() {
			return writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not_ready"})
		}
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	d.route(mux, "GET /metrics", false, func(w http.ResponseWriter, r *http.Request) error {
		d.metrics.Handler().ServeHTTP(w, r)
		return nil
	})
	d.route(mux, "GET /v1/skills", false, d.httpListSkills)
	d.route(mux, "POST /v1/skills", false, d.httpInstall)
	d.route(mux, "GET /v1/skills/{id}", false, func(w http.ResponseWriter, r *http.Request) error {
		info, err := d.host.Installer().Info(r.Context(), r.PathValue("id"), r.URL.Query().Get("version"))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, info)
	})
	d.route(mux, "DELETE /v1/skills/{id}", false, func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		purge, err := boolParam(q.Get("purge_storage"), "purge_storage")
		if err != nil {
			return err
		}
		out, err := d.host.Remove(r.Context(), r.PathValue("id"), q.Get("version"), principalFrom(r.Context()), purge)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, out)
	})
	d.route(mux, "POST /v1/skills/{id}/verify", false, func(w http.ResponseWriter, r *http.Request) error {
		var req versionRequest
		if err := d.decode(r, &req); err != nil {
			return err
		}
		res, err := d.host.Installer().Verify(r.Context(), r.PathValue("id"), req.Version)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, res)
	})
	d.route(mux, "POST /v1/skills/{id}/audit", false, func(w http.ResponseWriter, r *http.Request) error {
		var req versionRequest
		if err := d.decode(r, &req); err != nil {
			return err
		}
		res, err := d.host.Installer().AuditInstalled(r.Context(), r.PathValue("id"), req.Version)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, res)
	})
	d.route(mux, "POST /v1/skills/{id}/quarantine", false, d.httpStatus("quarantine"))
	d.route(mux, "POST /v1/skills/{id}/enable", false, d.httpStatus("enable"))
	d.route(mux, "POST /v1/skills/{id}/disable", false, d.httpStatus("disable"))
	// Palyra's admin routes (facts §6.3), so Palyra's CLI works against
	// this daemon: enable needs override: true.
	d.route(mux, "POST /admin/v1/skills/{id}/quarantine", false, d.httpStatus("quarantine"))
	d.route(mux, "POST /admin/v1/skills/{id}/enable", false, d.httpStatus("admin-enable"))
	d.route(mux, "POST /v1/reaudit", false, func(w http.ResponseWriter, r *http.Request) error {
		rep, err := d.host.Installer().Reaudit(r.Context())
		if err != nil {
			if rep != nil {
				return &detailedError{err: err, details: rep}
			}
			return err
		}
		return writeJSON(w, http.StatusOK, rep)
	})
	d.route(mux, "POST /v1/skills/{id}/tools/{tool}/call", false, d.httpCall)
	d.route(mux, "GET /v1/skills/{id}/metrics", false, d.httpSkillMetrics)
	d.route(mux, "POST /v1/a2ui/{doc}/submit", false, func(w http.ResponseWriter, r *http.Request) error {
		body, err := d.readBody(r, d.cfg.MaxRequestBytes)
		if err != nil {
			return err
		}
		out, err := d.submitForm(r.Context(), r.PathValue("doc"), body)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, out)
	})
	d.route(mux, "GET /v1/sidecars", false, func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, map[string]any{"sidecars": d.host.Supervisor().States()})
	})
	d.route(mux, "GET /v1/hooks", false, func(w http.ResponseWriter, r *http.Request) error {
		bs, err := d.hooks.List()
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"bindings": bs})
	})
	d.route(mux, "POST /v1/hooks", false, func(w http.ResponseWriter, r *http.Request) error {
		var b hooks.Binding
		if err := d.decode(r, &b); err != nil {
			return err
		}
		out, err := d.bindHook(r.Context(), b)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, out)
	})
	for _, v := range []string{"enable", "disable"} {
		enabled := v == "enable"
		d.route(mux, "POST /v1/hooks/{id}/"+v, false, func(w http.ResponseWriter, r *http.Request) error {
			out, err := d.hooks.SetEnabled(r.Context(), r.PathValue("id"), enabled, principalFrom(r.Context()))
			if err != nil {
				return err
			}
			return writeJSON(w, http.StatusOK, out)
		})
	}
	d.route(mux, "DELETE /v1/hooks/{id}", false, func(w http.ResponseWriter, r *http.Request) error {
		if err := d.hooks.Remove(r.Context(), r.PathValue("id")); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, map[string]any{"removed": r.PathValue("id")})
	})
	d.route(mux, "POST /v1/hooks/fire", false, func(w http.ResponseWriter, r *http.Request) error {
		var req FireRequest
		if err := d.decode(r, &req); err != nil {
			return err
		}
		out, err := d.fire(r.Context(), req)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, out)
	})
	d.route(mux, "GET /v1/events", false, d.httpEvents)
	d.route(mux, "/mcp", false, d.httpMCP)
	// Every other path: the web console (static files, public; its API
	// calls carry the token), except under the API prefixes, where an
	// unknown route is a JSON error.
	ui := console.Handler()
	d.route(mux, "/", true, func(w http.ResponseWriter, r *http.Request) error {
		if isAPIPath(r.URL.Path) {
			// Only a caller with the token learns which routes exist.
			if err := d.auth.CheckAuthorization(r.Header.Get("Authorization")); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="palyra-host"`)
				return err
			}
			return fmt.Errorf("%w: no route %s %s", ErrRouteNotFound, r.Method, r.URL.Path)
		}
		ui.ServeHTTP(w, r)
		return nil
	})
	return mux
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

// bindHook creates a binding; the caller is its updater and, unless the
// binding names one, its owner.
func (d *Daemon) bindHook(ctx context.Context, b hooks.Binding) (hooks.Binding, error) {
	b.Operator.UpdatedBy = principalFrom(ctx)
	if b.Operator.OwnerPrincipal == "" {
		b.Operator.OwnerPrincipal = principalFrom(ctx)
	}
	return d.hooks.Bind(ctx, b)
}

// FireRequest fires hooks by hand: {event, payload}.
type FireRequest struct {
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// FireResponse is the outcomes and the resolved decision.
type FireResponse struct {
	Event      string           `json:"event"`
	Outcomes   []hooks.Outcome  `json:"outcomes"`
	Resolution hooks.Resolution `json:"resolution"`
}

func (d *Daemon) fire(ctx context.Context, req FireRequest) (*FireResponse, error) {
	ev, err := hooks.NormalizeEvent(req.Event)
	if err != nil {
		return nil, err
	}
	var payload any = map[string]any{"source": "api.fire", "principal": principalFrom(ctx)}
	if len(bytes.TrimSpace(req.Payload)) > 0 {
		payload = req.Payload
	}
	outs, res, err := d.disp.Fire(ctx, ev, payload)
	if err != nil {
		return nil, err
	}
	if outs == nil {
		outs = []hooks.Outcome{}
	}
	return &FireResponse{Event: ev, Outcomes: outs, Resolution: res}, nil
}

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

func (d *Daemon) changeStatus(ctx context.Context, verb, id string, req statusRequest) (*install.StatusResult, error) {
	in, p := d.host.Installer(), principalFrom(ctx)
	switch verb {
	case "quarantine":
		return in.Quarantine(ctx, id, req.Version, req.Reason, p)
	case "disable":
		return in.Disable(ctx, id, req.Version, req.Reason, p)
	case "admin-enable":
		if !req.Override {
			return nil, fmt.Errorf("%w (Palyra's admin API)", ErrOverrideRequired)
		}
	}
	return in.Enable(ctx, id, req.Version, install.EnableOptions{Override: req.Override, Reason: req.Reason, Principal: p})
}

func (d *Daemon) httpListSkills(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	opts := install.ListOptions{SkillID: q.Get("skill_id"), Publisher: q.Get("publisher")}
	var err error
	for name, dst := range map[string]*bool{"current_only": &opts.CurrentOnly, "quarantined_only": &opts.QuarantinedOnly, "eligible_only": &opts.EligibleOnly} {
		if *dst, err = boolParam(q.Get(name), name); err != nil {
			return err
		}
	}
	ls, err := d.host.Installer().List(r.Context(), opts)
	if err != nil {
		return err
	}
	if ls == nil {
		ls = []install.Listing{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"skills_root": d.host.Installer().Layout().SkillsDir(), "count": len(ls), "entries": ls})
}

func (d *Daemon) httpInstall(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var opts install.InstallOptions
	var err error
	for name, dst := range map[string]*bool{"allow_tofu": &opts.AllowTOFU, "force": &opts.Force, "accept_capabilities": &opts.AcceptCapabilities} {
		if *dst, err = boolParam(q.Get(name), name); err != nil {
			return err
		}
	}
	data, err := d.readBody(r, d.cfg.MaxArtifactBytes)
	if err != nil {
		return err
	}
	res, err := d.install(r.Context(), data, opts)
	if err != nil {
		if res != nil {
			return &detailedError{err: err, details: res}
		}
		return err
	}
	return writeJSON(w, http.StatusCreated, res)
}

func (d *Daemon) install(ctx context.Context, data []byte, opts install.InstallOptions) (*install.InstallResult, error) {
	opts.Principal = principalFrom(ctx)
	opts.Source = install.Source{Kind: "managed_artifact", Ref: "api:" + requestIDOf(ctx)}
	return d.host.Install(ctx, data, opts)
}

// callRequest is the body of a tool call.
type callRequest struct {
	Input     json.RawMessage `json:"input"`
	TimeoutMS int64           `json:"timeout_ms"`
}

func (d *Daemon) httpCall(w http.ResponseWriter, r *http.Request) error {
	var req callRequest
	if err := d.decode(r, &req); err != nil {
		return err
	}
	out, err := d.callTool(r.Context(), r.PathValue("id"), r.PathValue("tool"), req.Input, time.Duration(req.TimeoutMS)*time.Millisecond)
	if err != nil {
		if res := callResultOf(err); res != nil {
			return &detailedError{err: err, details: res}
		}
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// httpEvents streams events as server-sent events: `id:` is the journal
// id (absent on hook outcomes), `event:` the kind, `data:` the event JSON.
// ?after=ID (or the Last-Event-ID header of a reconnecting client) replays
// the journal after that id first.
func (d *Daemon) httpEvents(w http.ResponseWriter, r *http.Request) error {
	after := int64(-1)
	v := r.URL.Query().Get("after")
	if v == "" {
		v = r.Header.Get("Last-Event-ID")
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: after %q is not a non-negative event id", ErrBadRequest, v)
		}
		after = n
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
			case <-hb.C:
				write([]byte(": heartbeat\n\n"))
			}
		}
	}()
	defer wg.Wait()
	defer cancel()
	return d.follow(ctx, after, func(ev events.Event) error {
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
// {"error":{"code","message","request_id"},"details":...}.
type ErrorBody struct {
	Error struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		RequestID string `json:"request_id,omitempty"`
	} `json:"error"`
	Details any `json:"details,omitempty"`
}

func (d *Daemon) writeError(w http.ResponseWriter, err error) {
	var body ErrorBody
	body.Error.Code = errcode.Of(err)
	body.Error.Message = err.Error()
	body.Error.RequestID = w.Header().Get(HeaderRequestID)
	var de *detailedError
	if errors.As(err, &de) {
		body.Details = de.details
	}
	writeJSON(w, HTTPStatus(body.Error.Code), body)
}
