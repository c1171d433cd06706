package host

import (
	"fmt"
	"path/filepath"

	"github.com/palyra-go/palyra/host/rundir"
	"github.com/palyra-go/palyra/host/statedir"
)

// runLayout is the layout of the state directory as rundir names it: by
// its absolute path, so every host of one directory finds the same roots.
func runLayout(stateDir string) statedir.Layout {
	if abs, err := filepath.Abs(stateDir); err == nil {
		stateDir = abs
	}
	return statedir.At(stateDir)
}

// sweepRunDirs removes what dead host instances of the state directory
// left in its run roots (their children's sockets and TMPDIRs); the live
// hosts' instances stay (host/rundir). A failure is logged: it costs disk
// space, not correctness.
func (h *Host) sweepRunDirs() {
	gone, err := rundir.Sweep(runLayout(h.cfg.StateDir), "")
	if err != nil {
		h.log.Warn("removing what dead host instances left failed", "error", err)
	}
	if len(gone) > 0 {
		h.log.Info("removed what dead host instances left", "entries", len(gone))
	}
}

// acquireRunDir makes this host's runtime directory, where the supervisor
// puts its children's private directories.
func acquireRunDir(stateDir string) (*rundir.Instance, error) {
	root, err := rundir.Root(runLayout(stateDir), "")
	if err != nil {
		return nil, err
	}
	in, err := rundir.Acquire(root)
	if err != nil {
		return nil, fmt.Errorf("runtime directory: %w", err)
	}
	return in, nil
}
