package host

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/palyra-go/palyra/host/supervisor"
)

// SidecarName is the file name of the sidecar binary.
const SidecarName = "palyra-sidecar"

// FindSidecar locates the palyra-sidecar binary: explicit when given (it
// must be an executable file), else SidecarName next to the running
// executable. It reads no environment: the commands look at their own
// sources first (palyra's --sidecar, then $PALYRA_SIDECAR) and at $PATH
// last. Not found is supervisor.ErrSidecarNotFound.
func FindSidecar(explicit string) (string, error) {
	if explicit != "" {
		return checkSidecar(explicit)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("%w: cannot locate the running program: %v", supervisor.ErrSidecarNotFound, err)
	}
	p := filepath.Join(filepath.Dir(exe), SidecarName)
	if _, err := checkSidecar(p); err != nil {
		return "", fmt.Errorf("%w: no %s next to %s", supervisor.ErrSidecarNotFound, SidecarName, exe)
	}
	return p, nil
}

func checkSidecar(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s is not an executable file", supervisor.ErrSidecarNotFound, p)
	}
	return p, nil
}
