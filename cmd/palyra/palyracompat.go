package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/inventory"
)

// Palyra's command lines (docs/palyra-compat.md). Every verb and flag of
// Palyra's `palyra skills` CLI is taken here with Palyra's meaning, or
// refused with a usage error that says what to use instead. The flags that
// are Palyra's spelling of one of ours are hidden aliases, so --help shows
// each option once; docs/palyra-compat.md lists them all.

// palyraFlags are the state of the hidden Palyra flags of one invocation.
type palyraFlags struct {
	// skillsDir is --skills-dir, on every skills verb.
	skillsDir string
	// nonInteractive is --non-interactive (root, persistent): no command
	// prompts; one that would fails instead.
	nonInteractive bool
}

// palyraSkillsDirHelp says how --skills-dir maps to a state directory.
const palyraSkillsDirHelp = "Palyra's skills root; here: a directory named skills is <state-dir>/skills (its parent is the state directory), any other directory is used as the state directory"

// installPalyraRootFlags adds the hidden --non-interactive to root.
func (a *app) installPalyraRootFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.BoolVar(&a.palyra.nonInteractive, "non-interactive", false, "never prompt: a command that would ask fails instead (Palyra's flag)")
	hide(f, "non-interactive")
}

// installPalyraSkillsFlags adds Palyra's flags to the skills group c and
// its verbs, and the hook that applies --skills-dir.
func (a *app) installPalyraSkillsFlags(c *cobra.Command) {
	pf := c.PersistentFlags()
	pf.StringVar(&a.palyra.skillsDir, "skills-dir", "", palyraSkillsDirHelp)
	hide(pf, "skills-dir")
	c.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return a.applySkillsDir(cmd) }

	for _, sub := range c.Commands() {
		switch sub.Name() {
		case "install":
			alias(sub, "allow-untrusted", "allow-tofu")
			alias(sub, "skill-id", "skill")
		case "update":
			alias(sub, "allow-untrusted", "allow-tofu")
			a.palyraTrustedPublisher(sub)
			a.palyraUpdate(sub)
		case "audit":
			// With --artifact it is --allow-tofu; for installed versions
			// see palyraUntrusted.
			alias(sub, "allow-untrusted", "allow-tofu")
			a.palyraTrustedPublisher(sub)
			palyraUntrusted(sub, "allow-untrusted")
		case "check", "verify":
			sub.Flags().Bool("allow-untrusted", false, "Palyra's flag: accepted; an installed version is re-verified without trust on first use")
			hide(sub.Flags(), "allow-untrusted")
			a.palyraTrustedPublisher(sub)
			palyraUntrusted(sub, "allow-untrusted")
		case "quarantine", "enable":
			palyraRefused(sub, []refusedFlag{
				{"device-id", "palyra-go has no device context: who acts is --principal alone (recorded with the change and sent to a daemon as x-palyra-principal); drop --device-id"},
				{"channel", "palyra-go has no channel context for operator verbs: who acts is --principal alone; drop --channel"},
			})
		}
	}
}

// hide marks name hidden in f (it exists: a programming error otherwise).
func hide(f *pflag.FlagSet, name string) {
	if err := f.MarkHidden(name); err != nil {
		panic(err)
	}
}

// alias adds the hidden flag name to c, sharing the value of c's flag
// target: Palyra's spelling of the same option.
func alias(c *cobra.Command, name, target string) {
	t := c.Flags().Lookup(target)
	if t == nil {
		panic("palyra alias " + name + ": " + c.Name() + " has no --" + target)
	}
	f := c.Flags().VarPF(t.Value, name, "", "Palyra's name of --"+target)
	f.NoOptDefVal = t.NoOptDefVal
	f.Hidden = true
}

// wrap runs pre before c's RunE and post on its error.
func wrap(c *cobra.Command, pre func(cmd *cobra.Command, args []string) ([]string, error), post func(cmd *cobra.Command, err error) error) {
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if pre != nil {
			var err error
			if args, err = pre(cmd, args); err != nil {
				return err
			}
		}
		err := run(cmd, args)
		if post != nil && err != nil {
			return post(cmd, err)
		}
		return err
	}
}

// refusedFlag is a Palyra flag with no counterpart here, and why.
type refusedFlag struct{ name, why string }

