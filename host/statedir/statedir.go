package statedir

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/palyra-go/palyra/host/errcode"
)

const (
	// EnvStateDir names the state directory when no explicit value is given.
	EnvStateDir = "PALYRA_STATE_DIR"
	// EnvTrustStore names the trust store file when no explicit value is given.
	EnvTrustStore = "PALYRA_SKILLS_TRUST_STORE"
)

// ErrInvalid reports a state location that cannot be used.
var ErrInvalid = errcode.New("invalid_state_dir", "invalid state directory location")

// Resolve returns the absolute state directory: explicit if non-empty, else
// $PALYRA_STATE_DIR, else the per-user default. It does not create it.
func Resolve(explicit string) (string, error) {
	dir := explicit
	if dir == "" {
		if v, ok := os.LookupEnv(EnvStateDir); ok {
			if v == "" {
				return "", fmt.Errorf("%w: %s is set but empty", ErrInvalid, EnvStateDir)
			}
			dir = v
		}
	}
	if dir == "" {
		base := os.Getenv("XDG_STATE_HOME")
		if base == "" || !filepath.IsAbs(base) {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("%w: no %s and no home directory: %v", ErrInvalid, EnvStateDir, err)
			}
			base = filepath.Join(home, ".local", "state")
		}
		dir = filepath.Join(base, "palyra")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalid, dir, err)
	}
	return abs, nil
}

// SkillsDir returns the directory that holds installed skills and the trust store.
func SkillsDir(state string) string { return filepath.Join(state, "skills") }

// TrustStorePath returns the trust store file: explicit if non-empty, else
// $PALYRA_SKILLS_TRUST_STORE (an empty value is an error), else
// <state>/skills/trust-store.json.
func TrustStorePath(state, explicit string) (string, error) {
	if explicit != "" {
		return filepath.Abs(explicit)
	}
	if v, ok := os.LookupEnv(EnvTrustStore); ok {
		if v == "" {
			return "", fmt.Errorf("%w: %s is set but empty", ErrInvalid, EnvTrustStore)
		}
		return filepath.Abs(v)
	}
	return filepath.Join(SkillsDir(state), "trust-store.json"), nil
}
