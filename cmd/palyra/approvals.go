package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
)

// exitPending is the exit code of skills run --no-wait when the call
// waits for approval: it did not run, and the approval's id is printed.
const exitPending = 3

// Polling of an approval a run waits for: from approvalPollMin, doubling
// up to approvalPollMax.
const (
	approvalPollMin = 100 * time.Millisecond
	approvalPollMax = 2 * time.Second
)

// approvalsCommand is the approvals group: the calls that wait for a
// human's approval, and the decisions.
func (a *app) approvalsCommand() *cobra.Command {
	c := group("approvals", "List, show, approve and deny the calls that wait for approval",
		a.approvalsListCommand(), a.approvalsShowCommand(), a.approvalsDecideCommand(true), a.approvalsDecideCommand(false))
	c.Example = "  palyra approvals list\n  palyra approvals approve apr_0123456789abcdef0123456789abcdef --reason \"expected payout\""
	c.Long = "A call of a tool that needs a human's approval does not run: it becomes a pending approval. A tool needs it when its manifest sets " +
		"risk.requires_approval or risk.default_sensitive, when the operator profile's capabilities.require_approval names a capability class " +
		"the skill is granted (http, secrets, storage, channels, device, node), or when a run hook asks for it. An approval expires " +
		"(the daemon's [approvals] ttl, 15m by default) unless decided, and an approved one unless used in that time; it is used once, by " +
		"the same call with the same input (sha256 of its canonical JSON). Requests, decisions, uses and expiries are journaled with the principal " +
		"(skill.approval_*).\n\n" +
		"skills run waits for the decision (or, with --no-wait, prints the id and exits " + fmt.Sprint(exitPending) + "), then runs the approved call. " +
		"An approval lives where the call was made: on the daemon (with --url) or on the state directory.\n\n" + daemonModeHelp
	a.registerDaemonFlags(c)
	return c
}

func (a *app) approvalsListCommand() *cobra.Command {
	var (
		sf           stateFlags
		state, skill string
	)
	c := &cobra.Command{
		Use:     "list [--state pending|approved|denied|expired|used] [--skill ID]",
		Example: "  palyra approvals list --state pending\n  palyra approvals list --skill acme.payments -o wide",
		Short:   "List the approvals kept, newest first",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			l, err := sv.Approvals(a.actor(cmd), host.ApprovalsRequest{State: host.ApprovalState(state), SkillID: skill})
			if err != nil {
				return err
			}
			text := "No approval."
			if l.Count > 0 {
				text = approvalsTable(l.Approvals, a.wide())
			}
			return a.emit(l, text)
		},
	}
	sf.register(c, false)
	c.Flags().StringVar(&state, "state", "", "only approvals in this state: pending, approved, denied, expired or used")
	c.Flags().StringVar(&skill, "skill", "", "only this skill's approvals")
	return c
}

// approvalsTable is the table of approvals list.
func approvalsTable(list []host.ApprovalInfo, wide bool) string {
	t := output.NewTable(
		output.Column{Header: "id"}, output.Column{Header: "skill"}, output.Column{Header: "version"}, output.Column{Header: "tool"},
		output.Column{Header: "state"}, output.Column{Header: "requested_by"}, output.Column{Header: "expires"},
		output.Column{Header: "reasons", Wide: true}, output.Column{Header: "decided_by", Wide: true}, output.Column{Header: "reason", Wide: true},
	)
	for _, ap := range list {
		t.Row(ap.ID, ap.SkillID, ap.Version, ap.ToolID, string(ap.State), ap.RequestedBy, ap.ExpiresAt.UTC().Format(time.RFC3339),
			host.ReasonsText(ap.Reasons), dashIfEmpty(ap.DecidedBy), dashIfEmpty(ap.Reason))
	}
	return t.String(wide)
}

