package daemon

import (
	"net/http"
	"net/url"

	"github.com/palyra-go/palyra/host"
)

// ApprovalsPath is where the HTTP API serves approvals: GET lists them,
// GET ApprovalsPath/{id} shows one, POST .../{id}/approve and .../deny
// decide it.
const ApprovalsPath = "/v1/approvals"

// pendingCall is the 202 answer of a call that waits for approval: the
// call result with pending set (so a client that reads a call result
// reads this one), the code and message an error would carry, and the
// URL of the approval (GET polls it, POST URL/approve or URL/deny
// decides it).
type pendingCall struct {
	host.CallResult
	Code        string `json:"code"`
	Message     string `json:"message"`
	ApprovalURL string `json:"approval_url"`
}

// writePending answers a call that waits for approval pa: 202 Accepted,
// Location the approval's URL.
func writePending(w http.ResponseWriter, pa *host.PendingApproval, err error) error {
	u := ApprovalsPath + "/" + url.PathEscape(pa.ID)
	w.Header().Set("Location", u)
	return writeJSON(w, http.StatusAccepted, pendingCall{
		CallResult: host.CallResult{SkillID: pa.SkillID, Version: pa.Version, ToolID: pa.ToolID, Pending: pa},
		Code:       host.ErrApprovalPending.Code(), Message: err.Error(), ApprovalURL: u,
	})
}

// decideBody is the body of POST /v1/approvals/{id}/approve and /deny.
type decideBody struct {
	// Reason is recorded with the decision; required to deny.
	Reason string `json:"reason,omitempty"`
}

func (d *Daemon) httpApprovals(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	out, err := d.svc.Approvals(r.Context(), host.ApprovalsRequest{State: host.ApprovalState(q.Get("state")), SkillID: q.Get("skill_id")})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Daemon) httpApproval(w http.ResponseWriter, r *http.Request) error {
	out, err := d.svc.Approval(r.Context(), r.PathValue("approval"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// httpDecide approves (approve) or denies an approval.
func (d *Daemon) httpDecide(approve bool) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body decideBody
		if err := d.decode(r, &body); err != nil {
			return err
		}
		out, err := d.svc.DecideApproval(r.Context(), host.DecideRequest{ID: r.PathValue("approval"), Approve: approve, Reason: body.Reason})
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, out)
	}
}
