package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/manifest"
)

// Shell completion (`palyra completion bash|zsh|fish|powershell`) offers,
// from the state directory (or the daemon with --url), the installed skill
// ids where a command takes SKILL_ID, the skill's installed versions for
// --version, its tools for skills run's TOOL_ID and hooks bind --tool, and
// the hook ids for the hook verbs. Completion only reads: it opens the
// host read-only, creates nothing, and offers nothing when it cannot read.

// wireCompletion sets the completion functions on the commands of the tree
// rooted at c, by what their usage line says they take.
func (a *app) wireCompletion(c *cobra.Command) {
	for _, sub := range c.Commands() {
		a.wireCompletion(sub)
	}
	fields := strings.Fields(c.Use)
	if len(fields) < 2 || c.ValidArgsFunction != nil {
		return
	}
	first := strings.Trim(fields[1], "[]")
	switch {
	case c.CommandPath() == "palyra skills run":
		c.ValidArgsFunction = a.completeSkillThenTool
	case first == "SKILL_ID":
		c.ValidArgsFunction = a.completeSkillArg
	case first == "HOOK_ID" && fields[0] != "bind":
		c.ValidArgsFunction = a.completeHookArg
	}
	if c.ValidArgsFunction != nil && c.Flags().Lookup("version") != nil {
		_ = c.RegisterFlagCompletionFunc("version", a.completeVersionOfArg)
	}
	if c.CommandPath() == "palyra hooks bind" {
		_ = c.RegisterFlagCompletionFunc("skill", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			return a.skillIDs(cmd, prefix), cobra.ShellCompDirectiveNoFileComp
		})
		_ = c.RegisterFlagCompletionFunc("tool", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			skill, _ := cmd.Flags().GetString("skill")
			return a.toolIDs(cmd, skill, prefix), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// completionService is the service completion reads: read-only, on a
// state directory that must exist; nil when there is none to read.
func (a *app) completionService(cmd *cobra.Command) *service {
	if cmd.Context() == nil {
		cmd.SetContext(context.Background())
	}
	sv, err := a.service(cmd, &stateFlags{readOnly: true})
	if err != nil {
		return nil
	}
	return sv
}

// listings are the installed versions completion sees.
func (a *app) listings(cmd *cobra.Command, req host.ListRequest) []host.SkillListing {
	sv := a.completionService(cmd)
	if sv == nil {
		return nil
	}
	defer sv.Close()
	sl, err := sv.List(cmd.Context(), req)
	if err != nil {
		return nil
	}
	return sl.Entries
}

// skillIDs are the installed skill ids starting with prefix, each once,
// with its name as the description.
func (a *app) skillIDs(cmd *cobra.Command, prefix string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range a.listings(cmd, host.ListRequest{}) {
		if seen[l.SkillID] || !strings.HasPrefix(l.SkillID, prefix) {
			continue
		}
		seen[l.SkillID] = true
		out = append(out, cobra.CompletionWithDesc(l.SkillID, l.SkillName))
	}
	return out
}

func (a *app) completeSkillArg(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.skillIDs(cmd, prefix), cobra.ShellCompDirectiveNoFileComp
}

// completeVersionOfArg completes --version with the installed versions of
// the skill named by the first argument (every installed version without
// one), the current one described as such.
func (a *app) completeVersionOfArg(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	req := host.ListRequest{}
	var out []string
	for _, l := range a.listings(cmd, req) {
		if (len(args) > 0 && l.SkillID != args[0]) || !strings.HasPrefix(l.Version, prefix) || slices.ContainsFunc(out, func(s string) bool { return strings.HasPrefix(s, l.Version+"\t") }) {
			continue
		}
		desc := string(l.Status)
		if l.Current {
			desc = "current, " + desc
		}
		out = append(out, cobra.CompletionWithDesc(l.Version, desc))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// toolIDs are the tools of skill's current version (its --version when the
// command has one set) starting with prefix, described by their
// descriptions.
func (a *app) toolIDs(cmd *cobra.Command, skill, prefix string) []string {
	if skill == "" {
		return nil
	}
	sv := a.completionService(cmd)
	if sv == nil {
		return nil
	}
	defer sv.Close()
	ref := host.SkillRef{SkillID: skill}
	if f := cmd.Flags().Lookup("version"); f != nil {
		ref.Version = f.Value.String()
	}
	info, err := sv.Info(cmd.Context(), ref)
	if err != nil {
		return nil
	}
	m, err := decodeRecordedManifest(info.Manifest)
	if err != nil {
		return nil
	}
	return toolCompletions(m, prefix)
}

func toolCompletions(m *manifest.Manifest, prefix string) []string {
	var out []string
	for _, t := range m.Entrypoints.Tools {
		if strings.HasPrefix(t.ID, prefix) {
			out = append(out, cobra.CompletionWithDesc(t.ID, t.Description))
		}
	}
	return out
}

func (a *app) completeSkillThenTool(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return a.skillIDs(cmd, prefix), cobra.ShellCompDirectiveNoFileComp
	case 1:
		return a.toolIDs(cmd, args[0], prefix), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

func (a *app) completeHookArg(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	sv := a.completionService(cmd)
	if sv == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer sv.Close()
	bs, err := sv.Hooks(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, b := range bs {
		if strings.HasPrefix(b.HookID, prefix) {
			out = append(out, cobra.CompletionWithDesc(b.HookID, b.Event+" → "+b.PluginID))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
