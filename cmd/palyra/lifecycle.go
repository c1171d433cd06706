package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/spf13/cobra"
)

// lifecycleCommands are the skills verbs that change or read what is
// installed: install, list, info, check, verify, audit, quarantine,
// enable, disable, remove, reaudit.
func (a *app) lifecycleCommands() []*cobra.Command {
	return []*cobra.Command{
		a.installCommand(), a.listCommand(), a.infoCommand(), a.checkCommand(), a.verifyCommand(),
		a.auditCommand(), a.quarantineCommand(), a.enableCommand(), a.disableCommand(),
		a.removeCommand(), a.reauditCommand(), a.outdatedCommand(), a.updateCommand(),
		a.reviewCommand(), a.configCommand(),
	}
}

// detailedError is a failure that also has a result to show: with --json
// the error report carries it as error.details (see reportError), in text
// the command has printed it before failing.
type detailedError struct {
	err     error
	details any
}

func (e *detailedError) Error() string { return e.err.Error() }
func (e *detailedError) Unwrap() error { return e.err }
func (e *detailedError) Details() any  { return e.details }

// stateFlags are the options of every command that works on the state
// directory, and what its local host needs.
type stateFlags struct {
	trustStore string
	profile    string
	// sidecar is --sidecar of the verbs that run tools; sidecarUse says
	// whether the local host needs the binary (see app.service).
	sidecar    string
	sidecarUse sidecarUse
	// readOnly opens the local host read-only: the verb only looks (list,
	// info) and leaves the state dir exactly as it was, or absent.
	readOnly bool
	// mustExist (implied by readOnly) refuses a state directory that does
	// not exist with state_dir_missing, naming the path and what chose it:
	// a verb that only looks would otherwise show a mistyped --state-dir
	// as an empty host.
	mustExist bool
	// sources configures the local host's registry access (the verbs
	// that fetch: outdated, update, apply, install from a source).
	sources sourceFlags
}

func (s *stateFlags) register(c *cobra.Command, judges bool) {
	c.Flags().StringVar(&s.trustStore, "trust-store", "", "trust store file (default $PALYRA_SKILLS_TRUST_STORE, else <state>/skills/trust-store.json)")
	if judges {
		c.Flags().StringVar(&s.profile, "profile", "", "operator profile (default <state>/policy.toml when it exists, else the built-in default)")
	}
}

// resolveState resolves the state directory (--state-dir,
// $PALYRA_STATE_DIR, the per-user default) and the trust store
// (--trust-store, $PALYRA_SKILLS_TRUST_STORE, the state directory's).
func (a *app) resolveState(s *stateFlags) (statedir.Layout, string, error) {
	resolve := cliconfig.Layout
	if s.readOnly || s.mustExist {
		resolve = cliconfig.ExistingLayout
	}
	layout, err := resolve(a.stateDir)
	if err != nil {
		return statedir.Layout{}, "", err
	}
	trustStore, err := cliconfig.TrustStore(layout, s.trustStore)
	if err != nil {
		return statedir.Layout{}, "", err
	}
	return layout, trustStore, nil
}

// installConfig is the install.Config of the state directory, its trust
// store and its profile.
func (a *app) installConfig(s *stateFlags) (install.Config, error) {
	layout, trustStore, err := a.resolveState(s)
	if err != nil {
		return install.Config{}, err
	}
	prof, _, err := resolveProfile(layout.Dir(), s.profile)
	if err != nil {
		return install.Config{}, err
	}
	// The trust store's seal is keyed from the vault, as the host's is:
	// without the key a store sealed with it reads as tampered.
	v, err := a.openVault()
	if err != nil {
		return install.Config{}, err
	}
	return install.Config{StateDir: layout.Dir(), TrustStore: trustStore, Policy: prof, TrustOptions: []trust.Option{trust.WithVault(v)}}, nil
}

// registerSidecar adds --sidecar, for the verbs that run tools: the local
// host then needs the binary.
func (s *stateFlags) registerSidecar(c *cobra.Command, usage string) {
	c.Flags().StringVar(&s.sidecar, "sidecar", "", usage)
	s.sidecarUse = sidecarRequired
}

// openInstaller resolves the state directory, the trust store and the
// profile and opens the installer (which repairs what a crashed operation
// left behind). Only the local-only diagnostics use it (skills check,
// skills audit --artifact): they are no operator verbs of host.Service.
func (a *app) openInstaller(cmd *cobra.Command, s *stateFlags) (*install.Installer, error) {
	cfg, err := a.installConfig(s)
	if err != nil {
		return nil, err
	}
	// Checks report the requested secrets the vault lacks (presence
	// only: no key is needed, no value is read).
	v, err := vault.Open(vault.Config{StateDir: cfg.StateDir})
	if err != nil {
		return nil, err
	}
	cfg.SecretPresent = func(ctx context.Context, scope, key string) (bool, error) {
		return v.Has(ctx, vault.Name{Scope: scope, Key: key})
	}
	return install.Open(cmd.Context(), cfg)
}

