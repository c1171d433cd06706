package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/desired"
)

func (a *app) applyCommand() *cobra.Command {
	return a.applyOrDiff(false)
}

func (a *app) diffCommand() *cobra.Command {
	return a.applyOrDiff(true)
}

// applyOrDiff is palyra apply (dryRun false: --dry-run is a flag) or
// palyra diff (always a dry run).
func (a *app) applyOrDiff(diff bool) *cobra.Command {
	var (
		sf            stateFlags
		file          string
		dryRun, prune bool
	)
	c := &cobra.Command{
		Use:     "apply -f palyra.toml [--dry-run] [--prune]",
		Example: "  # see what would change, then converge\n  palyra diff -f palyra.toml\n  palyra apply -f palyra.toml\n\n  # also remove what the document does not declare\n  palyra apply -f palyra.toml --prune",
		Short:   "Converge the host on a desired-state document: the skills it runs, their versions and accepted capabilities, its hook bindings",
		Long: "apply reads a desired-state document (TOML; the format is in docs/desired-state.md) and converges the host on it: it installs the declared skills from their registries " +
			"(the highest version the constraint allows), updates them when a newer allowed version is published, binds the declared hooks, and with --prune removes skills and hook bindings the document does not declare. " +
			"A version granted more than the document accepts for its skill is refused with the excess (capabilities_not_accepted), and nothing of it changes. " +
			"A second apply of the same document changes nothing and says so. --dry-run (or palyra diff) prints the plan only.\n\n" +
			"With --url the daemon applies the document (it fetches from the registries with its own configuration).",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readSmallFile(file, desired.MaxDocumentBytes)
			if err != nil {
				return err
			}
			sv, err := a.service(cmd, &sf, append([]string{"registry-ca-cert", "plain-http"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			defer sv.Close()
			ctx := cmd.Context()
			if cmd.Flags().Changed("principal") {
				ctx = a.actor(cmd)
			}
			res, err := sv.Apply(ctx, host.ApplyRequest{Document: string(data), DryRun: diff || dryRun, Prune: prune})
			if res == nil {
				return err
			}
			if err != nil {
				if !a.structured() {
					if perr := a.emit(nil, applyText(res)); perr != nil {
						return perr
					}
				}
				return &detailedError{err: err, details: res}
			}
			return a.emit(res, applyText(res))
		},
	}
	if diff {
		c.Use = "diff -f palyra.toml [--prune]"
		c.Short = "Print what palyra apply would change, changing nothing"
		c.Long = "diff is palyra apply --dry-run: the plan (install, update with its capability diff, remove with --prune, hook bindings) of converging the host on the document, with the refusals apply would meet."
	} else {
		c.Flags().BoolVar(&dryRun, "dry-run", false, "print the plan, change nothing (palyra diff)")
	}
	c.Flags().StringVarP(&file, "file", "f", "", "desired-state document (palyra.toml)")
	c.Flags().BoolVar(&prune, "prune", false, "remove installed skills and hook bindings the document does not declare")
	// apply and diff are no group's subcommands: --url, --token and
	// --principal are their own.
	a.registerDaemonFlags(c)
	sf.register(c, true)
	sf.sources.register(c)
	// Installs precompile new modules when a sidecar binary is at hand.
	sf.sidecarUse = sidecarIfFound
	requireFlags(c, "file")
	return c
}

// applyText is one line per step, and a summary.
func applyText(r *host.ApplyResult) string {
	var b strings.Builder
	for _, s := range r.Steps {
		switch s.Action {
		case host.ActionInstall:
			fmt.Fprintf(&b, "+ install %s %s (%s)", s.SkillID, s.ToVersion, s.Source)
		case host.ActionUpdate:
			fmt.Fprintf(&b, "~ update %s %s -> %s (%s)", s.SkillID, s.FromVersion, s.ToVersion, s.Source)
		case host.ActionRemove:
			fmt.Fprintf(&b, "- remove %s %s", s.SkillID, s.FromVersion)
		case host.ActionKeep:
			fmt.Fprintf(&b, "= keep %s %s", s.SkillID, s.FromVersion)
		case host.ActionUnmanaged:
			fmt.Fprintf(&b, "? unmanaged %s %s (not in the document; --prune removes it)", s.SkillID, s.FromVersion)
		case host.ActionBindHook:
			fmt.Fprintf(&b, "+ bind hook %s (%s)", s.HookID, s.SkillID)
		case host.ActionUpdateHook:
			fmt.Fprintf(&b, "~ update hook %s (%s)", s.HookID, s.SkillID)
		case host.ActionRemoveHook:
			fmt.Fprintf(&b, "- remove hook %s (%s)", s.HookID, s.SkillID)
		case host.ActionKeepHook:
			fmt.Fprintf(&b, "= keep hook %s (%s)", s.HookID, s.SkillID)
		default:
			fmt.Fprintf(&b, "%s %s%s", s.Action, s.SkillID, s.HookID)
		}
		for _, l := range s.CapabilityDiff {
			fmt.Fprintf(&b, "\n    %s", l)
		}
		if s.Code != "" {
			fmt.Fprintf(&b, "\n    refused: %s: %s", s.Code, s.Error)
		}
		b.WriteByte('\n')
	}
	failed := 0
	for _, s := range r.Steps {
		if s.Code != "" {
			failed++
		}
	}
	switch {
	case failed > 0 && r.DryRun:
		fmt.Fprintf(&b, "plan only (dry run): nothing was changed; %d step(s) would be refused", failed)
	case failed > 0:
		fmt.Fprintf(&b, "not converged: %d step(s) refused or failed", failed)
	case !r.Changed:
		b.WriteString("no changes: the host is in the desired state")
	case r.DryRun:
		b.WriteString("plan only (dry run): nothing was changed")
	default:
		b.WriteString("applied")
	}
	return b.String()
}