// palyraRefused adds the hidden string flags of refused to c; giving any
// of them is a usage error that names each one given, why it is refused
// and what to use instead.
func palyraRefused(c *cobra.Command, refused []refusedFlag) {
	for _, r := range refused {
		c.Flags().String(r.name, "", "Palyra's flag, refused: "+r.why)
		hide(c.Flags(), r.name)
	}
	wrap(c, func(cmd *cobra.Command, args []string) ([]string, error) {
		var msgs []string
		for _, r := range refused {
			if cmd.Flags().Changed(r.name) {
				msgs = append(msgs, "--"+r.name+" is Palyra's flag and has no counterpart here: "+r.why)
			}
		}
		if len(msgs) > 0 {
			return nil, fmt.Errorf("%w: %s: %s", errUsage, cmd.CommandPath(), strings.Join(msgs, "; "))
		}
		return args, nil
	}, nil)
}

// palyraUntrusted explains an untrusted_publisher failure of a verb given
// Palyra's --allow-untrusted (flag) on an installed version: Palyra would
// pin the unknown key; here re-verification never trusts on first use.
func palyraUntrusted(c *cobra.Command, flag string) {
	wrap(c, nil, func(cmd *cobra.Command, err error) error {
		if !cmd.Flags().Changed(flag) || errcode.Of(err) != "untrusted_publisher" {
			return err
		}
		if art := cmd.Flags().Lookup("artifact"); art != nil && art.Changed {
			return err
		}
		return fmt.Errorf("%w (--allow-untrusted: an installed version is re-verified without trust on first use, so its publisher's key must already be in the trust store; "+
			"allowlist it with --trusted-publisher PUB=HEX, or pin it with palyra skills package verify --artifact FILE --allow-tofu)", err)
	})
}

// palyraTrustedPublisher adds Palyra's --trusted-publisher PUB=HEX to a
// verb that re-verifies installed versions (check, verify, audit,
// update): the keys are allowlisted in the trust store (persisted, as
// Palyra does) before the verb runs. Local only: a daemon decides trust
// with its own store.
func (a *app) palyraTrustedPublisher(c *cobra.Command) {
	var trusted []string
	c.Flags().StringArrayVar(&trusted, "trusted-publisher", nil, "allowlist PUBLISHER=PUBLIC_KEY_HEX in the trust store before the verb (repeatable; persisted; local only)")
	hide(c.Flags(), "trusted-publisher")
	wrap(c, func(cmd *cobra.Command, args []string) ([]string, error) {
		if len(trusted) == 0 {
			return args, nil
		}
		if err := a.refuseLocalOnly(cmd, "trusted-publisher"); err != nil {
			return nil, err
		}
		ts, _ := cmd.Flags().GetString("trust-store")
		if _, _, err := a.openTrust(cmd, &trustFlags{trustStore: ts, trusted: trusted}); err != nil {
			return nil, err
		}
		return args, nil
	}, nil)
}

// palyraUpdate takes Palyra's update command line, `update --skill-id ID
// (--registry-dir D | --registry-url U) [--version V]`: --skill-id is the
// SKILL_ID argument, and the registry named must be the one the skill was
// installed from (update here always fetches from the recorded source);
// another is refused, naming the recorded source and the install command
// that takes the skill from the registry named.
func (a *app) palyraUpdate(c *cobra.Command) {
	var skillID, registryDir, registryURL string
	f := c.Flags()
	f.StringVar(&skillID, "skill-id", "", "Palyra's spelling of the SKILL_ID argument")
	f.StringVar(&registryDir, "registry-dir", "", "Palyra's flag: the local registry the skill was installed from")
	f.StringVar(&registryURL, "registry-url", "", "Palyra's flag: the registry URL the skill was installed from")
	for _, n := range []string{"skill-id", "registry-dir", "registry-url"} {
		hide(f, n)
	}
	wrap(c, func(cmd *cobra.Command, args []string) ([]string, error) {
		if skillID != "" {
			if len(args) > 0 && args[0] != skillID {
				return nil, fmt.Errorf("%w: give the skill as SKILL_ID or --skill-id, not both", errUsage)
			}
			args = []string{skillID}
		}
		if registryDir == "" && registryURL == "" {
			return args, nil
		}
		if registryDir != "" && registryURL != "" {
			return nil, fmt.Errorf("%w: give one of --registry-dir and --registry-url", errUsage)
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("%w: --registry-dir and --registry-url need the skill (--skill-id or SKILL_ID)", errUsage)
		}
		return args, a.checkUpdateSource(cmd, args[0], registryDir, registryURL)
	}, nil)
}