// openReader opens the state directory read-only (install.OpenReadOnly),
// for the verbs that only look: they leave it exactly as it was, or absent.
func (a *app) openReader(cmd *cobra.Command, s *stateFlags) (*install.Reader, error) {
	cfg, err := a.installConfig(s)
	if err != nil {
		return nil, err
	}
	return install.OpenReadOnly(cmd.Context(), cfg)
}

// exactArgs and maxArgs are cobra's argument counts, reported as usage
// errors.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%w: %s takes %d argument(s), got %d", errUsage, cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return fmt.Errorf("%w: %s takes at most %d argument(s), got %d", errUsage, cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

func decodeRecordedManifest(raw json.RawMessage) (*manifest.Manifest, error) {
	var m manifest.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("recorded manifest: %w", err)
	}
	return &m, nil
}

// parseTrusted turns --trusted-publisher PUB=HEX values into keys.
func parseTrusted(values []string) ([]install.TrustedKey, error) {
	var out []install.TrustedKey
	for _, tp := range values {
		pub, key, ok := strings.Cut(tp, "=")
		if !ok || pub == "" || key == "" {
			return nil, fmt.Errorf("%w: --trusted-publisher %q: want PUBLISHER=PUBLIC_KEY_HEX", errUsage, tp)
		}
		out = append(out, install.TrustedKey{Publisher: pub, PublicKeyHex: key})
	}
	return out, nil
}

// installReport is the JSON of skills install: the install result plus
// where it went. Through a daemon, which does not say where its state
// lives, skills_root and trust_store are left out.
type installReport struct {
	*install.InstallResult
	SkillsRoot string `json:"skills_root,omitempty"`
	TrustStore string `json:"trust_store,omitempty"`
}

// stateLocalFlags are the options of stateFlags, refused in daemon mode.
var stateLocalFlags = []string{"trust-store", "profile"}

