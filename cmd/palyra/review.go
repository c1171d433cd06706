package main

import (
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/spf13/cobra"
)

// reviewCommand is skills review: the versions installed from dynamic tool
// builder output awaiting review, and their approval.
func (a *app) reviewCommand() *cobra.Command {
	c := group("review", "List and approve builder output awaiting review", a.reviewListCommand(), a.reviewApproveCommand())
	c.Example = "  palyra skills review list\n  palyra skills review approve acme.generated --version 0.1.0 --reason \"checklist read, harness passes\""
	c.Long = "A skill version whose manifest is dynamic tool builder output ([builder]) with a review_status other than approved or signed " +
		"(for example \"pending\") installs quarantined with review_pending, and skills enable refuses it (review_pending), even with --override. " +
		"skills review approve records who approved it and why in the journal (skill.review_approved), lifts the review hold, and enables the version " +
		"after the checks of skills enable (verify, audit, policy). An upgrade to such a version is held back: the active version keeps serving until the approval."
	return c
}

// reviewReport is the JSON of skills review list: the versions awaiting
// review (skills list's entries).
type reviewReport struct {
	Count   int                 `json:"count"`
	Entries []host.SkillListing `json:"entries"`
}

func (a *app) reviewListCommand() *cobra.Command {
	sf := stateFlags{readOnly: true}
	c := &cobra.Command{
		Use:     "list",
		Example: "  palyra skills review list\n  palyra skills review list -o json",
		Short:   "List the installed versions awaiting review",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			sl, err := sv.List(cmd.Context(), host.ListRequest{})
			if err != nil {
				return err
			}
			r := reviewReport{Entries: []host.SkillListing{}}
			for _, l := range sl.Entries {
				if l.ReviewPending {
					r.Entries = append(r.Entries, l)
				}
			}
			r.Count = len(r.Entries)
			text := "No skill version awaits review."
			if r.Count > 0 {
				text = reviewTable(r.Entries, a.wide())
			}
			return a.emit(r, text)
		},
	}
	sf.register(c, false)
	return c
}

// reviewTable is the table of skills review list.
func reviewTable(entries []host.SkillListing, wide bool) string {
	t := output.NewTable(
		output.Column{Header: "skill"}, output.Column{Header: "version"}, output.Column{Header: "publisher"},
		output.Column{Header: "current"}, output.Column{Header: "status"}, output.Column{Header: "held_back"},
		output.Column{Header: "installed", Wide: true}, output.Column{Header: "reason", Wide: true},
	)
	for _, l := range entries {
		current, held := "", ""
		if l.Current {
			current = "*"
		}
		if l.HeldBack != nil {
			held = l.HeldBack.Code
		}
		t.Row(l.SkillID, l.Version, l.Publisher, dashIfEmpty(current), l.Status, dashIfEmpty(held),
			msTime(l.InstalledAtMS), l.RuntimeStatus.Reason)
	}
	return t.String(wide)
}

func (a *app) reviewApproveCommand() *cobra.Command {
	var sfl statusFlags
	c := &cobra.Command{
		Use:     "approve SKILL_ID --reason R [--version V]",
		Example: "  palyra skills review approve acme.generated --reason \"checklist read, harness passes\"\n  palyra skills review approve acme.generated --version 0.2.0 --reason \"reviewed the diff\" --principal alice",
		Short:   "Approve a version awaiting review, then enable it after its checks",
		Long: "approve journals skill.review_approved with the principal and --reason (required), lifts the review hold, and enables the version " +
			"with the checks of skills enable (verify, audit, policy). If a check fails, the approval stands, the version stays quarantined, and the " +
			"command fails with that check's code (fix it, then skills enable --override). A version not awaiting review is review_not_pending. " +
			"A held-back upgrade becomes current once approved.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sfl.sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			r, err := sv.ApproveReview(a.actor(cmd), host.ReviewRequest{SkillID: args[0], Version: sfl.version, Reason: sfl.reason})
			if err != nil {
				return err
			}
			return a.emit(r, statusText("skill.review_approved", r))
		},
	}
	sfl.register(c, true)
	requireFlags(c, "reason")
	return c
}
