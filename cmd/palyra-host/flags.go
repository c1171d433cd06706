package main

import (
	"fmt"
	"io"
	"os/user"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host/source"
	"github.com/palyra-go/palyra/host/supervisor"
)

// hostFlags are the flags of every command that opens the state directory
// and runs its skills (serve, mcp): the profile, the sidecar binary and
// the logs, which go to stderr.
type hostFlags struct {
	policyPath, sidecar, logLevel string
	logJSON                       bool
	// sidecarUser is --sidecar-user; noHarden is --no-harden-sidecars.
	sidecarUser string
	noHarden    bool
}

func (h *hostFlags) register(f *pflag.FlagSet) {
	f.StringVar(&h.policyPath, "policy", "", "operator capability profile (default <state>/policy.toml when present, else the safe default)")
	f.StringVar(&h.sidecar, "sidecar", "", "the palyra-sidecar binary (default $"+cliconfig.EnvSidecar+", next to palyra-host, or in $PATH)")
	f.StringVar(&h.logLevel, "log-level", "info", "log level (logs go to stderr): trace, debug, info, warn, error")
	f.BoolVar(&h.logJSON, "log-json", false, "write logs as JSON lines")
	f.StringVar(&h.sidecarUser, "sidecar-user", "", "when run as root, run sidecars as this unprivileged user (NAME or UID:GID); it must be able to read the state dir's modules and write its cache")
	f.BoolVar(&h.noHarden, "no-harden-sidecars", false, "do not harden sidecars (seccomp, Landlock, capabilities, rlimits): for debugging only; reported in every sidecar's state")
}

// supervisorConfig is the supervisor's part of the flags: hardening and
// the sidecars' user.
func (h *hostFlags) supervisorConfig() (supervisor.Config, error) {
	sc := supervisor.Config{Hardening: supervisor.HardeningConfig{Off: h.noHarden}}
	if h.sidecarUser == "" {
		return sc, nil
	}
	cred, err := parseUser(h.sidecarUser)
	if err != nil {
		return sc, fmt.Errorf("--sidecar-user %q: %w", h.sidecarUser, err)
	}
	sc.RunAs = cred
	return sc, nil
}

// parseUser resolves NAME (its uid and primary gid) or UID:GID.
func parseUser(s string) (*supervisor.Credential, error) {
	if u, g, ok := strings.Cut(s, ":"); ok {
		uid, err1 := strconv.ParseUint(u, 10, 32)
		gid, err2 := strconv.ParseUint(g, 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("UID:GID must be two numbers")
		}
		return &supervisor.Credential{UID: uint32(uid), GID: uint32(gid)}, nil
	}
	u, err := user.Lookup(s)
	if err != nil {
		return nil, err
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s has no numeric uid/gid", s)
	}
	return &supervisor.Credential{UID: uint32(uid), GID: uint32(gid)}, nil
}

// hostSetup is what serve and mcp open the host with, resolved from the
// flags and the environment (cliconfig).
type hostSetup struct {
	state, sidecar string
	// trustStore is $PALYRA_SKILLS_TRUST_STORE, else the state
	// directory's; vaultKey and vaultKeyCommand are $PALYRA_VAULT_KEY and
	// $PALYRA_VAULT_KEY_COMMAND.
	trustStore, vaultKey, vaultKeyCommand string
	log                                   hclog.Logger
	// sup is the supervisor's config of --sidecar-user and
	// --no-harden-sidecars.
	sup supervisor.Config
	// sources is the registry fetching configuration (docker config
	// file, $PALYRA_OCI_PLAIN_HTTP).
	sources source.Config
}

// resolve returns the state directory (stateDir, else the default), the
// sidecar binary, the trust store, the vault key sources and the logger
// writing to stderr.
func (h *hostFlags) resolve(stateDir string, stderr io.Writer) (hostSetup, error) {
	var s hostSetup
	var err error
	if s.sidecar, err = cliconfig.Sidecar(h.sidecar); err != nil {
		return hostSetup{}, err
	}
	layout, err := cliconfig.Layout(stateDir)
	if err != nil {
		return hostSetup{}, err
	}
	if s.trustStore, err = cliconfig.TrustStore(layout, ""); err != nil {
		return hostSetup{}, err
	}
	if s.sup, err = h.supervisorConfig(); err != nil {
		return hostSetup{}, err
	}
	s.state = layout.Dir()
	s.vaultKey, s.vaultKeyCommand = cliconfig.VaultKey()
	s.sources = cliconfig.Sources()
	s.log = hclog.New(&hclog.LoggerOptions{Name: "palyra-host", Level: hclog.LevelFromString(h.logLevel), Output: stderr, JSONFormat: h.logJSON})
	return s, nil
}