func (a *app) installCommand() *cobra.Command {
	var (
		path                     string
		allowTOFU, force, accept bool
		plainHTTP                bool
		trusted                  []string
		sf                       stateFlags
		from                     installSourceFlags
	)
	c := &cobra.Command{
		Use:     "install (--artifact A | oci://REGISTRY/REPO:TAG|@sha256:HEX [--plain-http] | --registry-url URL --skill ID [--version V] [--registry-ca-cert PEM] | --registry-dir D --skill ID [--version V]) [--allow-tofu] [--trusted-publisher PUB=HEX...] [--force] [--accept-capabilities]",
		Example: "  # a file, pinning an unknown publisher on first use\n  palyra skills install --artifact acme.echo.palyra-skill --allow-tofu\n\n  # from an OCI registry\n  palyra skills install oci://ghcr.io/acme/echo:1.0.0\n\n  # from a signed registry index, the highest version\n  palyra skills install --registry-url https://skills.example.org --skill acme.echo",
		Short:   "Verify, audit and install a skill artifact",
		Long: "install verifies the artifact (signature and publisher trust), audits it, judges it against the operator profile, and installs it into the state directory with its inventory row and status in one transaction.\n\n" +
			"A skill that fails the audit or the profile is still installed, but quarantined, with the reasons recorded: the command prints them and exits non-zero (audit_failed or policy_violation) so that it can be inspected and, once fixed or judged safe, enabled. " +
			"A verification failure installs nothing. Re-installing an installed version needs --force. A new version that would be granted more than the current one (new hosts, secrets, storage, channels, higher quotas) is refused with the capability diff unless --accept-capabilities.\n\n" +
			"Locally the install is recorded as done by system:install unless --principal is given. With --url the artifact is read here and uploaded to the daemon, which installs it with its own trust store (so --trusted-publisher is refused; use --allow-tofu or allowlist the publisher in the daemon's trust store) and records --principal.\n\n" +
			"From an OCI registry: an oci:// reference pulls the artifact (by tag, or by digest: the manifest must hash to it), with the credentials of the docker config file ($DOCKER_CONFIG/config.json, else ~/.docker/config.json); --plain-http speaks HTTP, for a registry on loopback only. " +
			"What is trusted is the artifact's own signature, verified as for a file.\n\n" +
			"From a registry index: --registry-url (https only) or --registry-dir names Palyra's signed index, --skill the skill and --version the version (default: the highest). " +
			"The index's key is judged by the trust store like an artifact's (--allow-tofu pins it); the download's sha256 and the manifest's skill id, version and publisher must be the index entry's; then the install goes on as for a file, recording where the artifact came from. " +
			"With --url the daemon fetches from an oci:// reference or --registry-url itself; a --registry-dir is read here (its key judged by the local trust store) and uploaded.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && (path != "" || from.set()) {
				return fmt.Errorf("%w: give one of --artifact, an oci:// reference and the registry flags", errUsage)
			}
			if plainHTTP && len(args) == 0 {
				return fmt.Errorf("%w: --plain-http applies to an oci:// reference", errUsage)
			}
			sv, err := a.service(cmd, &sf, append([]string{"trusted-publisher"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			defer sv.Close()
			keys, err := parseTrusted(trusted)
			if err != nil {
				return err
			}
			req := host.InstallRequest{AllowTOFU: allowTOFU, Force: force, AcceptCapabilities: accept, TrustedPublishers: keys}
			switch {
			case len(args) == 1:
				// The host fetches it and records the source it came from.
				req.From = &host.SourceRef{OCI: args[0], PlainHTTP: plainHTTP}
			case path != "" && !from.set():
				data, err := readSmallFile(path, artifact.MaxArtifactBytes)
				if err != nil {
					return err
				}
				// A daemon records where it received the artifact instead.
				ref, _ := filepath.Abs(path)
				req.Artifact, req.Source = data, host.InstallSource{Ref: ref}
			default:
				if req.From, err = from.ref(path); err != nil {
					return err
				}
			}
			// An install names its principal only when --principal is
			// given; else it is recorded as system:install locally, and a
			// daemon records the client's principal.
			ctx := cmd.Context()
			if cmd.Flags().Changed("principal") {
				ctx = a.actor(cmd)
			}
			if err := a.fetchForDaemon(ctx, cmd, sv, &req); err != nil {
				return err
			}
			rep := installReport{SkillsRoot: sv.skillsRoot, TrustStore: sv.trustStore}
			var ierr error
			rep.InstallResult, ierr = sv.Install(ctx, req)
			if rep.InstallResult == nil {
				return ierr
			}
			if ierr != nil {
				if !a.structured() {
					if err := a.emit(nil, installText(rep.InstallResult)); err != nil {
						return err
					}
				}
				return &detailedError{err: ierr, details: rep}
			}
			return a.emit(rep, installText(rep.InstallResult))
		},
	}
	f := c.Flags()
	f.StringVar(&path, "artifact", "", ".palyra-skill file")
	f.BoolVar(&allowTOFU, "allow-tofu", false, "pin an unknown publisher's key on first use (saved only if the skill is installed)")
	f.StringArrayVar(&trusted, "trusted-publisher", nil, "allowlist PUBLISHER=PUBLIC_KEY_HEX in the trust store (repeatable; persisted; local only)")
	f.BoolVar(&force, "force", false, "reinstall a version that is already installed")
	f.BoolVar(&accept, "accept-capabilities", false, "accept a new version that is granted more than the current one")
	from.register(c)
	f.BoolVar(&plainHTTP, "plain-http", false, "speak HTTP to the OCI registry (loopback registries only)")
	sf.register(c, true)
	sf.sidecarUse = sidecarIfFound
	return c
}

func installText(r *install.InstallResult) string {
	var b strings.Builder
	if !r.Installed {
		fmt.Fprintf(&b, "skills.install skill_id=%s version=%s installed=false previous_version=%s", r.SkillID, r.Version, r.PreviousVersion)
	} else {
		fmt.Fprintf(&b, "skills.install skill_id=%s version=%s publisher=%s status=%s event_kind=%s current=%t replaced=%t trust_decision=%s artifact_sha256=%s payload_sha256=%s",
			r.SkillID, r.Version, r.Publisher, r.Status, r.EventKind, r.Current, r.Replaced, r.TrustDecision, r.ArtifactSHA256, r.PayloadSHA256)
		if r.PreviousVersion != "" {
			fmt.Fprintf(&b, " previous_version=%s", r.PreviousVersion)
		}
		if r.HeldBack != nil {
			fmt.Fprintf(&b, "\n  held_back=%s (%s stays current; make this version current with: palyra skills enable %s --version %s --override --reason R)",
				r.HeldBack.Code, r.PreviousVersion, r.SkillID, r.Version)
		}
	}
	for _, l := range r.CapabilityDiff {
		fmt.Fprintf(&b, "\n  %s", output.KV("capability_diff", l))
	}
	for _, reason := range r.Reasons {
		fmt.Fprintf(&b, "\n  %s", output.KV("reason", reason))
	}
	for _, s := range r.MissingSecrets {
		fmt.Fprintf(&b, "\n  missing_secret=%s/%s (set it with: palyra secrets set %s/%s)", s.Scope, s.Key, s.Scope, s.Key)
	}
	for _, k := range r.ConfigMissing {
		fmt.Fprintf(&b, "\n  config_missing=%s (set it with: palyra skills config set %s %s=VALUE)", k, r.SkillID, k)
	}
	for _, u := range r.ConfigUnfit {
		fmt.Fprintf(&b, "\n  %s (set it again or unset it: palyra skills config unset %s %s)", output.KV("config_unfit", u.Key+": "+u.Reason), r.SkillID, u.Key)
	}
	return b.String()
}

// listReport is the JSON of skills list (Palyra's shape).
type listReport struct {
	SkillsRoot string            `json:"skills_root"`
	Count      int               `json:"count"`
	Entries    []install.Listing `json:"entries"`
}

func (a *app) listCommand() *cobra.Command {
	var (
		opts host.ListRequest
		sf   = stateFlags{readOnly: true}
	)
	c := &cobra.Command{
		Use:     "list [--publisher P] [--current-only] [--quarantined-only] [--eligible-only]",
		Example: "  palyra skills list\n  palyra skills list --quarantined-only -o wide\n  palyra skills list -o yaml",
		Short:   "List installed skill versions with their status and eligibility",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			sl, err := sv.List(cmd.Context(), opts)
			if err != nil {
				return err
			}
			r := listReport{SkillsRoot: sl.SkillsRoot, Entries: sl.Entries}
			if r.Entries == nil {
				r.Entries = []host.SkillListing{}
			}
			r.Count = len(r.Entries)
			text := listTable(r.Entries, a.wide())
			if r.Count == 0 {
				text = "No skills installed"
				if opts != (host.ListRequest{}) {
					text = "No installed skill matches the filters"
				}
				if r.SkillsRoot != "" {
					text += " (skills root " + output.Quote(r.SkillsRoot) + ")"
				}
				text += "."
			}
			return a.emit(r, text)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Publisher, "publisher", "", "only this publisher's skills")
	f.BoolVar(&opts.CurrentOnly, "current-only", false, "only current versions")
	f.BoolVar(&opts.QuarantinedOnly, "quarantined-only", false, "only quarantined versions")
	f.BoolVar(&opts.EligibleOnly, "eligible-only", false, "only versions that may run")
	sf.register(c, false)
	return c
}

func (a *app) infoCommand() *cobra.Command {
	var (
		version string
		sf      = stateFlags{readOnly: true}
	)
	c := &cobra.Command{
		Use:     "info SKILL_ID [--version V]",
		Example: "  # the record, its tools and grants\n  palyra skills info acme.echo\n  palyra skills info acme.echo --version 1.0.0 -o json",
		Short:   "Show an installed skill version: record, status, manifest, signature, entries, history",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			info, err := sv.Info(cmd.Context(), host.SkillRef{SkillID: args[0], Version: version})
			if err != nil {
				return err
			}
			// The skill's sidecars (a daemon's; none in a local command,
			// which runs no tool) with their hardening.
			var mine []host.SidecarState
			if !a.structured() {
				states, _ := sv.Sidecars(cmd.Context())
				for _, st := range states {
					if st.SkillID == info.Inventory.SkillID {
						mine = append(mine, st)
					}
				}
			}
			return a.emit(info, infoText(info, mine, a.wide()))
		},
	}
	c.Flags().StringVar(&version, "version", "", "version (default: the current one)")
	sf.register(c, false)
	return c
}

