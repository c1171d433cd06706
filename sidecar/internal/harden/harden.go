package harden

import (
	"bufio"
	"bytes"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
)

// ErrHardenFailed is returned by Apply when a hardening step that must hold
// (rlimits, capabilities, no_new_privs, seccomp) failed on a system that
// supports it: the sidecar must not go on to read a module.
var ErrHardenFailed = errcode.New("harden_failed", "sidecar hardening failed")

// Default limits of Config.
const (
	// DefaultMaxOpenFiles is the default RLIMIT_NOFILE: a sidecar holds its
	// module, a cache entry, go-plugin's sockets and gRPC's descriptors;
	// a few dozen in practice.
	DefaultMaxOpenFiles = 256
	// DefaultMaxProcs is the default RLIMIT_NPROC. The kernel counts it per
	// user (every thread of every process of the sidecar's uid), and not at
	// all for root, so it bounds a dedicated sidecar user; the seccomp
	// filter already refuses any new process (clone without CLONE_THREAD).
	DefaultMaxProcs = 4096
)

// Config says what a hardened process may still do.
type Config struct {
	// ReadOnly are files or directories the process may read after
	// Apply (the module file).
	ReadOnly []string
	// ReadWrite are directories the process may read and write (its
	// private directory, where go-plugin's sockets live, and the
	// precompiled-module cache).
	ReadWrite []string
	// MaxOpenFiles is RLIMIT_NOFILE; 0 is DefaultMaxOpenFiles.
	MaxOpenFiles uint64
	// MaxProcs is RLIMIT_NPROC; 0 is DefaultMaxProcs.
	MaxProcs uint64
	// MaxDataBytes, when not 0, is RLIMIT_DATA (writable private memory:
	// the Go heap, wasmtime's committed linear memories).
	MaxDataBytes uint64
	// Later is for a serving sidecar started before its skill is known (a
	// spare sidecar, which any skill's next start may take): Apply then
	// sets the rlimits but RLIMIT_DATA, drops the capabilities and sets
	// no_new_privs, and leaves to Restrict, which the sidecar calls when
	// LoadSkill names the module and before it reads a byte of it,
	// RLIMIT_DATA for the skill, the file-system rules (Landlock:
	// ReadOnly, ReadWrite) and the seccomp filter. Nothing untrusted
	// reaches the process before Restrict: only the supervisor's
	// go-plugin handshake.
	Later bool
}

// Landlock outcomes of Report.Landlock.
const (
	LandlockFull    = "full"    // every restriction asked is enforced
	LandlockPartial = "partial" // enforced with an older ABI: some rights not restricted
	LandlockNone    = "none"    // the kernel has no Landlock
	LandlockPending = "pending" // Config.Later: Restrict has not run yet
)

// Seccomp outcomes of Report.Seccomp.
const (
	SeccompFilter      = "filter"      // the allowlist is loaded on every thread
	SeccompUnsupported = "unsupported" // the kernel or system has no seccomp
	SeccompPending     = "pending"     // Config.Later: Restrict has not run yet
)

// Report is the outcome of Apply, read back from the kernel where it can
// be.
type Report struct {
	// Supported is false where Apply is a no-op (not Linux).
	Supported bool `json:"supported"`
	// NoNewPrivs is the kernel's NoNewPrivs of the process.
	NoNewPrivs bool `json:"no_new_privs"`
	// Seccomp is SeccompFilter or SeccompUnsupported; SeccompMode is the
	// kernel's Seccomp field (2 is filter mode) and SeccompSyscalls the
	// number of syscalls the allowlist names.
	Seccomp         string `json:"seccomp"`
	SeccompMode     int    `json:"seccomp_mode"`
	SeccompSyscalls int    `json:"seccomp_syscalls,omitempty"`
	// Landlock is LandlockFull, LandlockPartial or LandlockNone;
	// LandlockABI the kernel's ABI version (0 without Landlock).
	Landlock    string `json:"landlock"`
	LandlockABI int    `json:"landlock_abi"`
	// CapsDropped is true when the kernel shows no capability left in the
	// effective, permitted, inheritable and ambient sets, and, for root,
	// in the bounding set (an unprivileged user cannot shrink its bounding
	// set, and cannot use it either: no_new_privs, no execve).
	CapsDropped bool `json:"caps_dropped"`
	// Rlimits are the limits set (soft = hard), by name: core, nofile,
	// nproc, data.
	Rlimits map[string]uint64 `json:"rlimits,omitempty"`
	// UID and GID are the process's real ids.
	UID int `json:"uid"`
	GID int `json:"gid"`
	// Status are the kernel's lines of /proc/self/status after Apply:
	// NoNewPrivs, Seccomp, Seccomp_filters, CapInh, CapPrm, CapEff,
	// CapBnd, CapAmb.
	Status map[string]string `json:"status,omitempty"`
}

// statusKeys are the lines of /proc/self/status the Report carries.
var statusKeys = []string{"NoNewPrivs", "Seccomp", "Seccomp_filters", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}

// ParseStatus picks the hardening lines (NoNewPrivs, Seccomp,
// Seccomp_filters and the Cap* sets) of a /proc/<pid>/status file.
func ParseStatus(b []byte) map[string]string {
	out := make(map[string]string, len(statusKeys))
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		for _, want := range statusKeys {
			if k == want {
				out[k] = strings.TrimSpace(v)
			}
		}
	}
	return out
}
