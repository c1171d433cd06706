package host

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/palyra-go/palyra/host/supervisor"
)

// SidecarEnv names the environment variable that points at palyra-sidecar.
const SidecarEnv = "PALYRA_SIDECAR"

// FindSidecar locates the palyra-sidecar binary: flag when given, else
// $PALYRA_SIDECAR, else next to the running executable, else in $PATH.
func FindSidecar(flag string) (string, error) {
	if flag != "" {
		return checkSidecar(flag, "--sidecar")
	}
	if env := os.Getenv(SidecarEnv); env != "" {
		return checkSidecar(env, "$"+SidecarEnv)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "palyra-sidecar")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("palyra-sidecar"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: give --sidecar PATH or set $%s, or install palyra-sidecar next to the program or in $PATH", supervisor.ErrSidecarNotFound, SidecarEnv)
}

func checkSidecar(p, from string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s %s is not an executable file", supervisor.ErrSidecarNotFound, from, p)
	}
	return p, nil
}