// sidecarText is a sidecar's line of skills info: its state and how it
// hardened itself.
func sidecarText(st host.SidecarState) string {
	line := fmt.Sprintf("  sidecar version=%s status=%s pid=%d", st.Version, st.Status, st.PID)
	h := st.Hardening
	if h == nil {
		return line + " hardening=unknown"
	}
	line += fmt.Sprintf(" hardening=%s no_new_privs=%t seccomp=%s seccomp_mode=%d landlock=%s landlock_abi=%d caps_dropped=%t uid=%d gid=%d",
		h.Level(), h.NoNewPrivs, h.Seccomp, h.SeccompMode, h.Landlock, h.LandlockABI, h.CapsDropped, h.UID, h.GID)
	for _, k := range []string{"core", "nofile", "nproc", "data"} {
		if v, ok := h.Rlimits[k]; ok {
			line += fmt.Sprintf(" rlimit_%s=%d", k, v)
		}
	}
	return line
}

// checkReport is the JSON of skills check (Palyra's shape).
type checkReport struct {
	SkillsRoot string                `json:"skills_root"`
	Count      int                   `json:"count"`
	Results    []install.CheckResult `json:"results"`
}

func (a *app) checkCommand() *cobra.Command {
	var (
		version string
		sf      = stateFlags{mustExist: true}
	)
	c := &cobra.Command{
		Use:     "check [SKILL_ID] [--version V]",
		Example: "  palyra skills check\n  palyra skills check acme.echo --version 1.0.0",
		Short:   "Re-check installed skills (trust, audit, policy, eligibility) without changing them",
		Long: "check re-verifies the installed artifact against the trust store (no trust on first use), audits it, judges it against the profile and reads its status. " +
			"check_status is ready only when all of them pass and the version may run; otherwise blocked, with the reasons. Without SKILL_ID every skill's current version is checked. It fails with skill_not_found when nothing matches. It is local-only (refused with --url): the daemon has no check API.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.refuseDaemonMode(cmd); err != nil {
				return err
			}
			in, err := a.openReader(cmd, &sf)
			if err != nil {
				return err
			}
			defer in.Close()
			id := ""
			if len(args) == 1 {
				id = args[0]
			} else if version != "" {
				return fmt.Errorf("%w: --version needs a SKILL_ID", errUsage)
			}
			results, err := in.Check(cmd.Context(), id, version)
			if err != nil {
				return err
			}
			r := checkReport{SkillsRoot: in.Layout().SkillsDir(), Count: len(results), Results: results}
			t := output.NewTable(output.Column{Header: "skill"}, output.Column{Header: "version"}, output.Column{Header: "check"},
				output.Column{Header: "trusted"}, output.Column{Header: "audit"}, output.Column{Header: "status"}, output.Column{Header: "eligibility"})
			var why []string
			for _, res := range results {
				audit := "passed"
				if !res.AuditPassed {
					audit = "failed"
				}
				t.Row(res.Inventory.SkillID, res.Inventory.Version, res.CheckStatus, res.TrustAccepted, audit,
					res.Inventory.Status, res.Inventory.Eligibility.Status)
				for _, reason := range res.Reasons {
					why = append(why, res.Inventory.SkillID+" "+res.Inventory.Version+": "+reason)
				}
			}
			text := t.String(a.wide())
			if len(why) > 0 {
				text += "\nReasons:\n  " + strings.Join(why, "\n  ")
			}
			return a.emit(r, text)
		},
	}
	c.Flags().StringVar(&version, "version", "", "version (default: the current one)")
	sf.register(c, true)
	return c
}

