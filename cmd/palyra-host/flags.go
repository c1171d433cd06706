package main

import (
	"io"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
)

// hostFlags are the flags of every command that opens the state directory
// and runs its skills (serve, mcp): the profile, the sidecar binary and
// the logs, which go to stderr.
type hostFlags struct {
	policyPath, sidecar, logLevel string
	logJSON                       bool
}

func (h *hostFlags) register(f *pflag.FlagSet) {
	f.StringVar(&h.policyPath, "policy", "", "operator capability profile (default <state>/policy.toml when present, else the safe default)")
	f.StringVar(&h.sidecar, "sidecar", "", "the palyra-sidecar binary (default $"+cliconfig.EnvSidecar+", next to palyra-host, or in $PATH)")
	f.StringVar(&h.logLevel, "log-level", "info", "log level (logs go to stderr): trace, debug, info, warn, error")
	f.BoolVar(&h.logJSON, "log-json", false, "write logs as JSON lines")
}

// hostSetup is what serve and mcp open the host with, resolved from the
// flags and the environment (cliconfig).
type hostSetup struct {
	state, sidecar string
	// trustStore is $PALYRA_SKILLS_TRUST_STORE, else the state
	// directory's; vaultKey and vaultKeyCommand are $PALYRA_VAULT_KEY and
	// $PALYRA_VAULT_KEY_COMMAND.
	// vulnFeedHook is $PALYRA_SKILL_AUDIT_VULN_FEED_HOOK.
	trustStore, vaultKey, vaultKeyCommand, vulnFeedHook string
	log                                                 hclog.Logger
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
	s.state = layout.Dir()
	s.vaultKey, s.vaultKeyCommand = cliconfig.VaultKey()
	s.vulnFeedHook = cliconfig.VulnFeedHook()
	s.log = hclog.New(&hclog.LoggerOptions{Name: "palyra-host", Level: hclog.LevelFromString(h.logLevel), Output: stderr, JSONFormat: h.logJSON})
	return s, nil
}
