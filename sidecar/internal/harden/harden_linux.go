//go:build linux

package harden

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// landlockTarget is the newest Landlock ABI whose rights Apply asks for;
// BestEffort downgrades to what the kernel has.
const landlockTarget = 7

// Apply hardens the calling process for good (see the package doc). It
// must run before any untrusted byte is read. A failure of a step that
// must hold is ErrHardenFailed, naming the step; the process must then
// exit. Landlock is best effort: a kernel without it is reported, not an
// error. With cfg.Later, Apply stops after no_new_privs and Restrict does
// the rest.
func Apply(cfg Config) (Report, error) {
	rep := Report{Supported: true, UID: os.Getuid(), GID: os.Getgid()}
	// Load what the Go runtime reads lazily from the file system, while
	// it still may: the local time zone (log timestamps).
	_ = time.Now().Local().String()
	lastCap, err := readLastCap()
	if err != nil {
		return rep, fmt.Errorf("%w: %w", ErrHardenFailed, err)
	}
	later := cfg
	if cfg.Later {
		cfg.MaxDataBytes = 0 // set by Restrict, for the skill
	}
	if rep.Rlimits, err = setRlimits(cfg); err != nil {
		return rep, fmt.Errorf("%w: %w", ErrHardenFailed, err)
	}
	threads := readThreadCreds()
	if err := dropCaps(lastCap, threads); err != nil {
		return rep, fmt.Errorf("%w: %w", ErrHardenFailed, err)
	}
	if !threads.all(func(st map[string]string) bool { return st["NoNewPrivs"] == "1" }) {
		if err := allThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1); err != nil {
			return rep, fmt.Errorf("%w: no_new_privs: %w", ErrHardenFailed, err)
		}
	}
	if cfg.Later {
		rep.Landlock, rep.Seccomp = LandlockPending, SeccompPending
		return rep, nil
	}
	later.MaxDataBytes = 0 // set above
	return rep, Restrict(later, &rep)
}

// Restrict applies what Apply left for later (Config.Later), and is
// Apply's second half otherwise: RLIMIT_DATA of cfg.MaxDataBytes (when
// not 0), the Landlock rules of cfg.ReadOnly and cfg.ReadWrite, the
// seccomp allowlist; then it reads the outcome back from the kernel into
// rep. It must run before the process reads a module byte, and runs once;
// a failure is ErrHardenFailed and the module must not be read.
func Restrict(cfg Config, rep *Report) error {
	status, err := os.Open("/proc/self/status")
	if err != nil {
		return fmt.Errorf("%w: open /proc/self/status: %w", ErrHardenFailed, err)
	}
	defer status.Close()
	if cfg.MaxDataBytes > 0 {
		v, err := setRlimit(unix.RLIMIT_DATA, "data", cfg.MaxDataBytes)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrHardenFailed, err)
		}
		if rep.Rlimits == nil {
			rep.Rlimits = map[string]uint64{}
		}
		rep.Rlimits["data"] = v
	}
	rep.LandlockABI, rep.Landlock, err = restrictFS(cfg)
	if err != nil {
		return fmt.Errorf("%w: landlock: %w", ErrHardenFailed, err)
	}
	if !seccomp.Supported() {
		rep.Seccomp = SeccompUnsupported
	} else {
		n, err := loadSeccomp()
		if err != nil {
			return fmt.Errorf("%w: seccomp: %w", ErrHardenFailed, err)
		}
		rep.Seccomp, rep.SeccompSyscalls = SeccompFilter, n
	}

	if rep.Status, err = readStatus(status); err != nil {
		return fmt.Errorf("%w: reading back /proc/self/status: %w", ErrHardenFailed, err)
	}
	rep.NoNewPrivs = rep.Status["NoNewPrivs"] == "1"
	rep.SeccompMode, _ = strconv.Atoi(rep.Status["Seccomp"])
	rep.CapsDropped = true
	sets := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
	if rep.UID == 0 {
		sets = append(sets, "CapBnd") // root can and must empty it
	}
	for _, k := range sets {
		if v, err := strconv.ParseUint(rep.Status[k], 16, 64); err != nil || v != 0 {
			rep.CapsDropped = false
		}
	}
	switch {
	case !rep.NoNewPrivs:
		return fmt.Errorf("%w: the kernel shows NoNewPrivs %q after setting it", ErrHardenFailed, rep.Status["NoNewPrivs"])
	case !rep.CapsDropped:
		return fmt.Errorf("%w: capabilities left after dropping them: CapEff %s CapPrm %s CapBnd %s", ErrHardenFailed, rep.Status["CapEff"], rep.Status["CapPrm"], rep.Status["CapBnd"])
	case rep.Seccomp == SeccompFilter && rep.SeccompMode != 2:
		return fmt.Errorf("%w: the kernel shows Seccomp %q after loading the filter", ErrHardenFailed, rep.Status["Seccomp"])
	}
	return nil
}

// readLastCap reads the highest capability number the kernel knows.
func readLastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, fmt.Errorf("reading cap_last_cap: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 || n > 63 {
		return 0, fmt.Errorf("cap_last_cap %q is not a capability number", b)
	}
	return n, nil
}

