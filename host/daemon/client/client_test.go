package client_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/internal/testskill"
)

// publisherKey signs every test artifact (publisher "test").
var publisherKey = testskill.Key(7)

// probe is the daemon tests' hookprobe skill under skill id id and
// version, with extra manifest lines before its quotas.
func probe(t testing.TB, id, version, extra string) []byte {
	t.Helper()
	dir := filepath.Join("..", "testdata", "hookprobe")
	m, err := os.ReadFile(filepath.Join(dir, "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "hookprobe.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(m), `skill_id = "test.hookprobe"`, fmt.Sprintf("skill_id = %q", id), 1)
	s = strings.Replace(s, `version = "0.1.0"`, fmt.Sprintf("version = %q", version), 1)
	s = strings.Replace(s, "[capabilities.quotas]", extra+"[capabilities.quotas]", 1)
	return testskill.Build(t, s, mod, publisherKey)
}

// served is a daemon served in this process.
type served struct {
	d     *daemon.Daemon
	url   string
	token string
}

// serve opens and serves a daemon on a loopback port until the test ends.
func serve(t *testing.T) *served {
	t.Helper()
	cfg, err := daemon.ParseConfig([]byte("listen = \"127.0.0.1:0\"\nreaudit_interval = \"0\"\nhook_timeout = \"5s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	state := t.TempDir()
	d, err := daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: filepath.Join(bin, "palyra-sidecar")})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := d.Listen()
	if err != nil {
		d.Close(ctx)
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	s := &served{d: d, url: d.URL(ln)}
	if s.token, err = daemon.ReadToken(daemon.TokenPath(state)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(s.url, s.token)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if err = c.Health(ctx); err == nil {
			return s
		}
		if i == 200 {
			t.Fatalf("the daemon does not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newClient(t *testing.T, base, token string, opts ...client.Option) *client.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c, err := client.New(base, token, append([]client.Option{client.WithHTTPClient(&http.Client{Transport: tr})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClientService runs every verb of host.Service through the client
// against a daemon: results decode, the context's principal (else the
// client's default) is who acts, and failures keep their code, request id
// and results.
func TestClientService(t *testing.T) {
	s := serve(t)
	var svc host.Service = newClient(t, s.url, s.token, client.WithPrincipal("user:default"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// An unknown publisher is refused, with the code and the request id.
	art := probe(t, "test.cli", "0.1.0", "")
	_, err := svc.Install(ctx, host.InstallRequest{Artifact: art})
	var ce *client.Error
	if errcode.Of(err) != "untrusted_publisher" || !errors.As(err, &ce) || ce.RequestID == "" || ce.Status != http.StatusUnprocessableEntity {
		t.Fatalf("install from an unknown publisher: %v", err)
	}
	// Allowlisted with the install: installed, the key trusted.
	pub := hex.EncodeToString(publisherKey.Public().(ed25519.PublicKey))
	ir, err := svc.Install(ctx, host.InstallRequest{Artifact: art, TrustedPublishers: []host.TrustedKey{{Publisher: "test", PublicKeyHex: pub}}})
	if err != nil || ir.SkillID != "test.cli" || ir.Status != "active" || ir.TrustDecision != "allowlisted" {
		t.Fatalf("install with the publisher allowlisted: %+v, %v", ir, err)
	}

	// A capability escalation comes back with the result, as locally.
	ir, err = svc.Install(ctx, host.InstallRequest{Artifact: probe(t, "test.cli", "0.2.0", "[capabilities]\nhttp_egress_allowlist = [\"api.example.com\"]\n\n")})
	if !errors.Is(err, install.ErrCapabilityEscalation) || ir == nil || ir.Installed || len(ir.CapabilityDiff) == 0 || ir.PreviousVersion != "0.1.0" {
		t.Fatalf("escalating install: %+v, %v", ir, err)
	}

	ls, err := svc.List(ctx, host.ListRequest{CurrentOnly: true})
	if err != nil || ls.Count != 1 || len(ls.Entries) != 1 || ls.Entries[0].SkillID != "test.cli" || ls.SkillsRoot == "" {
		t.Fatalf("list: %+v, %v", ls, err)
	}
	info, err := svc.Info(ctx, host.SkillRef{SkillID: "test.cli"})
	if err != nil || info.Inventory.Version != "0.1.0" || len(info.Manifest) == 0 {
		t.Fatalf("info: %v", err)
	}
	// A missing skill: the readable message, the daemon's chain in Detail.
	_, err = svc.Info(ctx, host.SkillRef{SkillID: "test.missing"})
	if !errors.Is(err, install.ErrNotFound) || !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, install.ErrNotFound.Error()+": test.missing") ||
		!strings.HasSuffix(ce.Detail, ": "+ce.Message) || err.Error() != ce.Detail {
		t.Errorf("info of a missing skill: %q, detail %q", err, ce.Detail)
	}
	if vr, err := svc.Verify(ctx, host.SkillRef{SkillID: "test.cli"}); err != nil || vr.TrustDecision == "" {
		t.Errorf("verify: %+v, %v", vr, err)
	}
	if ar, err := svc.Audit(ctx, host.SkillRef{SkillID: "test.cli", Version: "0.1.0"}); err != nil || !ar.Passed {
		t.Errorf("audit: %+v, %v", ar, err)
	}

	// Calls: the result; a failure's result rides on a *host.CallError.
	cr, err := svc.Call(ctx, host.CallRequest{SkillID: "test.cli", ToolID: "test.probe", Input: json.RawMessage(`{"n":1}`), Timeout: 30*time.Second + 500*time.Microsecond})
	if err != nil || string(cr.Output) != `{"n":1}` || cr.Version != "0.1.0" || cr.Stats.FuelConsumed == 0 || cr.InvocationID == "" {
		t.Fatalf("call: %+v, %v", cr, err)
	}
	cr, err = svc.Call(ctx, host.CallRequest{SkillID: "test.cli", ToolID: "test.probe", Input: json.RawMessage(`{"note":"exit:10"}`)})
	var callErr *host.CallError
	if errcode.Of(err) != "tool_error" || !errors.As(err, &callErr) || !errors.As(err, &ce) || ce.RequestID == "" ||
		cr == nil || cr.ExitCode != 10 || host.CallResultOf(err) != cr || cr.ToolError == nil {
		t.Errorf("failing call: %+v, %v", cr, err)
	}
	if cr, err = svc.Call(ctx, host.CallRequest{SkillID: "test.cli", ToolID: "test.nope"}); !errors.Is(err, host.ErrUnknownTool) || cr != nil || host.CallResultOf(err) != nil {
		t.Errorf("call of an unknown tool: %+v, %v", cr, err)
	}

	// A2UI: a document is kept, and a submit goes back to its tool.
	form := `{"v":1,"surface":"s","components":[{"id":"f","type":"form","props":{"fields":[{"id":"name","label":"Name","type":"text","required":true}]}}]}`
	cr, err = svc.Call(ctx, host.CallRequest{SkillID: "test.cli", ToolID: "test.probe", Input: json.RawMessage(form)})
	if err != nil || cr.A2UI == nil || cr.A2UI.Surface != "s" || cr.A2UI.DocumentID == "" {
		t.Fatalf("a2ui call: %+v, %v", cr, err)
	}
	sr, err := svc.SubmitForm(ctx, host.SubmitRequest{DocumentID: cr.A2UI.DocumentID, ComponentID: "f", Values: map[string]any{"name": "Ada"}})
	var sub host.SubmitInput
	if err != nil || json.Unmarshal(sr.Output, &sub) != nil || sub.Submit.Values["name"] != "Ada" || sub.Submit.DocumentID != cr.A2UI.DocumentID {
		t.Errorf("submit: %+v, %v", sr, err)
	}
	if _, err := svc.SubmitForm(ctx, host.SubmitRequest{DocumentID: "01ARZ3NDEKTSV4RRFFQ69G5FAV", ComponentID: "f", Values: map[string]any{}}); !errors.Is(err, host.ErrDocumentNotFound) {
		t.Errorf("submit on an unknown document: %v", err)
	}

	// The catalog, the sidecars, the call summary.
	cat, err := svc.Tools(ctx)
	if err != nil || cat.Generation == "" || len(cat.Tools) != 1 || cat.Tools[0].Tool.ID != "test.probe" {
		t.Errorf("tools: %+v, %v", cat, err)
	}
	sc, err := svc.Sidecars(ctx)
	if err != nil || len(sc) != 1 || sc[0].SkillID != "test.cli" || sc[0].Version != "0.1.0" {
		t.Errorf("sidecars: %+v, %v", sc, err)
	}
	sm, err := svc.SkillMetrics(ctx, "test.cli")
	if err != nil || sm.CallsTotal != 5 || sm.ErrorsTotal != 2 || sm.ByCode["tool_error"] != 1 || sm.ByCode["ok"] != 3 {
		t.Errorf("skill metrics: %+v, %v", sm, err)
	}
	if _, err := svc.SkillMetrics(ctx, "test.none"); !errors.Is(err, host.ErrSkillNotFound) {
		t.Errorf("metrics of an unknown skill: %v", err)
	}

	// Who acts: the context's principal, else the client's default.
	st, err := svc.Quarantine(host.WithPrincipal(ctx, "user:ctx"), host.StatusRequest{SkillID: "test.cli", Reason: "odd"})
	if err != nil || st.Status != "quarantined" || st.Principal != "user:ctx" || st.Reason != "odd" {
		t.Errorf("quarantine: %+v, %v", st, err)
	}
	if _, err := svc.Call(ctx, host.CallRequest{SkillID: "test.cli", ToolID: "test.probe", Input: json.RawMessage(`{}`)}); !errors.Is(err, host.ErrQuarantined) {
		t.Errorf("call of a quarantined skill: %v", err)
	}
	if cat2, err := svc.Tools(ctx); err != nil || len(cat2.Tools) != 0 || cat2.Generation == cat.Generation {
		t.Errorf("tools after the quarantine: %+v, %v", cat2, err)
	}
	if st, err = svc.Enable(ctx, host.EnableRequest{SkillID: "test.cli", Reason: "fine", Override: true}); err != nil || st.Status != "active" || st.Principal != "user:default" {
		t.Errorf("enable: %+v, %v", st, err)
	}
	if st, err = svc.Disable(ctx, host.StatusRequest{SkillID: "test.cli", Reason: "pause"}); err != nil || st.Status != "disabled" {
		t.Errorf("disable: %+v, %v", st, err)
	}
	if _, err = svc.Enable(ctx, host.EnableRequest{SkillID: "test.cli"}); err != nil {
		t.Errorf("enable after disable: %v", err)
	}
	rep, err := svc.Reaudit(ctx)
	if err != nil || rep.Checked != 1 || rep.Quarantined != 0 {
		t.Errorf("reaudit: %+v, %v", rep, err)
	}

	// Hooks.
	b, err := svc.BindHook(host.WithPrincipal(ctx, "user:hooks"), host.HookBinding{HookID: "h1", Event: "RUN:BEFORE_TOOL", PluginID: "test.cli", ToolID: "test.probe", Enabled: true})
	if err != nil || b.Event != "run:before_tool" || b.Operator.OwnerPrincipal != "user:hooks" || b.Operator.UpdatedBy != "user:hooks" {
		t.Fatalf("bind: %+v, %v", b, err)
	}
	if _, err := svc.BindHook(ctx, host.HookBinding{HookID: "h1", Event: "skill:enabled", PluginID: "test.cli"}); errcode.Of(err) != "hook_exists" {
		t.Errorf("bind twice: %v", err)
	}
	fr, err := svc.FireHooks(ctx, host.FireRequest{Event: "run:before_tool", Payload: json.RawMessage(`{"note":"exit:30"}`)})
	if err != nil || fr.Event != "run:before_tool" || len(fr.Outcomes) != 1 || fr.Outcomes[0].ExitCode != 30 || fr.Resolution.Decision != "block" {
		t.Errorf("fire: %+v, %v", fr, err)
	}
	if b, err = svc.SetHookEnabled(ctx, "h1", false); err != nil || b.Enabled || b.Operator.UpdatedBy != "user:default" {
		t.Errorf("disable hook: %+v, %v", b, err)
	}
	if bs, err := svc.Hooks(ctx); err != nil || len(bs) != 1 || bs[0].HookID != "h1" || bs[0].Enabled {
		t.Errorf("hooks: %+v, %v", bs, err)
	}
	if err := svc.RemoveHook(ctx, "h1"); err != nil {
		t.Errorf("remove hook: %v", err)
	}
	if err := svc.RemoveHook(ctx, "h1"); errcode.Of(err) != "hook_not_found" {
		t.Errorf("remove hook twice: %v", err)
	}

	rr, err := svc.Remove(ctx, host.RemoveRequest{SkillID: "test.cli", PurgeStorage: true})
	if err != nil || len(rr.Versions) != 1 || !rr.StoragePurged {
		t.Errorf("remove: %+v, %v", rr, err)
	}

	// The journal, replayed without following, as the local host has it.
	remote := kinds(t, ctx, svc, host.EventsRequest{After: 0})
	local := kinds(t, ctx, s.d.Host(), host.EventsRequest{After: 0})
	if len(remote) < 6 || remote[0] != "skill:installed" || remote[len(remote)-1] != "skill:removed" || !slices.Equal(remote, local) {
		t.Errorf("replay: remote %v, local %v", remote, local)
	}
}

// kinds returns the kinds of the events svc delivers for req.
func kinds(t *testing.T, ctx context.Context, svc host.Service, req host.EventsRequest) []string {
	t.Helper()
	var out []string
	if err := svc.Events(ctx, req, func(ev host.Event) error { out = append(out, ev.Kind); return nil }); err != nil {
		t.Fatalf("events: %v", err)
	}
	return out
}

// TestSameErrors: a failure reported by the daemon is the same error to
// errors.Is and errcode.Of as the local host's.
func TestSameErrors(t *testing.T) {
	s := serve(t)
	remote := newClient(t, s.url, s.token)
	local := s.d.Host()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := local.Install(ctx, host.InstallRequest{Artifact: probe(t, "test.same", "0.1.0", ""), AllowTOFU: true}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		op   func(host.Service) error
		is   error
	}{
		{"unknown skill", func(svc host.Service) error { _, err := svc.Info(ctx, host.SkillRef{SkillID: "test.none"}); return err }, host.ErrSkillNotFound},
		{"unknown tool", func(svc host.Service) error {
			_, err := svc.Call(ctx, host.CallRequest{SkillID: "test.same", ToolID: "test.nope"})
			return err
		}, host.ErrUnknownTool},
		{"input against the schema", func(svc host.Service) error {
			_, err := svc.Call(ctx, host.CallRequest{SkillID: "test.same", ToolID: "test.probe", Input: json.RawMessage(`42`)})
			return err
		}, host.ErrInvalidInput},
		{"timeout out of range", func(svc host.Service) error {
			_, err := svc.Call(ctx, host.CallRequest{SkillID: "test.same", ToolID: "test.probe", Timeout: host.MaxCallTimeout + time.Second})
			return err
		}, host.ErrBadRequest},
		{"unknown document", func(svc host.Service) error {
			_, err := svc.SubmitForm(ctx, host.SubmitRequest{DocumentID: "nope", ComponentID: "f", Values: map[string]any{}})
			return err
		}, host.ErrDocumentNotFound},
		{"tool error", func(svc host.Service) error {
			_, err := svc.Call(ctx, host.CallRequest{SkillID: "test.same", ToolID: "test.probe", Input: json.RawMessage(`{"x":"exit:10"}`)})
			if res := host.CallResultOf(err); res == nil || res.ExitCode != 10 {
				return fmt.Errorf("no result with exit code 10: %w", err)
			}
			return err
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lerr, rerr := tt.op(local), tt.op(remote)
			if lerr == nil || rerr == nil || errcode.Of(lerr) != errcode.Of(rerr) || errcode.Of(rerr) == errcode.Internal {
				t.Fatalf("local %v (%s), remote %v (%s)", lerr, errcode.Of(lerr), rerr, errcode.Of(rerr))
			}
			// The remote error is every sentinel of its code (the local one
			// is the sentinel it wraps, which may be another package's).
			if tt.is != nil && !errors.Is(rerr, tt.is) {
				t.Errorf("errors.Is(_, %v): local %v, remote %v", tt.is, errors.Is(lerr, tt.is), errors.Is(rerr, tt.is))
			}
		})
	}
}

// TestEventsResume: a followed stream that breaks is resumed after the
// last journal event it delivered: every journaled event arrives once, in
// journal order, across the break.
func TestEventsResume(t *testing.T) {
	s := serve(t)
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	var streams atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/events" {
			streams.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	c := newClient(t, proxy.URL, s.token)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	local := s.d.Host()
	if _, err := local.Install(ctx, host.InstallRequest{Artifact: probe(t, "test.r", "0.1.0", ""), AllowTOFU: true}); err != nil {
		t.Fatal(err)
	}

	got := make(chan host.Event, 64)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- c.Events(sctx, host.EventsRequest{After: 0, Follow: true}, func(ev host.Event) error {
			if ev.ID != 0 { // hook outcomes are not journaled
				got <- ev
			}
			return nil
		})
	}()
	var ids []int64
	wait := func(kind string) {
		t.Helper()
		select {
		case ev := <-got:
			if ev.Kind != kind || ev.SkillID != "test.r" {
				t.Fatalf("event %+v, want %s of test.r", ev, kind)
			}
			ids = append(ids, ev.ID)
		case <-ctx.Done():
			t.Fatalf("no %s event", kind)
		}
	}
	wait("skill:installed")
	// The connection breaks; the stream resumes through a new one.
	proxy.CloseClientConnections()
	if _, err := local.Quarantine(ctx, host.StatusRequest{SkillID: "test.r", Reason: "while the stream was down"}); err != nil {
		t.Fatal(err)
	}
	wait("skill:quarantined")
	if _, err := local.Enable(ctx, host.EnableRequest{SkillID: "test.r", Reason: "live again", Override: true}); err != nil {
		t.Fatal(err)
	}
	wait("skill:enabled")
	stop()
	if err := <-done; err != nil {
		t.Errorf("Events after cancel: %v", err)
	}
	select {
	case ev := <-got:
		t.Errorf("an event delivered twice or out of turn: %+v", ev)
	default:
	}
	if n := streams.Load(); n < 2 {
		t.Errorf("%d event stream requests: the stream was not resumed", n)
	}
	var journal []int64
	if err := local.Events(ctx, host.EventsRequest{After: 0}, func(ev host.Event) error { journal = append(journal, ev.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, journal) {
		t.Errorf("delivered ids %v, journal %v", ids, journal)
	}
}

// TestEventsUnreachable: a stream that cannot reach the daemon fails at
// once with ErrTransport; one refused by the daemon keeps its code.
func TestEventsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newClient(t, "http://"+addr, "palyra_token")
	err = c.Events(ctx, host.EventsRequest{After: -1, Follow: true}, func(host.Event) error { return nil })
	if !errors.Is(err, client.ErrTransport) {
		t.Errorf("unreachable: %v", err)
	}
	s := serve(t)
	bad := newClient(t, s.url, "palyra_wrong_wrong_wrong_wrong_wrong_wrong_wr")
	err = bad.Events(ctx, host.EventsRequest{After: -1, Follow: true}, func(host.Event) error { return nil })
	if errcode.Of(err) != "unauthorized" {
		t.Errorf("wrong token: %v", err)
	}
	// fn's error ends the stream with that error.
	good := newClient(t, s.url, s.token)
	if _, err := s.d.Host().Install(ctx, host.InstallRequest{Artifact: probe(t, "test.u", "0.1.0", ""), AllowTOFU: true}); err != nil {
		t.Fatal(err)
	}
	errStop := errors.New("enough")
	err = good.Events(ctx, host.EventsRequest{After: 0, Follow: true}, func(host.Event) error { return errStop })
	if err != errStop {
		t.Errorf("fn's error: %v", err)
	}
}
