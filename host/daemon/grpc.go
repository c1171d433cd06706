package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

// TrailerErrorCode is the gRPC trailer that carries an error's stable code.
const TrailerErrorCode = "palyra-error-code"

// TrailerErrorDetail is the gRPC trailer (binary: any UTF-8) that carries
// an error's whole chain when it says more than the status message (the
// readable sentence), as the HTTP API's "detail" does.
const TrailerErrorDetail = "palyra-error-detail-bin"

// The gRPC API's flow-control windows (see newGRPCServer).
const (
	grpcStreamWindowBytes = 4 << 20
	grpcConnWindowBytes   = 16 << 20
)

// newGRPCServer builds the gRPC server: HostService behind the token
// interceptors, and the standard health service without them.
func (d *Daemon) newGRPCServer() *grpc.Server {
	s := grpc.NewServer(
		grpc.MaxRecvMsgSize(int(d.cfg.MaxArtifactBytes)+(64<<10)),
		// Fixed flow-control windows: gRPC's bandwidth-delay-product
		// estimation would ping the client on nearly every call made one
		// at a time. 4 MiB per stream still moves an artifact at 40 MB/s
		// over a 100 ms round trip.
		grpc.InitialWindowSize(grpcStreamWindowBytes),
		grpc.InitialConnWindowSize(grpcConnWindowBytes),
		// Calls run on a few goroutines that stay, as net/http's
		// connection goroutines do, instead of a new goroutine per call
		// whose stack grows again through the call path each time (a
		// call that finds every worker busy still gets a goroutine of its
		// own). palyra-bench G: gRPC 0.97x of HTTP without, 0.90-0.92x
		// with. The option is marked experimental in grpc-go.
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
		grpc.ChainUnaryInterceptor(d.unaryInterceptor),
		grpc.ChainStreamInterceptor(d.streamInterceptor),
	)
	hostv1.RegisterHostServiceServer(s, &grpcServer{d: d})
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(hostv1.HostService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	return s
}

func isHealth(method string) bool { return strings.HasPrefix(method, "/grpc.health.v1.Health/") }

// authContext authenticates a call and puts its request id and principal in
// ctx.
func (d *Daemon) authContext(ctx context.Context, method string) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	first := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	rid := first("x-request-id")
	if !requestIDRE.MatchString(rid) {
		rid = newRequestID()
	}
	ctx = context.WithValue(ctx, keyRequestID, rid)
	if isHealth(method) {
		return ctx, nil
	}
	if err := d.auth.CheckAuthorization(first("authorization")); err != nil {
		return ctx, err
	}
	p, err := principalOf(first("x-palyra-principal"))
	if err != nil {
		return ctx, err
	}
	return host.WithPrincipal(ctx, p), nil
}

func (d *Daemon) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	ctx, err := d.authContext(ctx, info.FullMethod)
	var resp any
	if err == nil && info.FullMethod != hostv1.HostService_InstallSkill_FullMethodName {
		if m, ok := req.(proto.Message); ok {
			if n := proto.Size(m); int64(n) > d.cfg.MaxRequestBytes {
				err = fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrRequestTooLarge, n, d.cfg.MaxRequestBytes)
			}
		}
	}
	if err == nil {
		resp, err = h(ctx, req)
	}
	return resp, d.finishRPC(ctx, info.FullMethod, start, err)
}

