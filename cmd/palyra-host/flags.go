package main

import (
	"io"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/statedir"
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
	f.StringVar(&h.sidecar, "sidecar", "", "the palyra-sidecar binary (default $"+host.SidecarEnv+", next to palyra-host, or in $PATH)")
	f.StringVar(&h.logLevel, "log-level", "info", "log level (logs go to stderr): trace, debug, info, warn, error")
	f.BoolVar(&h.logJSON, "log-json", false, "write logs as JSON lines")
}

// resolve returns the state directory (stateDir, else the default), the
// sidecar binary and the logger writing to stderr.
func (h *hostFlags) resolve(stateDir string, stderr io.Writer) (state, sidecar string, log hclog.Logger, err error) {
	if sidecar, err = host.FindSidecar(h.sidecar); err != nil {
		return "", "", nil, err
	}
	if state, err = statedir.Resolve(stateDir); err != nil {
		return "", "", nil, err
	}
	log = hclog.New(&hclog.LoggerOptions{Name: "palyra-host", Level: hclog.LevelFromString(h.logLevel), Output: stderr, JSONFormat: h.logJSON})
	return state, sidecar, log, nil
}
