package supervisor

import (
	"fmt"
	"os"
	"syscall"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// HardeningConfig configures the self-hardening of every sidecar and
// precompile child (see package sidecar/internal/harden and RATIONALE.md).
// The zero value hardens, on Linux, with the sidecar's default limits.
type HardeningConfig struct {
	// Off turns the hardening off. The sidecars' state reports it
	// (Hardening.Enabled false); it is for debugging a sidecar with tools
	// the hardening forbids (a debugger, strace of a child).
	Off bool
	// MaxOpenFiles, MaxProcs and MaxDataBytes set RLIMIT_NOFILE,
	// RLIMIT_NPROC and RLIMIT_DATA in each sidecar; 0 keeps the sidecar's
	// defaults (256 open files, 4096 tasks of its user, no data limit).
	MaxOpenFiles, MaxProcs, MaxDataBytes uint64
}

// Credential is the unprivileged user and group sidecars run as.
type Credential struct {
	UID, GID uint32
}

// Hardening is how a sidecar hardened itself, as it reported it (read back
// from the kernel). Enabled false means Config.Hardening.Off.
type Hardening struct {
	Enabled    bool `json:"enabled"`
	Supported  bool `json:"supported"`
	NoNewPrivs bool `json:"no_new_privs"`
	// Seccomp is "filter" or "unsupported"; SeccompMode the kernel's
	// Seccomp (2: filter); SeccompSyscalls the size of the allowlist.
	Seccomp         string `json:"seccomp,omitempty"`
	SeccompMode     int    `json:"seccomp_mode"`
	SeccompSyscalls int    `json:"seccomp_syscalls,omitempty"`
	// Landlock is "full", "partial" or "none"; LandlockABI the kernel's.
	Landlock    string `json:"landlock,omitempty"`
	LandlockABI int    `json:"landlock_abi"`
	CapsDropped bool   `json:"caps_dropped"`
	// Rlimits are the limits set, by name (core, nofile, nproc, data).
	Rlimits map[string]uint64 `json:"rlimits,omitempty"`
	UID     int               `json:"uid"`
	GID     int               `json:"gid"`
	// Status are the kernel's /proc/self/status lines of the sidecar after
	// hardening (NoNewPrivs, Seccomp, Cap*).
	Status map[string]string `json:"status,omitempty"`
}

// Level is a one-word summary of h for metrics labels: "off" (disabled),
// "unsupported" (no hardening on this system), "full" (seccomp filter, no
// capability, no_new_privs and Landlock fully enforced) or "partial".
func (h *Hardening) Level() string {
	switch {
	case h == nil || !h.Enabled:
		return "off"
	case !h.Supported:
		return "unsupported"
	case h.NoNewPrivs && h.CapsDropped && h.SeccompMode == 2 && h.Landlock == "full":
		return "full"
	default:
		return "partial"
	}
}

// hardeningOf converts a sidecar's report.
func hardeningOf(p *sidecarv1.Hardening) *Hardening {
	if p == nil {
		return nil
	}
	return &Hardening{
		Enabled: p.GetEnabled(), Supported: p.GetSupported(), NoNewPrivs: p.GetNoNewPrivs(),
		Seccomp: p.GetSeccomp(), SeccompMode: int(p.GetSeccompMode()), SeccompSyscalls: int(p.GetSeccompSyscalls()),
		Landlock: p.GetLandlock(), LandlockABI: int(p.GetLandlockAbi()), CapsDropped: p.GetCapsDropped(),
		Rlimits: p.GetRlimits(), UID: int(p.GetUid()), GID: int(p.GetGid()), Status: p.GetStatus(),
	}
}

// hardenArgs are the hardening flags of a child whose private directory is
// dir; modulePath is the serving sidecar's module (empty for precompile,
// which hardens for its own --wasm and --cache-dir).
func (s *Supervisor) hardenArgs(modulePath, dir string, serve bool) []string {
	h := s.cfg.Hardening
	spec := sidecarplugin.HardenSpec{
		Off: h.Off, ModulePath: modulePath, PrivateDir: dir,
		MaxOpenFiles: h.MaxOpenFiles, MaxProcs: h.MaxProcs, MaxDataBytes: h.MaxDataBytes,
	}
	if serve {
		spec.CacheDir = s.cfg.CacheDir
	}
	return spec.Args()
}

// credential is the SysProcAttr credential of a child, nil to run it as
// the host's own user: RunAs applies only when the host runs as root.
// The child's private directory is handed to that user, since the
// sidecar makes its sockets there.
func (s *Supervisor) credential(dir string) (*syscall.Credential, error) {
	ra := s.cfg.RunAs
	if ra == nil || os.Geteuid() != 0 {
		return nil, nil
	}
	if err := os.Chown(dir, int(ra.UID), int(ra.GID)); err != nil {
		return nil, fmt.Errorf("handing the private dir to uid %d: %w", ra.UID, err)
	}
	return &syscall.Credential{Uid: ra.UID, Gid: ra.GID, NoSetGroups: true}, nil
}