// approvalText describes one approval: the call, its input, why it needs
// approval, what the skill may reach, and its state.
func approvalText(ap *host.ApprovalInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "approval %s: %s\n", ap.ID, ap.State)
	fmt.Fprintf(&b, "  call:         %s %s tool %s\n", ap.SkillID, ap.Version, ap.ToolID)
	fmt.Fprintf(&b, "  requested by: %s at %s\n", ap.RequestedBy, ap.RequestedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "  expires:      %s\n", ap.ExpiresAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "  needs it for: %s\n", host.ReasonsText(ap.Reasons))
	if ap.Grants != nil {
		g := ap.Grants
		fmt.Fprintf(&b, "  may reach:    http %s; secrets %s; storage %s; channels %s\n",
			listText(g.HTTPHosts), listText(g.SecretKeys), listText(g.StoragePrefixes), listText(g.Channels))
	}
	if ap.DecidedBy != "" {
		fmt.Fprintf(&b, "  decided by:   %s at %s\n", ap.DecidedBy, ap.DecidedAt.UTC().Format(time.RFC3339))
	}
	if ap.Reason != "" {
		fmt.Fprintf(&b, "  reason:       %s\n", ap.Reason)
	}
	if ap.UsedBy != "" {
		fmt.Fprintf(&b, "  used by:      %s at %s\n", ap.UsedBy, ap.UsedAt.UTC().Format(time.RFC3339))
	}
	in, err := json.MarshalIndent(ap.Input, "  ", "  ")
	if err != nil {
		in = ap.Input
	}
	fmt.Fprintf(&b, "  input (sha256 %s):\n  %s", ap.InputSHA256, in)
	return b.String()
}

func listText(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

func (a *app) approvalsShowCommand() *cobra.Command {
	var sf stateFlags
	c := &cobra.Command{
		Use:     "show APPROVAL_ID",
		Example: "  palyra approvals show apr_0123456789abcdef0123456789abcdef\n  palyra approvals show apr_0123456789abcdef0123456789abcdef -o json",
		Short:   "Show an approval: the call, its input, why, what the skill may reach, its state",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			ap, err := sv.Approval(a.actor(cmd), args[0])
			if err != nil {
				return err
			}
			return a.emit(ap, approvalText(ap))
		},
	}
	sf.register(c, false)
	return c
}

// approvalsDecideCommand is approvals approve (approve) or deny.
func (a *app) approvalsDecideCommand(approve bool) *cobra.Command {
	var (
		sf     stateFlags
		reason string
	)
	verb, example, short := "deny", "  palyra approvals deny apr_0123456789abcdef0123456789abcdef --reason \"not during the freeze\"", "Deny a pending approval (the call fails approval_denied with the reason)"
	if approve {
		verb, example, short = "approve", "  palyra approvals approve apr_0123456789abcdef0123456789abcdef --reason \"expected payout\" --principal alice", "Approve a pending approval (the waiting call then runs once)"
	}
	c := &cobra.Command{
		Use:     verb + " APPROVAL_ID --reason R",
		Example: example,
		Short:   short,
		Long: short + ". The principal (--principal) and the reason are journaled. An approval no longer pending is refused: " +
			"approval_expired when its time ran out, approval_already_decided when it was decided.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			ap, err := sv.DecideApproval(a.actor(cmd), host.DecideRequest{ID: args[0], Approve: approve, Reason: reason})
			if err != nil {
				return err
			}
			return a.emit(ap, fmt.Sprintf("approval %s %s by %s: %s %s tool %s", ap.ID, ap.State, ap.DecidedBy, ap.SkillID, ap.Version, ap.ToolID))
		},
	}
	sf.register(c, false)
	if approve {
		c.Flags().StringVar(&reason, "reason", "", "why, journaled with the decision")
	} else {
		c.Flags().StringVar(&reason, "reason", "", "why, journaled with the decision and given to the caller (required)")
		requireFlags(c, "reason")
	}
	return c
}

// pendingReport is the -o json|yaml report of skills run --no-wait when
// the call waits for approval.
type pendingReport struct {
	SkillID string                `json:"skill_id"`
	ToolID  string                `json:"tool_id"`
	Pending *host.PendingApproval `json:"pending"`
}

// awaitApproval waits until approval id is no longer pending (polling
// it), ctx ends or wait (when positive) has passed, printing one line on
// stderr as it starts.
func (a *app) awaitApproval(ctx context.Context, sv host.Service, pa *host.PendingApproval, wait time.Duration) error {
	fmt.Fprintf(a.stderr, "waiting for approval %s… (%s; expires %s; palyra approvals approve %s)\n",
		pa.ID, host.ReasonsText(pa.Reasons), pa.ExpiresAt.UTC().Format(time.RFC3339), pa.ID)
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	delay := approvalPollMin
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: approval %s is still pending: %v (run again with --approval %s once it is approved)", host.ErrApprovalPending, pa.ID, ctx.Err(), pa.ID)
		case <-t.C:
		}
		ap, err := sv.Approval(ctx, pa.ID)
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			return err
		}
		if ap.State != host.ApprovalPending {
			return nil
		}
		delay = min(2*delay, approvalPollMax)
		t.Reset(delay)
	}
}