func (a *app) verifyCommand() *cobra.Command {
	var (
		version string
		sf      stateFlags
	)
	c := &cobra.Command{
		Use:     "verify SKILL_ID [--version V]",
		Example: "  palyra skills verify acme.echo",
		Short:   "Re-verify an installed artifact against the trust store and record the decision",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			v, err := sv.Verify(cmd.Context(), host.SkillRef{SkillID: args[0], Version: version})
			if err != nil {
				return err
			}
			return a.emit(v, "skills.verify "+output.KV("skill_id", v.SkillID, "version", v.Version, "trust_decision", v.TrustDecision, "payload_sha256", v.PayloadSHA256))
		},
	}
	c.Flags().StringVar(&version, "version", "", "version (default: the current one)")
	sf.register(c, false)
	return c
}

// auditReport is the JSON of skills audit (Palyra's shape). Through a
// daemon, which does not say where its trust store is, trust_store is left
// out.
type auditReport struct {
	TrustStore string                 `json:"trust_store,omitempty"`
	Audits     []*install.AuditResult `json:"audits"`
	Summary    auditSummary           `json:"summary"`
	Message    string                 `json:"message,omitempty"`
}

type auditSummary struct {
	Audited            int `json:"audited"`
	QuarantineRequired int `json:"quarantine_required"`
	FailedChecks       int `json:"failed_checks"`
	Warnings           int `json:"warnings"`
}

