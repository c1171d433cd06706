package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
)

// service is what the skills and hooks verbs act on: host.Service, either
// a *host.Host opened on the state directory (local mode) or the daemon's
// client (--url). Every verb goes through it one way, whatever the mode.
type service struct {
	host.Service
	// skillsRoot and trustStore are where the local host keeps its skills
	// and its trust store; both are "" through a daemon, which does not
	// report them (the outputs leave them out then).
	skillsRoot, trustStore string
	// close releases the service: it closes a local host (giving its
	// sidecars up to hostCloseTimeout to stop, even once the command's
	// context is done).
	close func() error
}

// Close releases the service.
func (s *service) Close() error { return s.close() }

// hostCloseTimeout bounds how long a command waits for the local host it
// opened, and its sidecars, to stop.
const hostCloseTimeout = 5 * time.Second

// sidecarUse says whether a verb's local host needs the palyra-sidecar
// binary.
type sidecarUse int

const (
	// sidecarNone: the verb runs no tool (list, info, status changes,
	// hook edits).
	sidecarNone sidecarUse = iota
	// sidecarIfFound: the verb runs no tool but uses a sidecar found the
	// default way when there is one (install precompiles new modules).
	sidecarIfFound
	// sidecarRequired: the verb runs tools (skills run and loop, hooks
	// fire); the binary is --sidecar or found the default way, and not
	// finding it is sidecar_not_found.
	sidecarRequired
)

// service returns the daemon's client in daemon mode (--url or
// $PALYRA_DAEMON_URL; localOnly are the command's options refused there,
// see daemonClient), else a host opened on the state directory with sf's
// trust store and profile, and the sidecar sf asks for. Close it after use.
func (a *app) service(cmd *cobra.Command, sf *stateFlags, localOnly ...string) (*service, error) {
	cl, err := a.daemonClient(cmd, localOnly...)
	if err != nil {
		return nil, err
	}
	if cl != nil {
		return &service{Service: cl, close: func() error { return nil }}, nil
	}
	var bin string
	switch sf.sidecarUse {
	case sidecarNone:
		// No tool runs and nothing is compiled: no binary needed.
	case sidecarRequired:
		if bin, err = findSidecar(sf.sidecar); err != nil {
			return nil, err
		}
	case sidecarIfFound:
		// With a sidecar binary at hand, new modules are compiled at
		// install (in a palyra-sidecar child, never in this process) into
		// the cache that skills run and the daemon use; without one, the
		// first call compiles.
		bin, _ = findSidecar("")
	}
	layout, ts, err := a.resolveState(sf)
	if err != nil {
		return nil, err
	}
	prof, _, err := resolveProfile(layout.Dir(), sf.profile)
	if err != nil {
		return nil, err
	}
	vaultKey, vaultKeyCommand := cliconfig.VaultKey()
	sources, err := sf.sources.config()
	if err != nil {
		return nil, err
	}
	ctx := cmd.Context()
	h, err := host.Open(ctx, host.Config{
		StateDir: layout.Dir(), TrustStore: ts, Policy: prof, SidecarPath: bin, ReadOnly: sf.readOnly,
		VaultKey: vaultKey, VaultKeyCommand: vaultKeyCommand,
		Supervisor: supervisor.Config{IdleTimeout: -1}, Sources: sources,
	})
	if err != nil {
		return nil, err
	}
	return &service{Service: h, skillsRoot: layout.SkillsDir(), trustStore: ts, close: func() error {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hostCloseTimeout)
		defer cancel()
		return h.Close(cctx)
	}}, nil
}

// actor returns the command's context naming --principal as who acts.
func (a *app) actor(cmd *cobra.Command) context.Context {
	return host.WithPrincipal(cmd.Context(), a.daemon.principal)
}

// findSidecar locates the palyra-sidecar binary: --sidecar,
// $PALYRA_SIDECAR, next to palyra, $PATH (cliconfig.Sidecar).
func findSidecar(flag string) (string, error) { return cliconfig.Sidecar(flag) }
