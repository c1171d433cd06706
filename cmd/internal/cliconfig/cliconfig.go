// Package cliconfig is where palyra and palyra-host read their environment:
// every variable they honour is named and resolved here, and handed to the
// libraries as explicit configuration (host.Config, install.Config,
// vault.Config, daemon.Options), which read no environment themselves. An
// application that embeds the host decides its own sources.
//
// Each value comes from the first of: the command-line flag, the
// environment variable, the default.
//
//	state directory  --state-dir, $PALYRA_STATE_DIR, $XDG_STATE_HOME/palyra, ~/.local/state/palyra
//	trust store      --trust-store, $PALYRA_SKILLS_TRUST_STORE, <state>/skills/trust-store.json
//	vault key        $PALYRA_VAULT_KEY, $PALYRA_VAULT_KEY_COMMAND, <state>/secrets/vault.key
//	sidecar binary   --sidecar, $PALYRA_SIDECAR, next to the program, $PATH
//	daemon URL       --url, $PALYRA_DAEMON_URL, none (local mode)
//	admin token      --token, $PALYRA_ADMIN_TOKEN, <state>/daemon/admin-token
//	docker config    $DOCKER_CONFIG/config.json, ~/.docker/config.json when it exists, none (OCI registries anonymous)
//	OCI plain HTTP   $PALYRA_OCI_PLAIN_HTTP=1 (loopback registries only), off
//
// A variable that is set but empty is an error for the state directory and
// the trust store (Palyra's rule: no silent fallback) and the same as unset
// for the others.
package cliconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/source"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
)

// The environment variables the commands read.
const (
	EnvStateDir        = "PALYRA_STATE_DIR"
	EnvTrustStore      = "PALYRA_SKILLS_TRUST_STORE"
	EnvVaultKey        = "PALYRA_VAULT_KEY"
	EnvVaultKeyCommand = "PALYRA_VAULT_KEY_COMMAND"
	EnvSidecar         = "PALYRA_SIDECAR"
	EnvDaemonURL       = client.EnvURL
	EnvAdminToken      = client.EnvToken
	EnvDockerConfig    = "DOCKER_CONFIG"
	EnvOCIPlainHTTP    = "PALYRA_OCI_PLAIN_HTTP"
)

// ErrUsage is a command line that cannot be run as given (an unknown
// flag, a bad flag value), for both commands: exit status 2 in palyra.
var ErrUsage = errcode.New("usage", "invalid usage")

// StateDir returns the absolute state directory: flag, else
// $PALYRA_STATE_DIR (set but empty is statedir.ErrInvalid), else
// $XDG_STATE_HOME/palyra, else ~/.local/state/palyra. It creates nothing.
func StateDir(flag string) (string, error) {
	src := statedir.Sources{Explicit: flag, XDGStateHome: os.Getenv("XDG_STATE_HOME")}
	if flag == "" {
		v, ok := os.LookupEnv(EnvStateDir)
		if ok && v == "" {
			return "", fmt.Errorf("%w: %s is set but empty", statedir.ErrInvalid, EnvStateDir)
		}
		src.Env = v
	}
	if flag == "" && src.Env == "" {
		home, err := os.UserHomeDir()
		if err != nil && !(src.XDGStateHome != "" && filepath.IsAbs(src.XDGStateHome)) {
			return "", fmt.Errorf("%w: no --state-dir, no %s and no home directory: %v", statedir.ErrInvalid, EnvStateDir, err)
		}
		src.Home = home
	}
	return statedir.Resolve(src)
}

// StateDirOrigin says what chose the state directory StateDir(flag)
// returns, for messages: "--state-dir", "$PALYRA_STATE_DIR", or the
// default location.
func StateDirOrigin(flag string) string {
	switch {
	case flag != "":
		return "--state-dir"
	case os.Getenv(EnvStateDir) != "":
		return "$" + EnvStateDir
	case os.Getenv("XDG_STATE_HOME") != "" && filepath.IsAbs(os.Getenv("XDG_STATE_HOME")):
		return "the default location ($XDG_STATE_HOME/palyra)"
	}
	return "the default location (~/.local/state/palyra)"
}

