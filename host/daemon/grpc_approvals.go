package daemon

import (
	"context"

	"github.com/palyra-go/palyra/host"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

func reasonsProto(rs []host.ApprovalReason) []*hostv1.ApprovalReason {
	out := make([]*hostv1.ApprovalReason, len(rs))
	for i, r := range rs {
		out[i] = &hostv1.ApprovalReason{Kind: r.Kind, Detail: r.Detail}
	}
	return out
}

// pendingProto is the wire form of the approval a call waits for.
func pendingProto(pa *host.PendingApproval) *hostv1.PendingApproval {
	return &hostv1.PendingApproval{
		Id: pa.ID, SkillId: pa.SkillID, Version: pa.Version, ToolId: pa.ToolID, InputSha256: pa.InputSHA256,
		Reasons: reasonsProto(pa.Reasons), ExpiresAtUnixMs: pa.ExpiresAt.UnixMilli(),
	}
}

// approvalProto is the wire form of an approval.
func approvalProto(a *host.ApprovalInfo) *hostv1.Approval {
	return &hostv1.Approval{
		Id: a.ID, SkillId: a.SkillID, Version: a.Version, ToolId: a.ToolID, State: string(a.State), Reasons: reasonsProto(a.Reasons),
		RequestedBy: a.RequestedBy, RequestedAtUnixMs: a.RequestedAt.UnixMilli(), ExpiresAtUnixMs: a.ExpiresAt.UnixMilli(),
		DecidedBy: a.DecidedBy, Reason: a.Reason, ApprovalJson: mustJSON(a),
	}
}

func (g *grpcServer) ListApprovals(ctx context.Context, req *hostv1.ListApprovalsRequest) (*hostv1.ListApprovalsResponse, error) {
	l, err := g.d.svc.Approvals(ctx, host.ApprovalsRequest{State: host.ApprovalState(req.GetState()), SkillID: req.GetSkillId()})
	if err != nil {
		return nil, err
	}
	out := &hostv1.ListApprovalsResponse{}
	for i := range l.Approvals {
		out.Approvals = append(out.Approvals, approvalProto(&l.Approvals[i]))
	}
	return out, nil
}

func (g *grpcServer) GetApproval(ctx context.Context, req *hostv1.GetApprovalRequest) (*hostv1.GetApprovalResponse, error) {
	a, err := g.d.svc.Approval(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &hostv1.GetApprovalResponse{Approval: approvalProto(a)}, nil
}

func (g *grpcServer) DecideApproval(ctx context.Context, req *hostv1.DecideApprovalRequest) (*hostv1.DecideApprovalResponse, error) {
	a, err := g.d.svc.DecideApproval(ctx, host.DecideRequest{ID: req.GetId(), Approve: req.GetApprove(), Reason: req.GetReason()})
	if err != nil {
		return nil, err
	}
	return &hostv1.DecideApprovalResponse{Approval: approvalProto(a)}, nil
}