func (d *Daemon) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	start := time.Now()
	ctx, err := d.authContext(ss.Context(), info.FullMethod)
	if err == nil {
		err = h(srv, &ctxStream{ServerStream: ss, ctx: ctx})
	}
	return d.finishRPC(ctx, info.FullMethod, start, err)
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// finishRPC logs and counts a call and converts its error to a status: its
// message is the error code and the readable sentence (as the HTTP API's
// "code" and "message"), its trailers the code (TrailerErrorCode) and,
// when it says more, the whole chain (TrailerErrorDetail). The log line
// keeps the whole chain.
func (d *Daemon) finishRPC(ctx context.Context, method string, start time.Time, err error) error {
	code := codes.OK
	logged := err
	if err != nil {
		if _, ok := status.FromError(err); ok && errcode.Of(err) == errcode.Internal {
			code = status.Code(err)
		} else {
			ec := errcode.Of(err)
			code = GRPCCode(ec)
			message, detail := readableMessage(err)
			md := metadata.Pairs(TrailerErrorCode, ec)
			if detail != "" {
				md.Append(TrailerErrorDetail, detail)
			}
			grpc.SetTrailer(ctx, md)
			err = status.Error(code, ec+": "+message)
		}
	}
	d.metrics.ObserveRequest("grpc", method, int(code), time.Since(start))
	args := []any{"request_id", requestIDOf(ctx), "method", method, "grpc_code", code.String(), "duration", time.Since(start), "principal", host.PrincipalFrom(ctx)}
	if logged != nil {
		args = append(args, "error", logged)
	}
	if code == codes.Internal || code == codes.Unknown {
		d.log.Error("api request", args...)
	} else {
		d.log.Debug("api request", args...)
	}
	return err
}

