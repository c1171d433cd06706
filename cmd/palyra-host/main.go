// Command palyra-host is the Palyra-Go daemon: it owns a state directory and
// serves its skills over a gRPC and an HTTP JSON API on one port (package
// host/daemon).
//
//	palyra-host serve [--state-dir DIR] [--listen 127.0.0.1:7142] [--deployment local|hardened] [--policy FILE] [--config FILE] [--sidecar PATH]
//	palyra-host token rotate [--state-dir DIR]
//	palyra-host token path [--state-dir DIR]
//	palyra-host mcp [--state-dir DIR] [--policy FILE] [--sidecar PATH] [--approval-without-elicitation deny|allow]
//	palyra-host version [--json | -o json]    (or --version)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/internal/versioncmd"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var stateDir string
	root := &cobra.Command{
		Use:           "palyra-host",
		Short:         "The Palyra-Go daemon: skills over gRPC and HTTP",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentFlags().StringVar(&stateDir, "state-dir", "", "state directory (default $PALYRA_STATE_DIR, else $XDG_STATE_HOME/palyra or ~/.local/state/palyra)")
	root.AddCommand(serveCommand(&stateDir, stdout, stderr), tokenCommand(&stateDir, stdout))
	root.AddCommand(mcpCommand(&stateDir, os.Stdin, stdout, stderr))
	versioncmd.Install(root, "palyra-host")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v", cliconfig.ErrUsage, err)
	})
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		if errcode.Of(err) == errcode.Internal && strings.HasPrefix(err.Error(), "unknown command") {
			err = fmt.Errorf("%w: %v", cliconfig.ErrUsage, err)
		}
		fmt.Fprintf(stderr, "palyra-host: %s: %v\n", errcode.Of(err), err)
		if errors.Is(err, cliconfig.ErrUsage) {
			return 2
		}
		return 1
	}
	return 0
}

func serveCommand(stateDir *string, stdout, stderr io.Writer) *cobra.Command {
	var listen, configPath, deployment string
	var hf hostFlags
	var cf clusterFlags
	c := &cobra.Command{
		Use:   "serve [--listen ADDR] [--deployment local|hardened] [--policy FILE] [--config FILE] [--sidecar PATH]",
		Short: "Serve the state directory's skills until SIGTERM or SIGINT",
		Long: "serve starts the daemon: one process per state directory, on loopback unless TLS is configured. " +
			"It prints the URL and the admin token file; every API call but /healthz and /readyz needs `Authorization: Bearer <token>`. " +
			"SIGTERM or SIGINT drains in-flight calls (up to shutdown_timeout), stops every sidecar and exits 0. " +
			"The --config file's [cluster] table makes the daemon a node of a NATS cluster (urls, or [cluster.embedded]); each --cluster* and --node-name flag overrides its key of the table.\n\n" +
			"--deployment (the config's deployment key; default local) sets the security posture. local is a daemon for one machine. " +
			"hardened is for production: it refuses to start without [tls], with --no-harden-sidecars, where the kernel cannot apply the sidecar hardening (Landlock, seccomp, no_new_privs), " +
			"or with an operator profile whose egress is not strict (http.allow_private, plain http, wildcards); it turns the anomaly quarantine on, refuses allow_tofu (the trust store is the allowlist) and inline modules. " +
			"GET /readyz and GET /v1/cluster report the posture; `palyra doctor` checks it.",
		Example: "  palyra-host serve\n" +
			"  palyra-host serve --state-dir /var/lib/palyra --listen 0.0.0.0:7142 --config /etc/palyra/palyra-host.toml --deployment hardened",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := &daemon.Config{}
			if configPath != "" {
				var err error
				if cfg, err = daemon.LoadConfig(configPath); err != nil {
					return err
				}
			}
			if listen != "" {
				cfg.Listen = listen
			}
			if deployment != "" {
				cfg.Deployment = daemon.Deployment(deployment)
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			cc, err := cf.config(cmd.Flags(), cfg.Cluster)
			if err != nil {
				return err
			}
			hs, err := hf.resolve(*stateDir, stderr)
			if err != nil {
				return err
			}
			state := hs.state
			ctx := cmd.Context()
			d, err := daemon.Open(ctx, daemon.Options{
				StateDir: state, Config: cfg, PolicyPath: hf.policyPath, SidecarPath: hs.sidecar, Logger: hs.log,
				TrustStore: hs.trustStore, VaultKey: hs.vaultKey, VaultKeyCommand: hs.vaultKeyCommand,
				Supervisor: hs.sup, Cluster: cc, Version: manifest.RuntimeVersion, Sources: hs.sources,
			})
			if err != nil {
				return err
			}
			ln, err := d.Listen()
			if err != nil {
				return errors.Join(err, d.Close(context.Background()))
			}
			fmt.Fprintf(stdout, "palyra-host serving %s\n  state dir:  %s\n  token file: %s\n  deployment: %s\n  try:        curl -H \"Authorization: Bearer $(cat %s)\" %s/v1/skills\n",
				d.URL(ln), state, daemon.TokenPath(state), d.Posture().Deployment, daemon.TokenPath(state), d.URL(ln))
			return d.Serve(ctx, ln)
		},
	}
	f := c.Flags()
	f.StringVar(&listen, "listen", "", "address to serve on (default "+daemon.DefaultListen+"; off loopback only with [tls] configured)")
	f.StringVar(&configPath, "config", "", "daemon configuration file (TOML; see host/daemon.Config)")
	f.StringVar(&deployment, "deployment", "", "deployment profile: local or hardened (default: the config's deployment, else local)")
	hf.register(f)
	cf.register(f)
	return c
}

func tokenCommand(stateDir *string, stdout io.Writer) *cobra.Command {
	c := &cobra.Command{Use: "token", Short: "Manage the admin token"}
	c.AddCommand(&cobra.Command{
		Use:   "rotate",
		Short: "Replace the admin token; a running daemon accepts only the new one from its next request",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			state, err := cliconfig.StateDir(*stateDir)
			if err != nil {
				return err
			}
			if _, err := daemon.RotateToken(state); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "admin token rotated: %s\n", daemon.TokenPath(state))
			return nil
		},
	}, &cobra.Command{
		Use:   "path",
		Short: "Print the admin token file of the state directory",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			layout, err := cliconfig.Layout(*stateDir)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, layout.DaemonToken())
			return nil
		},
	})
	return c
}
