package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/install"
)

// daemonModeHelp is the part of the skills and hooks groups' long help that
// explains daemon mode.
const daemonModeHelp = "Daemon mode. With --url (default $" + client.EnvURL + ") the verbs go through the palyra-host daemon at that URL " +
	"(its HTTP API, host/daemon) instead of opening the state directory: the daemon does the work on its state directory, with its trust store and profile, " +
	"and the output is the same, in text and --json, as the local command's for the same result, except that the paths of the daemon's files (skills_root, trust_store) are left out where the daemon does not report them. " +
	"The admin token is --token, else $" + client.EnvToken + ", else the state directory's daemon/admin-token when that file is readable " +
	"(the usual case of a daemon on this machine and --state-dir; a token file with a mode other than 0600 is refused). " +
	"--principal (default " + install.PrincipalLocal + ") names who acts: it is recorded with installs (locally system:install unless given), status changes, removals and hook edits, and sent to the daemon as x-palyra-principal. " +
	"A daemon that cannot be reached is daemon_unreachable; a wrong token is unauthorized.\n\n" +
	"Options that name local files or work on the state directory alone are refused in daemon mode with a usage error: " +
	"--trust-store, --profile, install --trusted-publisher, audit --artifact, run and hooks fire --sidecar, and the verbs check and loop."

// daemonFlags are the persistent flags of the skills and hooks groups that
// select daemon mode and say who acts.
type daemonFlags struct {
	url, token, principal string
}

// registerDaemonFlags adds --url, --token and --principal to a group; its
// subcommands inherit them.
func (a *app) registerDaemonFlags(c *cobra.Command) {
	f := c.PersistentFlags()
	f.StringVar(&a.daemon.url, "url", "", "work through the palyra-host daemon at this URL (default $"+client.EnvURL+"; unset: work on the state directory)")
	f.StringVar(&a.daemon.token, "token", "", "the daemon's admin token (default $"+client.EnvToken+", else <state>/daemon/admin-token when readable)")
	f.StringVar(&a.daemon.principal, "principal", install.PrincipalLocal, "who acts, recorded with status changes and hook edits (sent to a daemon as x-palyra-principal)")
}

// daemonURL is --url, else $PALYRA_DAEMON_URL; "" is local mode.
func (a *app) daemonURL() string { return cliconfig.DaemonURL(a.daemon.url) }

// daemonToken is --token, else $PALYRA_ADMIN_TOKEN, else the token file of
// the state directory when it exists and this user can read it (a daemon
// on this machine); else "" and the daemon will answer unauthorized. A token
// file that is readable but unusable (mode other than 0600, malformed) is
// an error, as the daemon would refuse it too.
func (a *app) daemonToken() (string, error) {
	if t := cliconfig.AdminToken(a.daemon.token); t != "" {
		return t, nil
	}
	layout, err := cliconfig.Layout(a.stateDir)
	if err != nil {
		return "", nil
	}
	p := layout.DaemonToken()
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return "", nil
	}
	if err == nil {
		f.Close()
	}
	return daemon.ReadToken(p)
}

// daemonClient returns the client of the daemon in daemon mode and nil in
// local mode. localFlags are the command's options that only make sense
// locally: giving one of them in daemon mode is a usage error.
func (a *app) daemonClient(cmd *cobra.Command, localFlags ...string) (*client.Client, error) {
	u := a.daemonURL()
	if u == "" {
		return nil, nil
	}
	if err := a.refuseLocalOnly(cmd, localFlags...); err != nil {
		return nil, err
	}
	tok, err := a.daemonToken()
	if err != nil {
		return nil, err
	}
	cl, err := client.New(u, tok, client.WithPrincipal(a.daemon.principal))
	if err != nil {
		return nil, fmt.Errorf("%w: --url: %v", errUsage, err)
	}
	return cl, nil
}

// refuseLocalOnly is a usage error in daemon mode when one of localFlags,
// the command's options that only make sense locally, is given.
func (a *app) refuseLocalOnly(cmd *cobra.Command, localFlags ...string) error {
	if a.daemonURL() == "" {
		return nil
	}
	for _, n := range localFlags {
		if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
			return fmt.Errorf("%w: %s --%s is local-only and cannot be used with a daemon (--url or $%s): %s",
				errUsage, cmd.CommandPath(), n, client.EnvURL, localOnlyWhy(n))
		}
	}
	return nil
}

// localOnlyWhy says why a flag cannot go through the daemon.
func localOnlyWhy(flag string) string {
	switch flag {
	case "trusted-publisher":
		return "the daemon decides trust with its own trust store; allowlist the publisher there locally (palyra skills package verify --trusted-publisher PUB=HEX with the daemon's --state-dir) or install with --allow-tofu"
	case "trust-store", "profile":
		return "the daemon uses its own trust store and operator profile"
	case "artifact":
		return "auditing an artifact file is done locally; the daemon audits installed versions"
	case "sidecar":
		return "the daemon runs tools in its own sidecars"
	}
	return "it works on local files"
}

// refuseDaemonMode is the check of the verbs that only work on the state
// directory (check, loop): a usage error in daemon mode.
func (a *app) refuseDaemonMode(cmd *cobra.Command) error {
	if a.daemonURL() == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is local-only: it opens the state directory itself and has no daemon API; drop --url (or unset $%s)",
		errUsage, cmd.CommandPath(), client.EnvURL)
}