func (a *app) auditCommand() *cobra.Command {
	var (
		version, path string
		allowTOFU     bool
		sf            stateFlags
	)
	c := &cobra.Command{
		Use:     "audit [SKILL_ID [--version V] | --artifact A [--allow-tofu]]",
		Example: "  palyra skills audit\n  palyra skills audit acme.echo\n  palyra skills audit --artifact acme.echo.palyra-skill --allow-tofu",
		Short:   "Audit installed skills or an artifact; changes no status",
		Long: "audit runs the static security audit and the operator profile on an artifact (--artifact) or on installed versions (SKILL_ID, or every current version). " +
			"It prints the reports and exits non-zero (audit_failed or policy_violation) when any would be quarantined, but changes no status: that is what skills reaudit does. " +
			"With --url the daemon audits installed versions with its trust store and profile; --artifact is local-only.",
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if path != "" && len(args) > 0 {
				return fmt.Errorf("%w: give SKILL_ID or --artifact, not both", errUsage)
			}
			ctx := cmd.Context()
			r := auditReport{Audits: []*install.AuditResult{}}
			if path != "" {
				// Auditing a file that is not installed is no operator verb
				// of host.Service: it is done here, on a copy of the trust
				// store, and changes nothing (refused through a daemon).
				if err := a.refuseLocalOnly(cmd, append([]string{"artifact"}, stateLocalFlags...)...); err != nil {
					return err
				}
				in, err := a.openInstaller(cmd, &sf)
				if err != nil {
					return err
				}
				defer in.Close()
				r.TrustStore = in.TrustStorePath()
				data, err := readSmallFile(path, artifact.MaxArtifactBytes)
				if err != nil {
					return err
				}
				res, err := in.AuditArtifact(ctx, data, install.AuditOptions{AllowTOFU: allowTOFU})
				if err != nil {
					return err
				}
				res.Artifact = path
				r.Audits = append(r.Audits, res)
			} else {
				// Installed versions are read from the state directory:
				// one that does not exist is refused, not shown as empty.
				sf.mustExist = true
				sv, err := a.service(cmd, &sf, stateLocalFlags...)
				if err != nil {
					return err
				}
				defer sv.Close()
				r.TrustStore = sv.trustStore
				if err := auditInstalled(ctx, sv, args, version, &r); err != nil {
					return err
				}
			}
			var failed error
			t := output.NewTable(output.Column{Header: "skill"}, output.Column{Header: "version"}, output.Column{Header: "passed"},
				output.Column{Header: "quarantine"}, output.Column{Header: "source"})
			var why []string
			for _, res := range r.Audits {
				r.Summary.Audited++
				if res.QuarantineRequired {
					r.Summary.QuarantineRequired++
					if failed == nil {
						failed = auditErr(res)
					}
				}
				r.Summary.FailedChecks += len(res.Report.FailedChecks())
				r.Summary.Warnings += len(res.Report.WarningChecks())
				t.Row(res.SkillID, res.Version, res.Passed, res.QuarantineRequired, res.Source)
				for _, reason := range res.Reasons {
					why = append(why, res.SkillID+" "+res.Version+": "+reason)
				}
			}
			text := fmt.Sprintf("%d audited, %d would be quarantined, %d failed checks, %d warnings\n",
				r.Summary.Audited, r.Summary.QuarantineRequired, r.Summary.FailedChecks, r.Summary.Warnings)
			if t.Len() > 0 {
				text += t.String(a.wide())
			}
			if len(why) > 0 {
				text += "Reasons:\n  " + strings.Join(why, "\n  ")
			}
			if r.Message != "" {
				text += r.Message
			}
			lines := []string{strings.TrimRight(text, "\n")}
			if failed != nil {
				if !a.structured() {
					if err := a.emit(nil, strings.Join(lines, "\n")); err != nil {
						return err
					}
				}
				return &detailedError{err: fmt.Errorf("%d of %d audited would be quarantined: %w", r.Summary.QuarantineRequired, r.Summary.Audited, failed), details: r}
			}
			return a.emit(r, strings.Join(lines, "\n"))
		},
	}
	c.Flags().StringVar(&version, "version", "", "version (default: the current one)")
	c.Flags().StringVar(&path, "artifact", "", "audit this .palyra-skill file instead of installed skills")
	c.Flags().BoolVar(&allowTOFU, "allow-tofu", false, "with --artifact: accept an unknown publisher for the audit (nothing is pinned)")
	sf.register(c, true)
	return c
}

// auditInstalled audits installed versions into r: SKILL_ID's (args[0])
// version, else every current version.
func auditInstalled(ctx context.Context, sv host.Service, args []string, version string, r *auditReport) error {
	if len(args) == 1 {
		res, err := sv.Audit(ctx, host.SkillRef{SkillID: args[0], Version: version})
		if err != nil {
			return err
		}
		r.Audits = append(r.Audits, res)
		return nil
	}
	sl, err := sv.List(ctx, host.ListRequest{CurrentOnly: true})
	if err != nil {
		return err
	}
	for _, e := range sl.Entries {
		res, err := sv.Audit(ctx, host.SkillRef{SkillID: e.SkillID, Version: e.Version})
		if err != nil {
			return err
		}
		r.Audits = append(r.Audits, res)
	}
	if len(sl.Entries) == 0 {
		r.Message = "no installed skill artifacts were selected for audit"
	}
	return nil
}