// checkUpdateSource checks that skillID's current version was installed
// from the registry Palyra's update names (dir or url).
func (a *app) checkUpdateSource(cmd *cobra.Command, skillID, dir, url string) error {
	ts, _ := cmd.Flags().GetString("trust-store")
	sv, err := a.service(cmd, &stateFlags{trustStore: ts}, stateLocalFlags...)
	if err != nil {
		return err
	}
	defer sv.Close()
	info, err := sv.Info(cmd.Context(), host.SkillRef{SkillID: skillID})
	if err != nil {
		return err
	}
	src := info.Inventory.Source
	named, want := "--registry-url "+url, inventory.SourceRemoteRegistry
	same := src.Kind == want && sameRegistryURL(src.Ref, url)
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("%w: %v", errIO, err)
		}
		named, want = "--registry-dir "+dir, inventory.SourceLocalRegistry
		same = src.Kind == want && filepath.Clean(src.Ref) == abs
	}
	if same {
		return nil
	}
	kind := src.Kind
	if kind == "" {
		kind = inventory.SourceLocalArtifact
	}
	return fmt.Errorf("%w: %s %s was installed from %s %q, not from %s: update takes new versions from the source a skill was installed from; "+
		"to take it from %s instead, install it from there (palyra skills install %s --skill %s)",
		errUsage, skillID, info.Inventory.Version, kind, src.Ref, named, named, named, skillID)
}

// sameRegistryURL compares registry URLs as Palyra's CLI takes them: the
// index URL or its directory.
func sameRegistryURL(recorded, given string) bool {
	norm := func(s string) string {
		s = strings.TrimSuffix(strings.TrimSpace(s), "/")
		return strings.TrimSuffix(s, "/index.json")
	}
	return norm(recorded) == norm(given)
}

// applySkillsDir applies --skills-dir: the state directory becomes the
// one whose skills directory it is (a directory named skills: its parent),
// else the directory itself. It must agree with --state-dir when both are
// given, it is local only, and a directory that holds Palyra's own
// installed-index.json is refused (palyra-go does not share Palyra's
// files). A missing directory is created empty, as Palyra reads a missing
// skills root as an empty one.
func (a *app) applySkillsDir(cmd *cobra.Command) error {
	if a.palyra.skillsDir == "" {
		return nil
	}
	if a.daemonURL() != "" {
		return fmt.Errorf("%w: --skills-dir is local-only and cannot be used with a daemon (--url or $%s): the daemon keeps skills in its own state directory",
			errUsage, client.EnvURL)
	}
	d, err := filepath.Abs(a.palyra.skillsDir)
	if err != nil {
		return fmt.Errorf("%w: --skills-dir: %v", errUsage, err)
	}
	state := d
	if filepath.Base(d) == "skills" {
		state = filepath.Dir(d)
	}
	if a.stateDir != "" {
		given, err := filepath.Abs(a.stateDir)
		if err != nil {
			return fmt.Errorf("%w: --state-dir: %v", errUsage, err)
		}
		if given != state {
			return fmt.Errorf("%w: --skills-dir %s means state directory %s, but --state-dir is %s: give one of them", errUsage, a.palyra.skillsDir, state, given)
		}
	}
	for _, p := range []string{filepath.Join(d, "installed-index.json"), filepath.Join(state, "skills", "installed-index.json")} {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%w: --skills-dir %s holds Palyra's own installed-index.json (%s): palyra-go keeps its skills in a state directory of its own and does not read or share Palyra's; "+
				"give another --skills-dir (or --state-dir) and install the artifacts there", errUsage, a.palyra.skillsDir, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: --skills-dir: %v", errIO, err)
		}
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return fmt.Errorf("%w: --skills-dir: %v", errIO, err)
	}
	a.stateDir = state
	return nil
}

// nonInteractiveErr is the refusal of a prompt under --non-interactive.
func nonInteractiveErr(what, instead string) error {
	return fmt.Errorf("%w: %s asks for confirmation and --non-interactive forbids prompting: %s", errUsage, what, instead)
}
