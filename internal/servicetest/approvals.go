package servicetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/testskill"
)

// skillApproval's tool needs approval (risk.requires_approval).
const skillApproval = "conf.approve"

// approvalCases are approvals: a call of a tool that needs approval is a
// pending approval (a typed result and approval_pending); approved, the
// same call runs once with the same input only; denied, it fails with the
// reason; decisions are refused once made. They install skillApproval and
// remove it at the end.
func approvalCases() []Case {
	var pending, denied string
	in := `{"text":"launch"}`
	withApproval := func(id, input string) host.CallRequest {
		return host.CallRequest{SkillID: skillApproval, ToolID: "conf.echo", Input: json.RawMessage(input), ApprovalID: id}
	}
	return []Case{
		{Name: "approval_setup", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			m := echoManifest(skillApproval, "1.0.0", Publisher, 5000, "\n[entrypoints.tools.risk]\nrequires_approval = true\n")
			_, err := s.Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, m, repoFile(t, "testdata/wasm/echo.wasm"), Key), AllowTOFU: true})
			return err
		}},
		{Name: "call_needs_approval", Code: "approval_pending", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := call(ctx, s, skillApproval, in)
			pa := host.PendingApprovalOf(err)
			if pa == nil || res == nil || res.Pending == nil || res.Pending.ID != pa.ID || res.Output != nil {
				t.Fatalf("pending call: %+v, %v", res, err)
			}
			if pa.SkillID != skillApproval || pa.ToolID != "conf.echo" || len(pa.Reasons) != 1 || pa.Reasons[0] != (host.ApprovalReason{Kind: "manifest", Detail: "requires_approval"}) {
				t.Fatalf("pending approval %+v", pa)
			}
			pending = pa.ID
			return err
		}},
		{Name: "approvals_list_pending", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			l, err := s.Approvals(ctx, host.ApprovalsRequest{State: host.ApprovalPending, SkillID: skillApproval})
			if err != nil {
				return err
			}
			if l.Count != 1 || l.Approvals[0].ID != pending || l.Approvals[0].RequestedBy != "conformance" || string(l.Approvals[0].Input) != in || l.Approvals[0].Grants == nil {
				t.Fatalf("pending approvals %+v", l)
			}
			return nil
		}},
		{Name: "approval_deny_without_reason", Code: "bad_request", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.DecideApproval(ctx, host.DecideRequest{ID: pending})
			return err
		}},
		{Name: "approval_approve", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			a, err := s.DecideApproval(ctx, host.DecideRequest{ID: pending, Approve: true, Reason: "reviewed"})
			if err != nil {
				return err
			}
			if a.State != host.ApprovalApproved || a.DecidedBy != "conformance" || a.Reason != "reviewed" {
				t.Fatalf("approved: %+v", a)
			}
			return nil
		}},
		{Name: "approval_decide_twice", Code: "approval_already_decided", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.DecideApproval(ctx, host.DecideRequest{ID: pending, Reason: "too late"})
			return err
		}},
		{Name: "call_approval_input_mismatch", Code: "approval_input_mismatch", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Call(ctx, withApproval(pending, `{"text":"something else"}`))
			return err
		}},
		{Name: "call_approved", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Call(ctx, withApproval(pending, in))
			return expectEcho(t, res, err, in)
		}},
		{Name: "call_approval_used", Code: "approval_used", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Call(ctx, withApproval(pending, in))
			return err
		}},
		{Name: "call_approval_denied", Code: "approval_denied", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := call(ctx, s, skillApproval, `{"text":"again"}`)
			pa := host.PendingApprovalOf(err)
			if pa == nil {
				t.Fatalf("second call did not wait for approval: %v", err)
			}
			denied = pa.ID
			if _, err := s.DecideApproval(ctx, host.DecideRequest{ID: denied, Reason: "not in prod"}); err != nil {
				return err
			}
			a, err := s.Approval(ctx, denied)
			if err != nil || a.State != host.ApprovalDenied || a.Reason != "not in prod" {
				t.Fatalf("denied approval: %+v, %v", a, err)
			}
			_, err = s.Call(ctx, withApproval(denied, `{"text":"again"}`))
			if err == nil || !errors.Is(err, host.ErrApprovalDenied) {
				t.Fatalf("call with a denied approval: %v", err)
			}
			return err
		}},
		{Name: "approval_not_found", Code: "approval_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Approval(ctx, "apr_00000000000000000000000000000000")
			return err
		}},
		{Name: "approval_cleanup", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Remove(ctx, host.RemoveRequest{SkillID: skillApproval, PurgeStorage: true})
			return err
		}},
	}
}