// auditErr is the error of an audit result that requires quarantine, nil
// for one that passed. A result decoded from the daemon's JSON has lost its
// error value, so it is rebuilt from the report and the policy decision as
// the installer builds it: a failed check other than a policy check is the
// audit's error, else the policy's violations, else the audit's error.
func auditErr(res *install.AuditResult) error {
	if err := res.Err(); err != nil || !res.QuarantineRequired {
		return err
	}
	if res.Report != nil && slices.ContainsFunc(res.Report.FailedChecks(), func(id string) bool { return !strings.HasPrefix(id, "policy:") }) {
		return res.Report.Err()
	}
	if res.Policy != nil && !res.Policy.Allowed() {
		return res.Policy.Err()
	}
	if res.Report != nil && !res.Report.Passed {
		return res.Report.Err()
	}
	return fmt.Errorf("%w: %s %s must be quarantined: %s", audit.ErrAuditFailed, res.SkillID, res.Version, strings.Join(res.Reasons, "; "))
}

func statusText(verb string, r *install.StatusResult) string {
	s := verb + " " + output.KV("skill_id", r.SkillID, "version", r.Version, "status", r.Status, "previous_status", r.PreviousStatus,
		"changed", r.Changed, "reason", r.Reason, "detected_at_ms", r.DetectedAtMS, "operator_principal", r.Principal)
	if r.PreviousCurrent != "" {
		s += " " + output.KV("current", true, "previous_current", r.PreviousCurrent)
	}
	return s
}

// statusFlags are the options of quarantine, enable and disable. Who makes
// the change is the group's --principal.
type statusFlags struct {
	version, reason string
	sf              stateFlags
}

func (s *statusFlags) register(c *cobra.Command, judges bool) {
	c.Flags().StringVar(&s.version, "version", "", "version (default: the current one)")
	c.Flags().StringVar(&s.reason, "reason", "", "why, recorded with the status")
	s.sf.register(c, judges)
}

func (a *app) quarantineCommand() *cobra.Command {
	c := a.simpleStatusCommand("quarantine SKILL_ID --reason R [--version V]", "Block an installed skill version from running",
		"  palyra skills quarantine acme.echo --reason \"sends data to an unknown host\"",
		"skill.quarantined", host.Service.Quarantine)
	requireFlags(c, "reason")
	return c
}

// simpleStatusCommand is a status change with no option of its own beyond
// statusFlags (quarantine, disable): op is called with the skill, version
// and reason, as who --principal names, and its result printed as event.
func (a *app) simpleStatusCommand(use, short, example, event string,
	op func(sv host.Service, ctx context.Context, req host.StatusRequest) (*host.StatusResult, error)) *cobra.Command {
	var sfl statusFlags
	c := &cobra.Command{
		Use:     use,
		Example: example,
		Short:   short,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sfl.sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			r, err := op(sv, a.actor(cmd), host.StatusRequest{SkillID: args[0], Version: sfl.version, Reason: sfl.reason})
			if err != nil {
				return err
			}
			return a.emit(r, statusText(event, r))
		},
	}
	sfl.register(c, false)
	return c
}

func (a *app) enableCommand() *cobra.Command {
	var (
		sfl      statusFlags
		override bool
	)
	c := &cobra.Command{
		Use:     "enable SKILL_ID [--override] --reason R [--version V]",
		Example: "  palyra skills enable acme.echo --reason \"reviewed\"\n\n  # a quarantined version\n  palyra skills enable acme.echo --override --reason \"false positive, reviewed\"",
		Short:   "Let an installed skill version run again, after re-checking it",
		Long: "enable first re-verifies the installed artifact (no trust on first use), audits it and judges it against the profile; if any fails it refuses with that code (audit_failed, policy_violation, untrusted_publisher, ...) and nothing changes. " +
			"A quarantined version also needs --override (else override_required). A version installed from builder output awaiting review is refused (review_pending), even with --override: approve it with palyra skills review approve.\n\n" +
			"A version an upgrade held back (it failed its checks while an active version was current; skills info lists it) is made current only this way: enable --version V, once its checks pass, makes it active and current in one step.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sfl.sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			r, err := sv.Enable(a.actor(cmd), host.EnableRequest{SkillID: args[0], Version: sfl.version, Reason: sfl.reason, Override: override})
			if err != nil {
				return err
			}
			return a.emit(r, statusText("skill.enabled", r))
		},
	}
	c.Flags().BoolVar(&override, "override", false, "required to enable a quarantined version")
	sfl.register(c, true)
	return c
}

func (a *app) disableCommand() *cobra.Command {
	return a.simpleStatusCommand("disable SKILL_ID [--reason R] [--version V]",
		"Turn an installed skill version off (a quarantined one stays quarantined)",
		"  palyra skills disable acme.echo --reason \"not needed this week\"",
		"skill.disabled", host.Service.Disable)
}

