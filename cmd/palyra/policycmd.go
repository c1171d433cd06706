package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"
)

// resolveProfile returns the operator profile (policy.Resolve); a file
// that cannot be read is errIO, an invalid one keeps its own code.
func resolveProfile(state, file string) (prof *policy.Profile, source string, err error) {
	prof, source, err = policy.Resolve(state, file)
	if err != nil && !errors.Is(err, policy.ErrInvalidProfile) {
		return nil, "", fmt.Errorf("%w: %v", errIO, err)
	}
	return prof, source, err
}

// profileMap renders a profile as its TOML keys (snake_case), for JSON.
func profileMap(p *policy.Profile) (map[string]any, []byte, error) {
	data, err := p.Marshal()
	if err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := toml.Unmarshal(data, &m); err != nil {
		return nil, nil, err
	}
	return m, data, nil
}

func (a *app) policyCommand() *cobra.Command {
	return group("policy", "Show, check and set the operator capability profile",
		a.policyShowCommand(), a.policyCheckCommand(), a.policySetCommand())
}

func (a *app) policySetCommand() *cobra.Command {
	var (
		file string
		sf   stateFlags
	)
	c := &cobra.Command{
		Use:     "set --profile FILE",
		Example: "  palyra policy set --profile strict.toml",
		Short:   "Replace the operator profile, live (through the daemon with --url; in a cluster, on every node)",
		Long: "set validates the profile, writes it to the policy file (<state>/policy.toml, or the daemon's --policy) and makes it the profile the next install, enable, re-audit and call are judged by. " +
			"It quarantines nothing by itself: an active skill the new profile no longer allows is refused at its next call and quarantined by the next re-audit.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readSmallFile(file, policy.MaxProfileBytes)
			if err != nil {
				return err
			}
			sv, err := a.service(cmd, &sf, "trust-store")
			if err != nil {
				return err
			}
			defer sv.Close()
			res, err := sv.SetPolicy(a.actor(cmd), host.SetPolicyRequest{Profile: data})
			if err != nil {
				return err
			}
			return a.emit(res, "policy.set "+output.KV("path", res.Path, "sha256", res.SHA256))
		},
	}
	c.Flags().StringVar(&file, "profile", "", "the new profile (TOML, as policy.toml)")
	sf.register(c, false)
	requireFlags(c, "profile")
	return c
}

// profileHeader is the TOML comment policy show puts above the profile:
// where it came from.
func profileHeader(source string) string {
	if source == "default" {
		return "# operator profile: the built-in default\n"
	}
	return "# operator profile from " + source + "\n"
}

// policyShowReport is the result of policy show.
type policyShowReport struct {
	Source  string         `json:"source"`
	Profile map[string]any `json:"profile"`
}

func (a *app) policyShowCommand() *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:     "show [--profile FILE]",
		Example: "  palyra policy show\n  palyra policy show -o yaml",
		Short:   "Print the effective operator profile, every key written out",
		Long: "show prints the profile installs, enables and re-audits are judged by: --profile FILE, else <state>/policy.toml when it exists, else the built-in default profile. " +
			"The text output is the profile as TOML (a file policy set --profile takes), headed by a comment naming where it came from; -o json|yaml gives {source, profile}.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			state, err := cliconfig.StateDir(a.stateDir)
			if err != nil {
				return err
			}
			if file == "" {
				// The profile is the state directory's: one that does not
				// exist is refused rather than shown as the default.
				if _, err := cliconfig.ExistingLayout(a.stateDir); err != nil {
					return err
				}
			}
			prof, source, err := resolveProfile(state, file)
			if err != nil {
				return err
			}
			m, data, err := profileMap(prof)
			if err != nil {
				return err
			}
			return a.emit(policyShowReport{Source: source, Profile: m}, profileHeader(source)+string(data))
		},
	}
	c.Flags().StringVar(&file, "profile", "", "profile file (default <state>/policy.toml, else the built-in default)")
	return c
}

// policyCheckReport is the result of policy check.
type policyCheckReport struct {
	Profile       string             `json:"profile"`
	Valid         bool               `json:"valid"`
	SkillsChecked int                `json:"skills_checked"`
	Violating     int                `json:"violating"`
	Skills        []policySkillCheck `json:"skills"`
}

type policySkillCheck struct {
	SkillID string   `json:"skill_id"`
	Version string   `json:"version"`
	Allowed bool     `json:"allowed"`
	Reasons []string `json:"reasons"`
}

func (a *app) policyCheckCommand() *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:     "check --profile FILE",
		Example: "  # which installed skills a new profile would block\n  palyra policy check --profile strict.toml",
		Short:   "Validate a profile file and show which installed skills it would refuse",
		Long: "check parses and validates the profile (a bad file fails with invalid_policy_profile, naming the key), " +
			"then evaluates every installed version's manifest against it: the violations listed are what a re-audit under this profile would quarantine. " +
			"It changes nothing.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			prof, err := policy.Load(file)
			if err != nil {
				if errors.Is(err, policy.ErrInvalidProfile) {
					return err
				}
				return fmt.Errorf("%w: %v", errIO, err)
			}
			r := policyCheckReport{Profile: file, Valid: true, Skills: []policySkillCheck{}}
			state, err := cliconfig.StateDir(a.stateDir)
			if err != nil {
				return err
			}
			if r.Skills, err = evaluateInstalled(cmd.Context(), state, prof); err != nil {
				return err
			}
			t := output.NewTable(output.Column{Header: "skill"}, output.Column{Header: "version"}, output.Column{Header: "allowed"})
			var why []string
			for _, s := range r.Skills {
				r.SkillsChecked++
				if !s.Allowed {
					r.Violating++
				}
				t.Row(s.SkillID, s.Version, s.Allowed)
				for _, reason := range s.Reasons {
					why = append(why, s.SkillID+" "+s.Version+": "+reason)
				}
			}
			text := fmt.Sprintf("%s is valid; %d installed version(s) checked, %d would be refused\n", output.Quote(file), r.SkillsChecked, r.Violating)
			if t.Len() > 0 {
				text += t.String(a.wide())
			}
			if len(why) > 0 {
				text += "Violations:\n  " + strings.Join(why, "\n  ")
			}
			return a.emit(r, text)
		},
	}
	c.Flags().StringVar(&file, "profile", "", "profile file to check")
	requireFlags(c, "profile")
	return c
}

// evaluateInstalled evaluates every installed version against prof. It
// opens the state directory read-only: checking a profile changes nothing.
func evaluateInstalled(ctx context.Context, state string, prof *policy.Profile) ([]policySkillCheck, error) {
	in, err := install.OpenReadOnly(ctx, install.Config{StateDir: state, Policy: prof})
	if err != nil {
		return nil, err
	}
	defer in.Close()
	entries, err := in.Entries(ctx, inventory.Filter{})
	if err != nil {
		return nil, err
	}
	out := []policySkillCheck{}
	for _, e := range entries {
		c := policySkillCheck{SkillID: e.SkillID, Version: e.Version, Reasons: []string{}}
		m, err := decodeRecordedManifest(e.Manifest)
		if err != nil {
			return nil, err
		}
		d, err := prof.Evaluate(m)
		if err != nil {
			return nil, err
		}
		c.Allowed = d.Allowed()
		c.Reasons = append(c.Reasons, d.Reasons()...)
		out = append(out, c)
	}
	return out, nil
}