// ExistingLayout is Layout for the commands that only read the state
// directory: it fails with statedir.ErrMissing, naming the path and what
// chose it, when the directory does not exist (and creates nothing).
func ExistingLayout(flag string) (statedir.Layout, error) {
	l, err := Layout(flag)
	if err != nil {
		return l, err
	}
	fi, err := os.Stat(l.Dir())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return statedir.Layout{}, fmt.Errorf("%w: %s (set by %s); check the path, or install a skill there first (commands that write create it)",
			statedir.ErrMissing, l.Dir(), StateDirOrigin(flag))
	case err != nil:
		return statedir.Layout{}, fmt.Errorf("%w: %v", statedir.ErrInvalid, err)
	case !fi.IsDir():
		return statedir.Layout{}, fmt.Errorf("%w: %s (set by %s) is not a directory", statedir.ErrInvalid, l.Dir(), StateDirOrigin(flag))
	}
	return l, nil
}

// Layout returns the layout of the state directory StateDir(flag) names.
func Layout(flag string) (statedir.Layout, error) {
	dir, err := StateDir(flag)
	if err != nil {
		return statedir.Layout{}, err
	}
	return statedir.At(dir), nil
}

// TrustStore returns the absolute trust store file: flag, else
// $PALYRA_SKILLS_TRUST_STORE (set but empty is statedir.ErrInvalid), else
// the state directory's, l.TrustStore().
func TrustStore(l statedir.Layout, flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if v, ok := os.LookupEnv(EnvTrustStore); ok {
		if v == "" {
			return "", fmt.Errorf("%w: %s is set but empty", statedir.ErrInvalid, EnvTrustStore)
		}
		return filepath.Abs(v)
	}
	return l.TrustStore(), nil
}

// VaultKey returns the vault key sources of the environment:
// $PALYRA_VAULT_KEY (base64 of the key) and $PALYRA_VAULT_KEY_COMMAND,
// for vault.Config.EncodedKey and KeyCommand (host.Config.VaultKey and
// VaultKeyCommand). Either may be "".
func VaultKey() (encoded, command string) {
	return os.Getenv(EnvVaultKey), os.Getenv(EnvVaultKeyCommand)
}

// DockerConfig returns the docker credential file for OCI registries:
// $DOCKER_CONFIG/config.json when $DOCKER_CONFIG is set, else
// ~/.docker/config.json when it exists, else "" (anonymous access).
func DockerConfig() string {
	if d := os.Getenv(EnvDockerConfig); d != "" {
		return filepath.Join(d, "config.json")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	p := filepath.Join(home, ".docker", "config.json")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// Sources returns the registry fetching configuration the commands give
// the host: the docker config file, and plain HTTP to loopback OCI
// registries when $PALYRA_OCI_PLAIN_HTTP is 1 (so that outdated and update
// can follow a source installed with --plain-http).
func Sources() source.Config {
	return source.Config{DockerConfig: DockerConfig(), PlainHTTP: os.Getenv(EnvOCIPlainHTTP) == "1"}
}

// Sidecar locates the palyra-sidecar binary: flag, else $PALYRA_SIDECAR
// (each must name an executable file), else next to the running program
// (host.FindSidecar), else in $PATH. Not found is
// supervisor.ErrSidecarNotFound.
func Sidecar(flag string) (string, error) {
	if flag != "" {
		p, err := host.FindSidecar(flag)
		if err != nil {
			return "", fmt.Errorf("--sidecar: %w", err)
		}
		return p, nil
	}
	if v := os.Getenv(EnvSidecar); v != "" {
		p, err := host.FindSidecar(v)
		if err != nil {
			return "", fmt.Errorf("$%s: %w", EnvSidecar, err)
		}
		return p, nil
	}
	p, besideErr := host.FindSidecar("")
	if besideErr == nil {
		return p, nil
	}
	if p, err := exec.LookPath(host.SidecarName); err == nil {
		return p, nil
	}
	if !errors.Is(besideErr, supervisor.ErrSidecarNotFound) {
		return "", besideErr
	}
	return "", fmt.Errorf("%w (nor in $PATH): give --sidecar PATH or set $%s", besideErr, EnvSidecar)
}

// DaemonURL returns flag, else $PALYRA_DAEMON_URL; "" is local mode.
func DaemonURL(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(EnvDaemonURL)
}

// AdminToken returns flag, else $PALYRA_ADMIN_TOKEN; "" means the caller
// falls back to the state directory's token file.
func AdminToken(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(EnvAdminToken)
}
