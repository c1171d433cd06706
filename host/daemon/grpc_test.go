package daemon_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/testskill"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

func dialGRPC(t *testing.T, p *proc) hostv1.HostServiceClient {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(p.url, "http://"),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(128<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return hostv1.NewHostServiceClient(conn)
}

func authed(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token, "x-palyra-principal", "user:grpc")
}

// code returns the palyra error code of a gRPC error (the message prefix).
func grpcErrCode(err error) string {
	s, _ := status.FromError(err)
	c, _, _ := strings.Cut(s.Message(), ": ")
	return c
}

// TestGRPCAPI runs every operation over gRPC, on the same port as HTTP.
func TestGRPCAPI(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "max_request_bytes = 4096\n")
	defer p.stop()
	c := dialGRPC(t, p)
	bg, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx := authed(bg, p.token)

	// Auth: health needs no token; everything else does, in authorization.
	conn, _ := grpc.NewClient("passthrough:///"+strings.TrimPrefix(p.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	hr, err := healthpb.NewHealthClient(conn).Check(bg, &healthpb.HealthCheckRequest{Service: hostv1.HostService_ServiceDesc.ServiceName})
	if err != nil || hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v %v", hr, err)
	}
	for name, md := range map[string][]string{
		"no token":                 nil,
		"wrong token":              {"authorization", "Bearer palyra_wrong_wrong_wrong_wrong_wrong_wrong_wr"},
		"token in another key":     {"x-palyra-token", p.token},
		"token without the scheme": {"authorization", p.token},
	} {
		cctx := bg
		if md != nil {
			cctx = metadata.AppendToOutgoingContext(bg, md...)
		}
		_, err := c.ListSkills(cctx, &hostv1.ListSkillsRequest{})
		if status.Code(err) != codes.Unauthenticated || grpcErrCode(err) != "unauthorized" {
			t.Errorf("%s: %v", name, err)
		}
	}

	// Events, from now on.
	sctx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	stream, err := c.StreamEvents(sctx, &hostv1.StreamEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	evs := make(chan *hostv1.StreamEventsResponse, 64)
	go func() {
		defer close(evs)
		for {
			ev, err := stream.Recv()
			if err != nil {
				return
			}
			evs <- ev
		}
	}()

	ir, err := c.InstallSkill(ctx, &hostv1.InstallSkillRequest{Artifact: probeArtifact(t, "test.grpc"), AllowTofu: true})
	if err != nil || ir.GetStatus() != "active" || ir.GetTrustDecision() != "tofu_newly_pinned" {
		t.Fatalf("install: %v %v", ir, err)
	}
	select {
	case ev := <-evs:
		if ev.GetKind() != "skill:installed" || ev.GetSkillId() != "test.grpc" || ev.GetId() == 0 {
			t.Errorf("first event: %v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no skill:installed event on the stream")
	}
	ls, err := c.ListSkills(ctx, &hostv1.ListSkillsRequest{})
	if err != nil || len(ls.GetSkills()) != 1 || ls.GetSkills()[0].GetStatus() != "active" {
		t.Fatalf("list: %v %v", ls, err)
	}
	gs, err := c.GetSkill(ctx, &hostv1.GetSkillRequest{SkillId: "test.grpc"})
	if err != nil || gs.GetSkill().GetVersion() != "0.1.0" || !json.Valid(gs.GetInfoJson()) {
		t.Fatalf("get: %v", err)
	}
	var trailer metadata.MD
	_, err = c.GetSkill(ctx, &hostv1.GetSkillRequest{SkillId: "test.none"}, grpc.Trailer(&trailer))
	if status.Code(err) != codes.NotFound || grpcErrCode(err) != "skill_not_found" {
		t.Errorf("get unknown: %v", err)
	}
	if got := trailer.Get(daemon.TrailerErrorCode); len(got) != 1 || got[0] != "skill_not_found" {
		t.Errorf("trailer %s: %v", daemon.TrailerErrorCode, got)
	}
	if err := client.FromGRPC(err, trailer); !errors.Is(err, host.ErrSkillNotFound) || errcode.Of(err) != "skill_not_found" {
		t.Errorf("client.FromGRPC(get unknown) = %v: not the skill_not_found sentinel", err)
	}
	// The status message is the code and the readable sentence, as the
	// HTTP API's message; the whole chain, when longer, is a trailer.
	if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, "skill_not_found: skill not found") {
		t.Errorf("status message %q does not start at the code's sentence", msg)
	}
	var ce *client.Error
	if !errors.As(client.FromGRPC(err, trailer), &ce) || !strings.HasPrefix(ce.Message, "skill not found") {
		t.Errorf("client error %+v: message not the readable sentence", ce)
	} else if d := trailer.Get(daemon.TrailerErrorDetail); len(d) > 1 || (len(d) == 1 && (d[0] != ce.Detail || !strings.HasSuffix(d[0], ce.Message))) {
		t.Errorf("detail trailer %q, client detail %q, message %q", d, ce.Detail, ce.Message)
	}
	if vr, err := c.VerifySkill(ctx, &hostv1.VerifySkillRequest{SkillId: "test.grpc"}); err != nil || vr.GetTrustDecision() != "tofu_pinned" {
		t.Errorf("verify: %v %v", vr, err)
	}
	if ar, err := c.AuditSkill(ctx, &hostv1.AuditSkillRequest{SkillId: "test.grpc"}); err != nil || !ar.GetPassed() {
		t.Errorf("audit: %v %v", ar, err)
	}
	cr, err := c.CallTool(ctx, &hostv1.CallToolRequest{SkillId: "test.grpc", ToolId: "test.probe", InputJson: []byte(`{"n":1}`)})
	if err != nil || string(cr.GetOutputJson()) != `{"n":1}` || cr.GetFuelConsumed() == 0 {
		t.Fatalf("call: %v %v", cr, err)
	}
	_, err = c.CallTool(ctx, &hostv1.CallToolRequest{SkillId: "test.grpc", ToolId: "test.probe", InputJson: []byte(`{"x":"` + strings.Repeat("a", 5000) + `"}`)})
	if status.Code(err) != codes.ResourceExhausted || grpcErrCode(err) != "request_too_large" {
		t.Errorf("oversized call: %v", err)
	}

	// The catalog, the sidecars and the call summary.
	lt, err := c.ListTools(ctx, &hostv1.ListToolsRequest{})
	var cat host.ToolCatalog
	if err != nil || json.Unmarshal(lt.GetResultJson(), &cat) != nil || lt.GetGeneration() == "" || cat.Generation != lt.GetGeneration() ||
		len(cat.Tools) != 1 || cat.Tools[0].SkillID != "test.grpc" || cat.Tools[0].Tool.ID != "test.probe" {
		t.Errorf("list tools: %v %v", lt, err)
	}
	lsc, err := c.ListSidecars(ctx, &hostv1.ListSidecarsRequest{})
	var sc struct {
		Sidecars []host.SidecarState `json:"sidecars"`
	}
	if err != nil || json.Unmarshal(lsc.GetResultJson(), &sc) != nil || len(sc.Sidecars) != 1 || sc.Sidecars[0].SkillID != "test.grpc" {
		t.Errorf("list sidecars: %v %v", lsc, err)
	}
	gc, err := c.GetCluster(ctx, &hostv1.GetClusterRequest{})
	var cl host.ClusterStatus
	if err != nil || json.Unmarshal(gc.GetResultJson(), &cl) != nil || cl.Clustered || len(cl.Nodes) != 1 || cl.Nodes[0].Name != host.LocalNodeName() ||
		!slices.Equal(cl.Nodes[0].Skills, []string{"test.grpc"}) || cl.Nodes[0].Version == "" {
		t.Errorf("get cluster: %s %v", gc.GetResultJson(), err)
	}
	gm, err := c.GetSkillMetrics(ctx, &hostv1.GetSkillMetricsRequest{SkillId: "test.grpc"})
	var sm host.SkillMetrics
	if err != nil || json.Unmarshal(gm.GetResultJson(), &sm) != nil || sm.SkillID != "test.grpc" || sm.CallsTotal != 1 || sm.ByCode["ok"] != 1 {
		t.Errorf("skill metrics: %v %v", gm, err)
	}
	if _, err := c.GetSkillMetrics(ctx, &hostv1.GetSkillMetricsRequest{SkillId: "test.none"}); status.Code(err) != codes.NotFound || grpcErrCode(err) != "skill_not_found" {
		t.Errorf("metrics of an unknown skill: %v", err)
	}
	q, err := c.QuarantineSkill(ctx, &hostv1.QuarantineSkillRequest{SkillId: "test.grpc", Reason: "grpc says so"})
	if err != nil || q.GetStatus().GetStatus() != "quarantined" || q.GetStatus().GetOperatorPrincipal() != "user:grpc" {
		t.Fatalf("quarantine: %v %v", q, err)
	}
	_, err = c.CallTool(ctx, &hostv1.CallToolRequest{SkillId: "test.grpc", ToolId: "test.probe", InputJson: []byte(`{}`)})
	if status.Code(err) != codes.FailedPrecondition || grpcErrCode(err) != "skill_quarantined" {
		t.Errorf("call of a quarantined skill: %v", err)
	}
	if e, err := c.EnableSkill(ctx, &hostv1.EnableSkillRequest{SkillId: "test.grpc", Reason: "fine", Override: true}); err != nil || e.GetStatus().GetStatus() != "active" {
		t.Errorf("enable: %v %v", e, err)
	}
	if d, err := c.DisableSkill(ctx, &hostv1.DisableSkillRequest{SkillId: "test.grpc", Reason: "pause"}); err != nil || d.GetStatus().GetStatus() != "disabled" {
		t.Errorf("disable: %v %v", d, err)
	}
	if _, err := c.EnableSkill(ctx, &hostv1.EnableSkillRequest{SkillId: "test.grpc", Reason: "go"}); err != nil {
		t.Errorf("enable after disable: %v", err)
	}
	if r, err := c.Reaudit(ctx, &hostv1.ReauditRequest{}); err != nil || r.GetAudited() != 1 {
		t.Errorf("reaudit: %v %v", r, err)
	}

	// Hooks.
	b, err := c.BindHook(ctx, &hostv1.BindHookRequest{Binding: &hostv1.HookBinding{HookId: "g1", Event: "RUN:BEFORE_TOOL", PluginId: "test.grpc", Enabled: proto.Bool(true)}})
	if err != nil || b.GetBinding().GetEvent() != "run:before_tool" || b.GetBinding().GetOwnerPrincipal() != "user:grpc" {
		t.Fatalf("bind: %v %v", b, err)
	}
	if _, err := c.BindHook(ctx, &hostv1.BindHookRequest{Binding: &hostv1.HookBinding{HookId: "g1", Event: "skill:enabled", PluginId: "test.grpc"}}); status.Code(err) != codes.AlreadyExists {
		t.Errorf("bind twice: %v", err)
	}
	fr, err := c.FireHooks(ctx, &hostv1.FireHooksRequest{Event: "run:before_tool", PayloadJson: []byte(`{"why":"exit:10"}`)})
	if err != nil || fr.GetDecision() != "annotate" {
		t.Errorf("fire: %v %v", fr, err)
	}
	if s, err := c.SetHookEnabled(ctx, &hostv1.SetHookEnabledRequest{HookId: "g1", Enabled: false}); err != nil || s.GetBinding().GetEnabled() {
		t.Errorf("disable hook: %v %v", s, err)
	}
	if hl, err := c.ListHooks(ctx, &hostv1.ListHooksRequest{}); err != nil || len(hl.GetBindings()) != 1 {
		t.Errorf("list hooks: %v %v", hl, err)
	}
	if _, err := c.RemoveHook(ctx, &hostv1.RemoveHookRequest{HookId: "g1"}); err != nil {
		t.Errorf("remove hook: %v", err)
	}

	// A2UI over gRPC: the probe returns a form; the submit goes back to it.
	form := `{"v":1,"surface":"s","components":[{"id":"f","type":"form","props":{"fields":[{"id":"name","label":"Name","type":"text","required":true}]}}]}`
	cr, err = c.CallTool(ctx, &hostv1.CallToolRequest{SkillId: "test.grpc", ToolId: "test.probe", InputJson: []byte(form)})
	if err != nil || cr.GetA2Ui().GetDocumentId() == "" {
		t.Fatalf("a2ui call: %v %v", cr, err)
	}
	sr, err := c.SubmitForm(ctx, &hostv1.SubmitFormRequest{DocumentId: cr.GetA2Ui().GetDocumentId(), ComponentId: "f", ValuesJson: []byte(`{"name":"Ada"}`)})
	if err != nil || !strings.Contains(string(sr.GetResult().GetOutputJson()), `"name":"Ada"`) {
		t.Errorf("submit: %v %v", sr, err)
	}
	if _, err := c.SubmitForm(ctx, &hostv1.SubmitFormRequest{DocumentId: cr.GetA2Ui().GetDocumentId(), ComponentId: "f", ValuesJson: []byte(`{}`)}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("submit without a required field: %v", err)
	}

	rr, err := c.RemoveSkill(ctx, &hostv1.RemoveSkillRequest{SkillId: "test.grpc", PurgeStorage: true})
	if err != nil || len(rr.GetVersions()) != 1 || !rr.GetStoragePurged() {
		t.Errorf("remove: %v %v", rr, err)
	}
	// The stream saw the lifecycle in journal order.
	var kinds []string
	deadline := time.After(10 * time.Second)
	for len(kinds) == 0 || kinds[len(kinds)-1] != "skill:removed" {
		select {
		case ev := <-evs:
			if ev.GetId() != 0 {
				kinds = append(kinds, ev.GetKind())
			}
		case <-deadline:
			t.Fatalf("stream kinds so far: %v", kinds)
		}
	}
	want := []string{"skill:verified", "skill:quarantined", "skill:enabled", "skill:disabled", "skill:enabled"}
	for _, w := range want {
		found := false
		for _, k := range kinds {
			if k == w {
				found = true
			}
		}
		if !found {
			t.Errorf("stream lacks %s: %v", w, kinds)
		}
	}
	stopStream()
	for range evs {
	}

	// A replay without following ends after the journal: the same events,
	// in the same order, as the live stream saw.
	rs, err := c.StreamEvents(ctx, &hostv1.StreamEventsRequest{AfterId: proto.Int64(0), ReplayOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var replayed []string
	for {
		ev, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		replayed = append(replayed, ev.GetKind())
	}
	// The live stream's first event, skill:installed, was read above.
	if len(replayed) == 0 || replayed[0] != "skill:installed" || !slices.Equal(replayed[1:], kinds) {
		t.Errorf("replay %v, live skill:installed then %v", replayed, kinds)
	}

	// Review status: builder output awaiting review installs quarantined
	// and is lifted only by ApproveSkillReview.
	pending := string(readFixture(t, "testdata/hookprobe/skill.toml"))
	pending = strings.Replace(pending, `skill_id = "test.hookprobe"`, `skill_id = "test.review"`, 1) + `
[builder]
experimental = true
source_kind = "prompt"
source_ref = "grpc"
rollout_flag = "grpc_builder"
review_status = "pending"

[builder.checklist]
capability_declaration_path = "skill.toml"
provenance_path = "provenance.json"
test_harness_path = "tests/harness.json"
`
	_, err = c.InstallSkill(ctx, &hostv1.InstallSkillRequest{Artifact: testskill.Build(t, pending, readFixture(t, "testdata/hookprobe/hookprobe.wasm"), publisherKey)})
	if status.Code(err) != codes.FailedPrecondition || grpcErrCode(err) != "review_pending" {
		t.Errorf("install of pending builder output: %v", err)
	}
	if ls, err := c.ListSkills(ctx, &hostv1.ListSkillsRequest{SkillId: "test.review"}); err != nil || len(ls.GetSkills()) != 1 || !ls.GetSkills()[0].GetReviewPending() {
		t.Errorf("list of the pending version: %v %v", ls, err)
	}
	if _, err := c.EnableSkill(ctx, &hostv1.EnableSkillRequest{SkillId: "test.review", Reason: "try", Override: true}); grpcErrCode(err) != "review_pending" {
		t.Errorf("enable of a pending version: %v", err)
	}
	if _, err := c.ApproveSkillReview(ctx, &hostv1.ApproveSkillReviewRequest{SkillId: "test.review"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("approve without a reason: %v", err)
	}
	if a, err := c.ApproveSkillReview(ctx, &hostv1.ApproveSkillReviewRequest{SkillId: "test.review", Reason: "read"}); err != nil ||
		a.GetStatus().GetStatus() != "active" || a.GetStatus().GetOperatorPrincipal() != "user:grpc" {
		t.Errorf("approve: %v %v", a, err)
	}
	if _, err := c.ApproveSkillReview(ctx, &hostv1.ApproveSkillReviewRequest{SkillId: "test.review", Reason: "again"}); grpcErrCode(err) != "review_not_pending" {
		t.Errorf("second approval: %v", err)
	}
	if _, err := c.RemoveSkill(ctx, &hostv1.RemoveSkillRequest{SkillId: "test.review"}); err != nil {
		t.Errorf("remove test.review: %v", err)
	}
}

// TestOnePortThreeWires checks that the plaintext port serves each kind of
// connection its own way at once: gRPC (handed to gRPC's own transport),
// JSON over h2c with prior knowledge and JSON over HTTP/1.1 (both to the
// http.Server), with the token required on each.
func TestOnePortThreeWires(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := dialGRPC(t, p).ListSkills(authed(ctx, p.token), &hostv1.ListSkillsRequest{}); err != nil {
		t.Fatalf("gRPC: %v", err)
	}
	if _, err := dialGRPC(t, p).ListSkills(ctx, &hostv1.ListSkillsRequest{}); grpcErrCode(err) != "unauthorized" {
		t.Fatalf("gRPC without the token: %v", err)
	}
	h2c := &http.Client{Transport: &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}}
	defer h2c.CloseIdleConnections()
	h1 := &http.Client{Transport: &http.Transport{}}
	defer h1.CloseIdleConnections()
	for _, c := range []struct {
		name   string
		client *http.Client
		proto  int
	}{{"h2c", h2c, 2}, {"HTTP/1.1", h1, 1}} {
		for _, tok := range []string{p.token, ""} {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/v1/skills", nil)
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := c.client.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := http.StatusOK
			if tok == "" {
				want = http.StatusUnauthorized
			}
			if resp.StatusCode != want || resp.ProtoMajor != c.proto || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%s token=%v: %s %d %s", c.name, tok != "", resp.Proto, resp.StatusCode, b)
			}
		}
	}
}
