package daemon

import (
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/buildinfo"
)

// TestHardeningSupported: "hardened" refuses a kernel that cannot apply
// the whole sidecar hardening and names what is missing.
func TestHardeningSupported(t *testing.T) {
	for _, tt := range []struct {
		name string
		k    buildinfo.KernelSupport
		want string
	}{
		{"full", buildinfo.KernelSupport{Linux: true, LandlockABI: 7, LandlockTarget: 7, Seccomp: true, NoNewPrivs: true}, ""},
		{"older landlock", buildinfo.KernelSupport{Linux: true, LandlockABI: 3, LandlockTarget: 7, Seccomp: true, NoNewPrivs: true}, ""},
		{"no landlock", buildinfo.KernelSupport{Linux: true, Seccomp: true, NoNewPrivs: true}, "missing Landlock"},
		{"no seccomp", buildinfo.KernelSupport{Linux: true, LandlockABI: 7, NoNewPrivs: true}, "seccomp filters"},
		{"not linux", buildinfo.KernelSupport{}, "Linux only"},
	} {
		err := hardeningSupported(tt.k)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want daemon_config_invalid naming %q", tt.name, err, tt.want)
		}
	}
}
