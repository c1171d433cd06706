package supervisor

import (
	"fmt"
	"os"
	"strconv"
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
	// MaxOpenFiles and MaxProcs set RLIMIT_NOFILE and RLIMIT_NPROC in
	// each sidecar; 0 keeps the sidecar's defaults (256 open files, 4096
	// tasks of its user).
	MaxOpenFiles, MaxProcs uint64
	// MaxDataBytes sets RLIMIT_DATA (writable private memory) of serving
	// sidecars. 0 derives it from the skill's limits: DataBaseBytes plus
	// one linear memory per instance the sidecar may hold at once
	// (PreparedInstances + MaxConcurrentCalls) at the skill's memory limit
	// (64 MiB when unset) times its memory count. RLIMIT_AS is never set:
	// wasmtime reserves several GiB of address space per linear memory.
	MaxDataBytes uint64
}

// DataBaseBytes is the part of a serving sidecar's derived RLIMIT_DATA
// that is not guest memory: the Go heap, gRPC, wasmtime's compiled code
// and its compiler's working memory on a cache miss. A sidecar idles at
// 140-180 MiB of VmData with an echo module (measured); 1 GiB leaves room
// for compiling a large module.
const DataBaseBytes = 1 << 30

// defaultGuestMemoryBytes is the sidecar's default linear-memory limit
// (wasmrt.DefaultMemoryBytes).
const defaultGuestMemoryBytes = 64 << 20

// dataLimit is the RLIMIT_DATA of t's sidecar.
func (s *Supervisor) dataLimit(t *Target) uint64 {
	if s.cfg.Hardening.MaxDataBytes != 0 {
		return s.cfg.Hardening.MaxDataBytes
	}
	mem := uint64(defaultGuestMemoryBytes)
	if t.Limits.MemoryBytes > 0 {
		mem = uint64(t.Limits.MemoryBytes)
	}
	memories := uint64(1)
	if t.Limits.Memories > 1 {
		memories = uint64(t.Limits.Memories)
	}
	instances := uint64(s.cfg.PreparedInstances) + uint64(s.cfg.MaxConcurrentCalls)
	return DataBaseBytes + mem*memories*instances
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

// hardenDataLimit is the RLIMIT_DATA a serving sidecar sets on itself
// when LoadSkill gives it t (0 with the hardening off).
func (s *Supervisor) hardenDataLimit(t *Target) uint64 {
	if s.cfg.Hardening.Off {
		return 0
	}
	return s.dataLimit(t)
}

// hardenArgs are the hardening flags of a child whose private directory is
// dir. A serving sidecar is started before its skill is known (a spare may
// take any), so the per-skill part waits for LoadSkill (the module's
// Landlock rule, the cache dir, hardenDataLimit), before the sidecar reads
// a module byte; a precompile child hardens for its own --wasm and
// --cache-dir, its memory being the compile budget's business.
func (s *Supervisor) hardenArgs(dir string) []string {
	h := s.cfg.Hardening
	return sidecarplugin.HardenSpec{
		Off: h.Off, PrivateDir: dir, MaxOpenFiles: h.MaxOpenFiles, MaxProcs: h.MaxProcs,
	}.Args()
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

// socketGroup is go-plugin's UnixSocketConfig.Group for a child running as
// cred: both ends' socket dirs and sockets then belong to its group with
// group write, so that a sidecar of another user can reach the broker's
// socket and the supervisor its. "" (the default, 0700 dirs) otherwise.
func socketGroup(cred *syscall.Credential) string {
	if cred == nil {
		return ""
	}
	return strconv.FormatUint(uint64(cred.Gid), 10)
}