// removeReport is the JSON of skills remove: host.RemoveResult (the
// versions removed, storage_purged, purged_usage) and, locally, the skills
// root.
type removeReport struct {
	SkillsRoot string `json:"skills_root,omitempty"`
	*host.RemoveResult
}

func removeText(r *host.RemoveResult) string {
	t := "skill.removed " + output.KV("skill_id", r.SkillID, "versions", strings.Join(r.Versions, ","), "current", r.Current, "storage_purged", r.StoragePurged)
	if r.PurgedUsage != nil {
		t += fmt.Sprintf(" purged_keys=%d purged_bytes=%d", r.PurgedUsage.Keys, r.PurgedUsage.Bytes)
	}
	for _, b := range r.DisabledHooks {
		t += "\nhook.disabled " + output.KV("hook_id", b.HookID, "event", b.Event, "plugin_id", b.PluginID)
	}
	return t
}

func (a *app) removeCommand() *cobra.Command {
	var (
		version string
		purge   bool
		force   bool
		sf      stateFlags
	)
	c := &cobra.Command{
		Use:     "remove SKILL_ID [--version V] [--purge-storage] [--force]",
		Example: "  palyra skills remove acme.echo --version 1.0.0\n  palyra skills remove acme.echo --purge-storage\n  palyra skills remove acme.echo --force   # also disables the hook bindings that run it",
		Short:   "Uninstall a skill version, or every version without --version",
		Long: "remove deletes the inventory rows (journaling skill.removed, with --principal) and then the files; the next highest version (one an upgrade held back only when no other is left) becomes current. Status rows and history stay, so a quarantined version is still quarantined if installed again. The trust store is left alone.\n\n" +
			"The skill's key-value storage and its operator config are shared by all its versions and kept by default. With --purge-storage both are deleted once no version of the skill is left (the config's sensitive values leave the vault too), and the output reports storage_purged and the keys and bytes purged; " +
			"--purge-storage with a --version that leaves other versions installed is refused (purge_needs_all_versions) before anything is removed.\n\n" +
			"A remove that would leave no version of a skill that an enabled hook binding runs is refused (skill_referenced_by_hook), naming the bindings. With --force those bindings are disabled in the same change (listed as hook.disabled, and as disabled_hooks with -o json); disabled bindings never block. " +
			"The bindings are disabled first, then the skill is removed: if the removal fails they are restored, and a crash in between leaves them disabled with the skill still installed (run the remove again, or palyra hooks enable to undo).",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			rep := removeReport{SkillsRoot: sv.skillsRoot}
			if rep.RemoveResult, err = sv.Remove(a.actor(cmd), host.RemoveRequest{SkillID: args[0], Version: version, PurgeStorage: purge, Force: force}); err != nil {
				return err
			}
			return a.emit(rep, removeText(rep.RemoveResult))
		},
	}
	c.Flags().StringVar(&version, "version", "", "version (default: every version)")
	c.Flags().BoolVar(&purge, "purge-storage", false, "also delete the skill's key-value storage and operator config once no version is left")
	c.Flags().BoolVar(&force, "force", false, "disable the enabled hook bindings that run the skill when no version would be left (otherwise refused with skill_referenced_by_hook)")
	sf.register(c, false)
	return c
}

func (a *app) reauditCommand() *cobra.Command {
	var sf stateFlags
	c := &cobra.Command{
		Use:     "reaudit",
		Example: "  palyra skills reaudit",
		Short:   "Re-check every installed version and quarantine what now fails",
		Long: "reaudit re-verifies every installed artifact (its SHA-256, signature and publisher trust, without trust on first use), audits it and judges it against the profile, and quarantines each version that fails (principal system:reaudit). " +
			"It only ever moves towards quarantine.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			rep, err := sv.Reaudit(cmd.Context())
			if rep == nil {
				return err
			}
			t := output.NewTable(output.Column{Header: "skill"}, output.Column{Header: "version"}, output.Column{Header: "passed"},
				output.Column{Header: "before"}, output.Column{Header: "after"}, output.Column{Header: "quarantined"}, output.Column{Header: "code"})
			for _, o := range rep.Outcomes {
				t.Row(o.SkillID, o.Version, o.Passed, o.Before, o.After, o.Quarantined, dashIfEmpty(o.Code))
			}
			text := fmt.Sprintf("%d checked, %d passed, %d quarantined\n", rep.Checked, rep.Passed, rep.Quarantined)
			if len(rep.Outcomes) > 0 {
				text += t.String(a.wide())
			}
			if err != nil {
				if !a.structured() {
					if perr := a.emit(nil, text); perr != nil {
						return perr
					}
				}
				return &detailedError{err: err, details: rep}
			}
			return a.emit(rep, text)
		},
	}
	sf.register(c, true)
	return c
}