// grpcServer implements hostv1.HostServiceServer: each method is one call
// on the daemon's Service, as each HTTP route is.
type grpcServer struct {
	hostv1.UnimplementedHostServiceServer
	d *Daemon
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

func skillProto(l host.SkillListing) *hostv1.Skill {
	s := &hostv1.Skill{
		SkillId: l.SkillID, Version: l.Version, Name: l.SkillName, Publisher: l.Publisher, Current: l.Current,
		Status: l.Status, Reason: l.RuntimeStatus.Reason, OperatorPrincipal: l.RuntimeStatus.Principal,
		DetectedAtUnixMs: l.RuntimeStatus.DetectedAtMS, TrustDecision: l.TrustDecision, ToolCount: int32(l.ToolCount),
		Eligibility: string(l.Eligibility.Status), EligibilityReasons: l.Eligibility.Reasons,
		PayloadSha256: l.PayloadSHA256, InstalledAtUnixMs: l.InstalledAtMS, ReviewPending: l.ReviewPending,
	}
	if l.HeldBack != nil {
		s.HeldBackCode, s.HeldBackReason = l.HeldBack.Code, l.HeldBack.Reason
	}
	return s
}

func statusProto(r *host.StatusResult) *hostv1.StatusChange {
	return &hostv1.StatusChange{
		SkillId: r.SkillID, Version: r.Version, Status: string(r.Status), Reason: r.Reason, DetectedAtMs: r.DetectedAtMS,
		OperatorPrincipal: r.Principal, Current: r.Current, PreviousCurrent: r.PreviousCurrent,
	}
}

func (g *grpcServer) ListSkills(ctx context.Context, req *hostv1.ListSkillsRequest) (*hostv1.ListSkillsResponse, error) {
	ls, err := g.d.svc.List(ctx, host.ListRequest{SkillID: req.GetSkillId(), CurrentOnly: req.GetCurrentOnly(), QuarantinedOnly: req.GetQuarantinedOnly(), EligibleOnly: req.GetEligibleOnly()})
	if err != nil {
		return nil, err
	}
	out := &hostv1.ListSkillsResponse{}
	for _, l := range ls.Entries {
		out.Skills = append(out.Skills, skillProto(l))
	}
	return out, nil
}

func (g *grpcServer) GetSkill(ctx context.Context, req *hostv1.GetSkillRequest) (*hostv1.GetSkillResponse, error) {
	info, err := g.d.svc.Info(ctx, host.SkillRef{SkillID: req.GetSkillId(), Version: req.GetVersion()})
	if err != nil {
		return nil, err
	}
	return &hostv1.GetSkillResponse{Skill: skillProto(info.Inventory), InfoJson: mustJSON(info)}, nil
}

func (g *grpcServer) InstallSkill(ctx context.Context, req *hostv1.InstallSkillRequest) (*hostv1.InstallSkillResponse, error) {
	if n := int64(len(req.GetArtifact())); n > g.d.cfg.MaxArtifactBytes {
		return nil, fmt.Errorf("%w: artifact of %d bytes, over the %d-byte limit", ErrRequestTooLarge, n, g.d.cfg.MaxArtifactBytes)
	}
	ir := host.InstallRequest{Artifact: req.GetArtifact(), AllowTOFU: req.GetAllowTofu(), Force: req.GetForce(), AcceptCapabilities: req.GetAcceptCapabilities(), DryRun: req.GetDryRun()}
	var res *host.InstallResult
	var err error
	if src := req.GetSource(); src != nil {
		ir.From = &host.SourceRef{
			OCI: src.GetOci(), RegistryURL: src.GetRegistryUrl(), RegistryDir: src.GetRegistryDir(), SkillID: src.GetSkillId(),
			Version: src.GetVersion(), RegistryCACert: src.GetRegistryCaCert(), PlainHTTP: src.GetPlainHttp(),
		}
		res, err = g.d.svc.Install(ctx, ir)
	} else {
		res, err = g.d.install(ctx, ir)
	}
	if err != nil {
		return nil, err
	}
	return &hostv1.InstallSkillResponse{SkillId: res.SkillID, Version: res.Version, Status: string(res.Status), TrustDecision: res.TrustDecision, ResultJson: mustJSON(res)}, nil
}

func (g *grpcServer) VerifySkill(ctx context.Context, req *hostv1.VerifySkillRequest) (*hostv1.VerifySkillResponse, error) {
	res, err := g.d.svc.Verify(ctx, host.SkillRef{SkillID: req.GetSkillId(), Version: req.GetVersion()})
	if err != nil {
		return nil, err
	}
	return &hostv1.VerifySkillResponse{TrustDecision: res.TrustDecision, ResultJson: mustJSON(res)}, nil
}

func (g *grpcServer) AuditSkill(ctx context.Context, req *hostv1.AuditSkillRequest) (*hostv1.AuditSkillResponse, error) {
	res, err := g.d.svc.Audit(ctx, host.SkillRef{SkillID: req.GetSkillId(), Version: req.GetVersion()})
	if err != nil {
		return nil, err
	}
	return &hostv1.AuditSkillResponse{Passed: res.Passed, QuarantineRequired: res.QuarantineRequired, ResultJson: mustJSON(res)}, nil
}

func (g *grpcServer) QuarantineSkill(ctx context.Context, req *hostv1.QuarantineSkillRequest) (*hostv1.QuarantineSkillResponse, error) {
	r, err := g.d.svc.Quarantine(ctx, host.StatusRequest{SkillID: req.GetSkillId(), Version: req.GetVersion(), Reason: req.GetReason()})
	if err != nil {
		return nil, err
	}
	return &hostv1.QuarantineSkillResponse{Status: statusProto(r)}, nil
}

func (g *grpcServer) EnableSkill(ctx context.Context, req *hostv1.EnableSkillRequest) (*hostv1.EnableSkillResponse, error) {
	r, err := g.d.svc.Enable(ctx, host.EnableRequest{SkillID: req.GetSkillId(), Version: req.GetVersion(), Reason: req.GetReason(), Override: req.GetOverride()})
	if err != nil {
		return nil, err
	}
	return &hostv1.EnableSkillResponse{Status: statusProto(r)}, nil
}

func (g *grpcServer) ApproveSkillReview(ctx context.Context, req *hostv1.ApproveSkillReviewRequest) (*hostv1.ApproveSkillReviewResponse, error) {
	r, err := g.d.svc.ApproveReview(ctx, host.ReviewRequest{SkillID: req.GetSkillId(), Version: req.GetVersion(), Reason: req.GetReason()})
	if err != nil {
		return nil, err
	}
	return &hostv1.ApproveSkillReviewResponse{Status: statusProto(r)}, nil
}

func (g *grpcServer) GetSkillConfig(ctx context.Context, req *hostv1.GetSkillConfigRequest) (*hostv1.GetSkillConfigResponse, error) {
	r, err := g.d.svc.SkillConfig(ctx, req.GetSkillId())
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &hostv1.GetSkillConfigResponse{ConfigJson: b}, nil
}

func (g *grpcServer) SetSkillConfig(ctx context.Context, req *hostv1.SetSkillConfigRequest) (*hostv1.SetSkillConfigResponse, error) {
	values := make(map[string]json.RawMessage, len(req.GetValuesJson()))
	for k, v := range req.GetValuesJson() {
		values[k] = v
	}
	r, err := g.d.svc.SetSkillConfig(ctx, host.SetConfigRequest{SkillID: req.GetSkillId(), Values: values})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &hostv1.SetSkillConfigResponse{ConfigJson: b}, nil
}

func (g *grpcServer) UnsetSkillConfig(ctx context.Context, req *hostv1.UnsetSkillConfigRequest) (*hostv1.UnsetSkillConfigResponse, error) {
	r, err := g.d.svc.UnsetSkillConfig(ctx, host.UnsetConfigRequest{SkillID: req.GetSkillId(), Keys: req.GetKeys()})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &hostv1.UnsetSkillConfigResponse{ConfigJson: b}, nil
}

func (g *grpcServer) DisableSkill(ctx context.Context, req *hostv1.DisableSkillRequest) (*hostv1.DisableSkillResponse, error) {
	r, err := g.d.svc.Disable(ctx, host.StatusRequest{SkillID: req.GetSkillId(), Version: req.GetVersion(), Reason: req.GetReason()})
	if err != nil {
		return nil, err
	}
	return &hostv1.DisableSkillResponse{Status: statusProto(r)}, nil
}

func (g *grpcServer) RemoveSkill(ctx context.Context, req *hostv1.RemoveSkillRequest) (*hostv1.RemoveSkillResponse, error) {
	r, err := g.d.svc.Remove(ctx, host.RemoveRequest{SkillID: req.GetSkillId(), Version: req.GetVersion(), PurgeStorage: req.GetPurgeStorage(), Force: req.GetForce()})
	if err != nil {
		return nil, err
	}
	return &hostv1.RemoveSkillResponse{Versions: r.Versions, StoragePurged: r.StoragePurged, ResultJson: mustJSON(r)}, nil
}

func (g *grpcServer) Reaudit(ctx context.Context, _ *hostv1.ReauditRequest) (*hostv1.ReauditResponse, error) {
	rep, err := g.d.svc.Reaudit(ctx)
	if err != nil {
		return nil, err
	}
	return &hostv1.ReauditResponse{Audited: int32(rep.Checked), Quarantined: int32(rep.Quarantined), ResultJson: mustJSON(rep)}, nil
}

func (g *grpcServer) RotateTrust(ctx context.Context, req *hostv1.RotateTrustRequest) (*hostv1.RotateTrustResponse, error) {
	r, err := g.d.svc.RotateTrust(ctx, host.RotateTrustRequest{Statement: req.GetStatement()})
	if err != nil {
		return nil, err
	}
	return &hostv1.RotateTrustResponse{Publisher: r.Publisher, Outcome: r.Outcome, StatementSha256: r.StatementSHA256}, nil
}

func (g *grpcServer) UpdateDenyFeed(ctx context.Context, req *hostv1.UpdateDenyFeedRequest) (*hostv1.UpdateDenyFeedResponse, error) {
	in := host.UpdateDenyFeedRequest{Feed: req.GetFeed()}
	for _, v := range req.GetTrustedPublishers() {
		pub, key, ok := strings.Cut(v, "=")
		if !ok || pub == "" || key == "" {
			return nil, fmt.Errorf("%w: trusted_publishers entry %q is not ISSUER=PUBLIC_KEY_HEX", ErrBadRequest, v)
		}
		in.TrustedPublishers = append(in.TrustedPublishers, host.TrustedKey{Publisher: pub, PublicKeyHex: key})
	}
	r, err := g.d.svc.UpdateDenyFeed(ctx, in)
	if err != nil {
		return nil, err
	}
	return &hostv1.UpdateDenyFeedResponse{
		Issuer: r.Feed.Issuer, Serial: r.Feed.Serial, PreviousSerial: r.PreviousSerial, Changed: r.Changed,
		Quarantined: int32(r.Reaudit.Quarantined), ResultJson: mustJSON(r),
	}, nil
}

func (g *grpcServer) GetDenyFeed(ctx context.Context, _ *hostv1.GetDenyFeedRequest) (*hostv1.GetDenyFeedResponse, error) {
	r, err := g.d.svc.DenyFeed(ctx)
	if err != nil {
		return nil, err
	}
	return &hostv1.GetDenyFeedResponse{
		Installed: r.Installed, Issuer: r.Issuer, Serial: r.Serial, Entries: int32(len(r.Entries)), Error: r.Error, ResultJson: mustJSON(r),
	}, nil
}

func (g *grpcServer) ListOutdated(ctx context.Context, req *hostv1.ListOutdatedRequest) (*hostv1.ListOutdatedResponse, error) {
	rep, err := g.d.svc.Outdated(ctx, host.OutdatedRequest{SkillID: req.GetSkillId(), AllowTOFU: req.GetAllowTofu()})
	if err != nil {
		return nil, err
	}
	out := &hostv1.ListOutdatedResponse{}
	for _, s := range rep.Skills {
		out.Skills = append(out.Skills, &hostv1.OutdatedSkill{
			SkillId: s.SkillID, CurrentVersion: s.CurrentVersion, LatestVersion: s.LatestVersion, Outdated: s.Outdated,
			SourceKind: string(s.Source.Kind), SourceRef: s.Source.Ref, Error: s.Error, Code: s.Code,
		})
	}
	return out, nil
}

func (g *grpcServer) UpdateSkill(ctx context.Context, req *hostv1.UpdateSkillRequest) (*hostv1.UpdateSkillResponse, error) {
	r, err := g.d.svc.Update(ctx, host.UpdateRequest{
		SkillID: req.GetSkillId(), Version: req.GetVersion(), DryRun: req.GetDryRun(),
		AcceptCapabilities: req.GetAcceptCapabilities(), AllowTOFU: req.GetAllowTofu(),
	})
	if err != nil {
		return nil, err
	}
	return &hostv1.UpdateSkillResponse{
		FromVersion: r.FromVersion, ToVersion: r.ToVersion, Updated: r.Updated, Reason: r.Reason,
		CapabilityDiff: r.CapabilityDiff, ResultJson: mustJSON(r),
	}, nil
}

func (g *grpcServer) Apply(ctx context.Context, req *hostv1.ApplyRequest) (*hostv1.ApplyResponse, error) {
	r, err := g.d.svc.Apply(ctx, host.ApplyRequest{Document: req.GetDocument(), DryRun: req.GetDryRun(), Prune: req.GetPrune()})
	if err != nil {
		return nil, err
	}
	return &hostv1.ApplyResponse{Changed: r.Changed, ResultJson: mustJSON(r)}, nil
}

func (g *grpcServer) SetPolicy(ctx context.Context, req *hostv1.SetPolicyRequest) (*hostv1.SetPolicyResponse, error) {
	r, err := g.d.svc.SetPolicy(ctx, host.SetPolicyRequest{Profile: req.GetProfile()})
	if err != nil {
		return nil, err
	}
	return &hostv1.SetPolicyResponse{Sha256: r.SHA256, Path: r.Path, ResultJson: mustJSON(r)}, nil
}

func callProto(r *host.CallResult) *hostv1.CallToolResponse {
	out := &hostv1.CallToolResponse{
		InvocationId: r.InvocationID, Version: r.Version, OutputJson: r.Output, ExitCode: r.ExitCode,
		FuelConsumed: r.Stats.FuelConsumed, PeakMemoryBytes: r.Stats.PeakMemoryBytes, WallTimeNs: int64(r.Stats.WallTime),
		FuelConsumedLowerBound: r.Stats.FuelLowerBound,
	}
	if r.A2UI != nil {
		out.A2Ui = &hostv1.A2UIRef{DocumentId: r.A2UI.DocumentID, Surface: r.A2UI.Surface, PatchJson: r.A2UI.Patch, DocumentJson: r.A2UI.Document}
	}
	for _, a := range r.Annotations {
		out.Annotations = append(out.Annotations, &hostv1.HookAnnotation{HookId: a.HookID, Event: a.Event, Message: a.Message, DataJson: a.Data, Code: a.Code, Error: a.Error})
	}
	if r.Preview != nil {
		out.Preview = &hostv1.HookPreview{HookId: r.Preview.HookID, Text: r.Preview.Text}
	}
	return out
}

func (g *grpcServer) CallTool(ctx context.Context, req *hostv1.CallToolRequest) (*hostv1.CallToolResponse, error) {
	timeout, err := timeoutOf(req.GetTimeoutMs())
	if err != nil {
		return nil, err
	}
	r, err := g.d.svc.Call(ctx, host.CallRequest{SkillID: req.GetSkillId(), ToolID: req.GetToolId(), Input: req.GetInputJson(), Timeout: timeout, ApprovalID: req.GetApprovalId()})
	if pa := host.PendingApprovalOf(err); pa != nil {
		return &hostv1.CallToolResponse{Version: pa.Version, Pending: pendingProto(pa)}, nil
	}
	if err != nil {
		return nil, err
	}
	return callProto(r), nil
}

func (g *grpcServer) RunInline(ctx context.Context, req *hostv1.RunInlineRequest) (*hostv1.RunInlineResponse, error) {
	timeout, err := timeoutOf(req.GetTimeoutMs())
	if err != nil {
		return nil, err
	}
	r, err := g.d.svc.RunInline(ctx, host.InlineRunRequest{Module: req.GetModule(), ModuleName: req.GetModuleName(), Manifest: req.GetManifest(),
		ToolID: req.GetToolId(), Input: req.GetInputJson(), Timeout: timeout})
	if err != nil {
		return nil, err
	}
	return &hostv1.RunInlineResponse{Result: callProto(r)}, nil
}

func (g *grpcServer) SubmitForm(ctx context.Context, req *hostv1.SubmitFormRequest) (*hostv1.SubmitFormResponse, error) {
	body, err := json.Marshal(map[string]any{"componentId": req.GetComponentId(), "values": json.RawMessage(orNull(req.GetValuesJson()))})
	if err != nil {
		return nil, fmt.Errorf("%w: values_json: %v", ErrBadRequest, err)
	}
	sr, err := submitRequest(req.GetDocumentId(), body)
	if err != nil {
		return nil, err
	}
	sr.ApprovalID = req.GetApprovalId()
	r, err := g.d.svc.SubmitForm(ctx, sr)
	if pa := host.PendingApprovalOf(err); pa != nil {
		return &hostv1.SubmitFormResponse{Result: &hostv1.CallToolResponse{Version: pa.Version, Pending: pendingProto(pa)}}, nil
	}
	if err != nil {
		return nil, err
	}
	return &hostv1.SubmitFormResponse{Result: callProto(r)}, nil
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

func bindingProto(b *host.HookBinding) *hostv1.HookBinding {
	return &hostv1.HookBinding{
		HookId: b.HookID, Event: b.Event, PluginId: b.PluginID, ToolId: b.ToolID, Enabled: proto.Bool(b.Enabled), TimeoutMs: b.TimeoutMs, OnFailure: b.OnFailure,
		OwnerPrincipal: b.Operator.OwnerPrincipal, DisplayName: b.Operator.DisplayName, Notes: b.Operator.Notes,
		CreatedAtUnixMs: b.CreatedAtUnixMs, UpdatedAtUnixMs: b.UpdatedAtUnixMs,
	}
}

func (g *grpcServer) ListHooks(ctx context.Context, _ *hostv1.ListHooksRequest) (*hostv1.ListHooksResponse, error) {
	bs, err := g.d.svc.Hooks(ctx)
	if err != nil {
		return nil, err
	}
	out := &hostv1.ListHooksResponse{}
	for i := range bs {
		out.Bindings = append(out.Bindings, bindingProto(&bs[i]))
	}
	return out, nil
}

func (g *grpcServer) BindHook(ctx context.Context, req *hostv1.BindHookRequest) (*hostv1.BindHookResponse, error) {
	pb := req.GetBinding()
	if pb == nil {
		return nil, fmt.Errorf("%w: binding is missing", ErrBadRequest)
	}
	b := host.HookBinding{HookID: pb.GetHookId(), Event: pb.GetEvent(), PluginID: pb.GetPluginId(), ToolID: pb.GetToolId(), Enabled: pb.Enabled == nil || pb.GetEnabled(), TimeoutMs: pb.GetTimeoutMs(), OnFailure: pb.GetOnFailure()}
	b.Operator.DisplayName, b.Operator.Notes, b.Operator.OwnerPrincipal = pb.GetDisplayName(), pb.GetNotes(), pb.GetOwnerPrincipal()
	out, err := g.d.svc.BindHook(ctx, b)
	if err != nil {
		return nil, err
	}
	return &hostv1.BindHookResponse{Binding: bindingProto(out)}, nil
}

func (g *grpcServer) SetHookEnabled(ctx context.Context, req *hostv1.SetHookEnabledRequest) (*hostv1.SetHookEnabledResponse, error) {
	out, err := g.d.svc.SetHookEnabled(ctx, req.GetHookId(), req.GetEnabled())
	if err != nil {
		return nil, err
	}
	return &hostv1.SetHookEnabledResponse{Binding: bindingProto(out)}, nil
}

func (g *grpcServer) RemoveHook(ctx context.Context, req *hostv1.RemoveHookRequest) (*hostv1.RemoveHookResponse, error) {
	if err := g.d.svc.RemoveHook(ctx, req.GetHookId()); err != nil {
		return nil, err
	}
	return &hostv1.RemoveHookResponse{}, nil
}

func (g *grpcServer) FireHooks(ctx context.Context, req *hostv1.FireHooksRequest) (*hostv1.FireHooksResponse, error) {
	out, err := g.d.svc.FireHooks(ctx, host.FireRequest{Event: req.GetEvent(), Payload: req.GetPayloadJson()})
	if err != nil {
		return nil, err
	}
	return &hostv1.FireHooksResponse{Decision: string(out.Resolution.Decision), ResultJson: mustJSON(out)}, nil
}

func (g *grpcServer) StreamEvents(req *hostv1.StreamEventsRequest, ss grpc.ServerStreamingServer[hostv1.StreamEventsResponse]) error {
	er := host.EventsRequest{After: -1, Follow: !req.GetReplayOnly()}
	if req.AfterId != nil {
		if er.After = req.GetAfterId(); er.After < 0 {
			return fmt.Errorf("%w: after_id %d is negative", ErrBadRequest, er.After)
		}
	}
	// Shutdown ends the streams, so the drain does not wait for them.
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	go func() {
		select {
		case <-g.d.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := g.d.svc.Events(ctx, er, func(ev host.Event) error {
		return ss.Send(&hostv1.StreamEventsResponse{Id: ev.ID, Kind: ev.Kind, SkillId: ev.SkillID, Version: ev.Version, EventJson: mustJSON(ev)})
	})
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

func (g *grpcServer) ListTools(ctx context.Context, _ *hostv1.ListToolsRequest) (*hostv1.ListToolsResponse, error) {
	cat, err := g.d.svc.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return &hostv1.ListToolsResponse{Generation: cat.Generation, ResultJson: mustJSON(cat)}, nil
}

func (g *grpcServer) ListSidecars(ctx context.Context, _ *hostv1.ListSidecarsRequest) (*hostv1.ListSidecarsResponse, error) {
	st, err := g.d.svc.Sidecars(ctx)
	if err != nil {
		return nil, err
	}
	return &hostv1.ListSidecarsResponse{ResultJson: mustJSON(sidecarList{Sidecars: st})}, nil
}

func (g *grpcServer) GetCluster(ctx context.Context, _ *hostv1.GetClusterRequest) (*hostv1.GetClusterResponse, error) {
	st, err := g.d.cluster(ctx)
	if err != nil {
		return nil, err
	}
	return &hostv1.GetClusterResponse{ResultJson: mustJSON(st)}, nil
}

func (g *grpcServer) GetSkillMetrics(ctx context.Context, req *hostv1.GetSkillMetricsRequest) (*hostv1.GetSkillMetricsResponse, error) {
	m, err := g.d.svc.SkillMetrics(ctx, req.GetSkillId())
	if err != nil {
		return nil, err
	}
	return &hostv1.GetSkillMetricsResponse{ResultJson: mustJSON(m)}, nil
}
