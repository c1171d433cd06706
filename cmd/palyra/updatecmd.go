package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/inventory"
)

func (a *app) outdatedCommand() *cobra.Command {
	var (
		sf        stateFlags
		allowTOFU bool
	)
	c := &cobra.Command{
		Use:     "outdated [SKILL_ID]",
		Example: "  palyra skills outdated\n  palyra skills outdated acme.echo -o json",
		Short:   "List installed skills whose registry has a newer version",
		Long: "outdated reads the source each installed skill came from (the signed registry index or the OCI repository recorded at install) and lists the skills with a newer version there. " +
			"Skills installed from a file are not listed. A source that cannot be read is reported on its skill's line, with its error code. Nothing is changed.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, append([]string{"registry-ca-cert", "plain-http"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			defer sv.Close()
			req := host.OutdatedRequest{AllowTOFU: allowTOFU}
			if len(args) == 1 {
				req.SkillID = args[0]
			}
			rep, err := sv.Outdated(cmd.Context(), req)
			if err != nil {
				return err
			}
			return a.emit(rep, outdatedText(rep, a.wide()))
		},
	}
	c.Flags().BoolVar(&allowTOFU, "allow-tofu", false, "pin a registry index's unknown key on first use")
	sf.register(c, false)
	sf.sources.register(c)
	return c
}

// outdatedText is the text of skills outdated: one row per skill with a
// registry source, its current and newest versions and where it looked;
// a source that cannot be read says so in NOTE (-o wide: the message).
func outdatedText(rep *host.OutdatedReport, wide bool) string {
	if len(rep.Skills) == 0 {
		return "No installed skill has a registry source."
	}
	t := output.NewTable(output.Column{Header: "skill"}, output.Column{Header: "current"}, output.Column{Header: "latest"},
		output.Column{Header: "state"}, output.Column{Header: "source"}, output.Column{Header: "error", Wide: true})
	n := 0
	for _, s := range rep.Skills {
		src := string(s.Source.Kind) + " " + s.Source.Ref
		switch {
		case s.Error != "":
			t.Row(s.SkillID, s.CurrentVersion, "-", "source unreadable ("+s.Code+")", src, s.Error)
		case s.Outdated:
			n++
			t.Row(s.SkillID, s.CurrentVersion, s.LatestVersion, "outdated", src, "")
		default:
			t.Row(s.SkillID, s.CurrentVersion, s.LatestVersion, "newest", src, "")
		}
	}
	return t.String(wide) + fmt.Sprintf("%d checked, %d outdated", len(rep.Skills), n)
}

// updateReport is the JSON of skills update: one result per skill.
type updateReport struct {
	Results []*host.UpdateResult `json:"results"`
}

func (a *app) updateCommand() *cobra.Command {
	var (
		sf                        stateFlags
		version                   string
		dryRun, accept, allowTOFU bool
	)
	c := &cobra.Command{
		Use:     "update [SKILL_ID] [--version V] [--dry-run] [--accept-capabilities]",
		Example: "  # what would change\n  palyra skills update --dry-run\n\n  # one skill to a given version\n  palyra skills update acme.echo --version 1.2.0",
		Short:   "Install the newer version of a skill from its registry, showing the capability diff first",
		Long: "update fetches the newest version (or --version) of a skill from the source it was installed from, and shows the version change and what the new version would be granted beyond the current one (new hosts, secrets, storage prefixes, channels, higher quotas) before anything changes. " +
			"--dry-run stops there. An escalation is refused unless --accept-capabilities, as with install. The bytes shown are the bytes installed: the artifact is fetched once.\n\n" +
			"Without SKILL_ID every outdated skill is updated, one after the other; the first failure stops the command.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, append([]string{"registry-ca-cert", "plain-http"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			defer sv.Close()
			ctx := cmd.Context()
			if cmd.Flags().Changed("principal") {
				ctx = a.actor(cmd)
			}
			var ids, lines []string
			if len(args) == 1 {
				ids = args
			} else {
				if version != "" {
					return fmt.Errorf("%w: --version needs the skill id", errUsage)
				}
				rep, err := sv.Outdated(ctx, host.OutdatedRequest{AllowTOFU: allowTOFU})
				if err != nil {
					return err
				}
				for _, s := range rep.Skills {
					switch {
					case s.Error != "":
						// Not known to be current: said, not hidden.
						lines = append(lines, fmt.Sprintf("skills.update skill_id=%s skipped: source unreadable (%s): %s", s.SkillID, s.Code, s.Error))
					case s.Outdated:
						ids = append(ids, s.SkillID)
					}
				}
			}
			out := updateReport{Results: []*host.UpdateResult{}}
			for _, id := range ids {
				res, err := sv.Update(ctx, host.UpdateRequest{SkillID: id, Version: version, DryRun: dryRun, AcceptCapabilities: accept, AllowTOFU: allowTOFU})
				if res != nil {
					out.Results = append(out.Results, res)
					lines = append(lines, updateText(res, err))
				}
				if err != nil {
					if !a.structured() && len(lines) > 0 {
						if perr := a.emit(nil, strings.Join(lines, "\n")); perr != nil {
							return perr
						}
					}
					return &detailedError{err: err, details: out}
				}
			}
			if len(ids) == 0 && len(lines) == 0 {
				lines = append(lines, "skills.update nothing to update: every skill with a registry source is at its newest version")
			}
			return a.emit(out, strings.Join(lines, "\n"))
		},
	}
	f := c.Flags()
	f.StringVar(&version, "version", "", "version to update to (default: the newest at the skill's source)")
	f.BoolVar(&dryRun, "dry-run", false, "show the version change and the capability diff, change nothing")
	f.BoolVar(&accept, "accept-capabilities", false, "accept a new version that is granted more than the current one")
	f.BoolVar(&allowTOFU, "allow-tofu", false, "pin an unknown key (of the registry index or the artifact) on first use")
	sf.register(c, true)
	sf.sources.register(c)
	// Installs precompile new modules when a sidecar binary is at hand.
	sf.sidecarUse = sidecarIfFound
	return c
}

func updateText(r *host.UpdateResult, err error) string {
	var b strings.Builder
	switch {
	case r.Reason != "":
		b.WriteString("skills.update " + output.KV("skill_id", r.SkillID, "version", r.FromVersion, "updated", false, "reason", r.Reason))
	default:
		fmt.Fprintf(&b, "skills.update skill_id=%s %s -> %s updated=%t dry_run=%t", r.SkillID, r.FromVersion, r.ToVersion, r.Updated, r.DryRun)
		if r.Source.Ref != "" {
			fmt.Fprintf(&b, " source=%s", r.Source.Ref)
		}
	}
	for _, l := range r.CapabilityDiff {
		fmt.Fprintf(&b, "\n  capability_diff=%s", l)
	}
	switch {
	case r.Install != nil && r.Install.HeldBack != nil:
		fmt.Fprintf(&b, "\n  held_back=%s (%s stays current)", r.Install.HeldBack.Code, r.FromVersion)
	case r.DryRun && r.Install != nil && r.Install.Status == inventory.StatusQuarantined:
		fmt.Fprintf(&b, "\n  would be held back (%s stays current): %s", r.FromVersion, strings.Join(r.Install.Reasons, "; "))
	}
	if err != nil && len(r.CapabilityDiff) > 0 && !r.Updated {
		fmt.Fprintf(&b, "\n  the new version is granted more than %s: rerun with --accept-capabilities to take it", r.FromVersion)
	}
	return b.String()
}