// setRlimits sets the process's resource limits (process-wide).
func setRlimits(cfg Config) (map[string]uint64, error) {
	nofile, nproc := cfg.MaxOpenFiles, cfg.MaxProcs
	if nofile == 0 {
		nofile = DefaultMaxOpenFiles
	}
	if nproc == 0 {
		nproc = DefaultMaxProcs
	}
	lims := []struct {
		name string
		res  int
		v    uint64
	}{
		{"core", unix.RLIMIT_CORE, 0},
		{"nofile", unix.RLIMIT_NOFILE, nofile},
		{"nproc", unix.RLIMIT_NPROC, nproc},
	}
	if cfg.MaxDataBytes > 0 {
		lims = append(lims, struct {
			name string
			res  int
			v    uint64
		}{"data", unix.RLIMIT_DATA, cfg.MaxDataBytes})
	}
	out := make(map[string]uint64, len(lims))
	for _, l := range lims {
		v, err := setRlimit(l.res, l.name, l.v)
		if err != nil {
			return out, err
		}
		out[l.name] = v
	}
	return out, nil
}

// setRlimit sets one limit (soft = hard) to v, or to the hard limit when
// that is lower (never raise: an unprivileged process cannot), and
// returns the value set.
func setRlimit(res int, name string, v uint64) (uint64, error) {
	var cur unix.Rlimit
	if err := unix.Getrlimit(res, &cur); err != nil {
		return 0, fmt.Errorf("getrlimit %s: %w", name, err)
	}
	v = min(v, cur.Max)
	if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
		return 0, fmt.Errorf("setrlimit %s to %d: %w", name, v, err)
	}
	return v, nil
}

// dropCaps empties every capability set of every thread: bounding and
// ambient first (dropping from the bounding set needs CAP_SETPCAP, which
// the capset below removes), then effective, permitted and inheritable.
// A step that every thread already shows done (threads) is skipped: each
// is a psx broadcast, and the palyra-sidecar binary does them before the Go
// runtime starts a thread (cmd/palyra-sidecar/prestart_linux.go).
func dropCaps(lastCap int, threads threadCreds) error {
	bounded := threads.allZero("CapBnd")
	for c := 0; c <= lastCap && !bounded; c++ {
		err := allThreadsPrctl(unix.PR_CAPBSET_DROP, uintptr(c))
		if errors.Is(err, unix.EPERM) && c == 0 {
			// No CAP_SETPCAP: an unprivileged sidecar user cannot shrink
			// its bounding set, nor use it (no_new_privs, no execve).
			break
		}
		if err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if !threads.allZero("CapAmb") {
		if err := allThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("clearing the ambient capabilities: %w", err)
		}
	}
	if threads.allZero("CapEff", "CapPrm", "CapInh") {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	_, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	if e != 0 {
		return fmt.Errorf("capset to none: %w", e)
	}
	return nil
}

// threadCreds are the capability sets and NoNewPrivs of every thread of the
// process, as /proc/self/task/*/status shows them; nil when they could not
// be read, which makes every step run.
type threadCreds []map[string]string

// readThreadCreds reads threadCreds. A thread made after the read is a
// clone of one read, with its sets.
func readThreadCreds() threadCreds {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var out threadCreds
	for _, t := range tasks {
		f, err := os.Open("/proc/self/task/" + t.Name() + "/status")
		if err != nil {
			return nil
		}
		st, err := readStatus(f)
		f.Close()
		if err != nil {
			return nil
		}
		out = append(out, st)
	}
	return out
}

// allZero reports whether every thread shows every set of keys empty.
func (tc threadCreds) allZero(keys ...string) bool {
	return tc.all(func(st map[string]string) bool {
		for _, k := range keys {
			if v, err := strconv.ParseUint(st[k], 16, 64); err != nil || v != 0 {
				return false
			}
		}
		return true
	})
}

// all reports whether every thread passes ok (false when none was read).
func (tc threadCreds) all(ok func(map[string]string) bool) bool {
	if len(tc) == 0 {
		return false
	}
	for _, st := range tc {
		if !ok(st) {
			return false
		}
	}
	return true
}

// allThreadsPrctl runs prctl on every thread of the process.
func allThreadsPrctl(option int, arg2 uintptr) error {
	_, _, e := psx.Syscall6(unix.SYS_PRCTL, uintptr(option), arg2, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// restrictFS applies the Landlock ruleset of cfg on every thread and
// reports the kernel's ABI and how much of the ruleset it enforces.
func restrictFS(cfg Config) (abi int, outcome string, err error) {
	abi, err = llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return 0, LandlockNone, nil
	}
	var rules []landlock.Rule
	var roFiles, roDirs []string
	for _, p := range cfg.ReadOnly {
		fi, err := os.Stat(p)
		if err != nil {
			return abi, "", fmt.Errorf("read-only path: %w", err)
		}
		if fi.IsDir() {
			roDirs = append(roDirs, p)
		} else {
			roFiles = append(roFiles, p)
		}
	}
	if len(roFiles) > 0 {
		rules = append(rules, landlock.ROFiles(roFiles...))
	}
	if len(roDirs) > 0 {
		rules = append(rules, landlock.RODirs(roDirs...))
	}
	if len(cfg.ReadWrite) > 0 {
		rules = append(rules, landlock.RWDirs(cfg.ReadWrite...))
	}
	// No net rule: TCP bind and connect are denied (ABI >= 4).
	if err := landlock.V7.BestEffort().Restrict(rules...); err != nil {
		return abi, "", err
	}
	if abi >= landlockTarget {
		return abi, LandlockFull, nil
	}
	return abi, LandlockPartial, nil
}

// loadSeccomp loads the allowlist of syscalls.go on every thread and
// returns how many syscalls it names.
func loadSeccomp() (int, error) {
	groups, n := policyGroups()
	err := seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy:     seccomp.Policy{DefaultAction: seccomp.ActionErrno, Syscalls: groups},
	})
	return n, err
}

// readStatus re-reads the kernel's status file from its start (the file
// is regenerated at each read from offset 0) and picks statusKeys.
func readStatus(f *os.File) (map[string]string, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return ParseStatus(b), nil
}
