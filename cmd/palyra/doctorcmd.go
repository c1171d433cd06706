package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/doctor"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

// exitStatus ends the command with a status and no error report: the
// command has already said everything (doctor's report).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// doctorCommand is `palyra doctor`.
func (a *app) doctorCommand() *cobra.Command {
	var sidecar, configPath, policyPath, url, token, trustStore, deployment string
	c := &cobra.Command{
		Use:   "doctor [--sidecar PATH] [--config FILE] [--deployment local|hardened] [--url URL] [-o json]",
		Short: "Check this installation: compiler, sidecar, kernel hardening, state dir, trust store, vault key, daemon, deployment",
		Long: "doctor runs every check and prints one line each: ok, warn or fail, the check's name, what it found and what to do.\n\n" +
			"  c-compiler        a C compiler ($CC, else cc, gcc or clang in $PATH): building palyra-sidecar needs cgo\n" +
			"  sidecar           palyra-sidecar found (--sidecar, $PALYRA_SIDECAR, next to palyra, $PATH) and of the same ABI and protocol\n" +
			"  kernel-hardening  Landlock, seccomp and no_new_privs, as the sidecar sees them\n" +
			"  state-dir         the state directory exists (else state_dir_missing), belongs to you, and its token and key files are private\n" +
			"  trust-store       the trust store parses; its publishers, allowlisted keys and keys pinned on first use\n" +
			"  vault-key         the vault key source as configured ($PALYRA_VAULT_KEY, $PALYRA_VAULT_KEY_COMMAND, the key file) opens the vault\n" +
			"  daemon            the daemon (--url, $PALYRA_DAEMON_URL, else the state directory's daemon.json) answers and accepts the token\n" +
			"  deployment        the deployment posture (--deployment, else the running daemon's, else --config's), and under hardened what would stop it\n\n" +
			"The exit status is 1 when any check fails (warnings alone exit 0).",
		Example: "  palyra doctor\n" +
			"  palyra doctor --state-dir /var/lib/palyra --config /etc/palyra/palyra-host.toml -o json\n" +
			"  palyra doctor --deployment hardened   # would a hardened daemon start here?",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := doctor.Config{Self: buildinfo.Get("palyra"), DaemonConfig: configPath, PolicyPath: policyPath, Deployment: deployment}
			if deployment != "" {
				if _, err := daemon.ParseDeployment(deployment); err != nil {
					return fmt.Errorf("%w: --deployment %q: use local or hardened", errUsage, deployment)
				}
			}
			layout, err := cliconfig.Layout(a.stateDir)
			if err != nil {
				return err
			}
			cfg.StateDir = layout.Dir()
			if cfg.TrustStore, err = cliconfig.TrustStore(layout, trustStore); err != nil {
				return err
			}
			cfg.VaultKey, cfg.VaultKeyCommand = cliconfig.VaultKey()
			cfg.Compiler = findCompiler()
			cfg.Sidecar, cfg.SidecarErr = cliconfig.Sidecar(sidecar)
			cfg.DaemonURL = cliconfig.DaemonURL(url)
			switch {
			case url != "":
				cfg.DaemonURLSource = "--url"
			case cfg.DaemonURL != "":
				cfg.DaemonURLSource = "$" + client.EnvURL
			}
			cfg.DaemonToken = cliconfig.AdminToken(token)
			rep := doctor.Run(cmd.Context(), cfg)
			if a.structured() {
				err = a.emit(rep, "")
			} else {
				err = rep.WriteText(a.stdout)
			}
			if err != nil {
				return err
			}
			if !rep.OK {
				return exitStatus(exitFailure)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&sidecar, "sidecar", "", "the palyra-sidecar binary (default $"+cliconfig.EnvSidecar+", next to palyra, or in $PATH)")
	f.StringVar(&configPath, "config", "", "palyra-host's configuration file, for the deployment posture when no daemon answers")
	f.StringVar(&deployment, "deployment", "", "check against this deployment profile: local or hardened (default: the running daemon's, else --config's, else local)")
	f.StringVar(&policyPath, "policy", "", "the operator profile the daemon uses (default <state>/policy.toml, else the default profile)")
	f.StringVar(&url, "url", "", "the daemon to check (default $"+client.EnvURL+", else the state directory's daemon.json)")
	f.StringVar(&token, "token", "", "the daemon's admin token (default $"+client.EnvToken+", else <state>/daemon/admin-token when readable)")
	f.StringVar(&trustStore, "trust-store", "", "the trust store (default $"+cliconfig.EnvTrustStore+", else <state>/skills/trust-store.json)")
	return c
}

// findCompiler locates the C compiler cgo would use: $CC (its first
// word), else cc, gcc or clang in $PATH.
func findCompiler() doctor.Compiler {
	if cc := strings.Fields(os.Getenv("CC")); len(cc) > 0 {
		p, err := exec.LookPath(cc[0])
		if err != nil {
			return doctor.Compiler{Source: "$CC", Err: fmt.Errorf("$CC is %q: %w", os.Getenv("CC"), err)}
		}
		return doctor.Compiler{Path: p, Source: "$CC"}
	}
	for _, name := range []string{"cc", "gcc", "clang"} {
		if p, err := exec.LookPath(name); err == nil {
			return doctor.Compiler{Path: p, Source: "$PATH"}
		}
	}
	return doctor.Compiler{Source: "$PATH", Err: errors.New("none of cc, gcc, clang is in $PATH and $CC is unset")}
}
