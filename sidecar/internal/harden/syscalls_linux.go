//go:build linux

package harden

import (
	"os"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// The seccomp allowlist of a hardened sidecar: every syscall the sidecar
// makes after Apply, serving go-plugin over unix sockets, loading and
// compiling a module with wasmtime and running guest code, and nothing
// else. It was collected with strace -f over the sidecar and supervisor
// test suites, from the seccomp() call on (see RATIONALE.md, "Hardened
// sidecars"), and is kept tight: a syscall is here because a hardened
// sidecar made it in a test, or, for brk, mremap, clock_gettime and
// gettimeofday, because malloc and the clocks fall back to them (and
// fchownat, fchmodat for go-plugin's socket group under RunAs).
//
// Not listed, so refused with EPERM: execve and execveat, fork and vfork,
// ptrace, process_vm_readv and process_vm_writev, kill of another process,
// mount, bpf, perf_event_open, io_uring, keyctl, unshare and setns, the
// *id family, chroot, module loading and every other syscall.

// allowed are the unconditional groups.
var allowed = []struct {
	why   string
	names []string
}{
	{"memory: the Go heap, malloc (brk, mremap) of wasmtime and glibc, linear memories, guard pages, code pages, memfd memory images",
		[]string{"mmap", "munmap", "mprotect", "madvise", "mremap", "brk", "memfd_create"}},
	{"threads: the Go runtime's and wasmtime's threads (new ones through clone, below), their waits and their exits",
		[]string{"futex", "set_robust_list", "rseq", "gettid", "getpid", "sched_yield", "sched_getaffinity", "nanosleep", "exit", "exit_group"}},
	{"signals: Go's preemption (SIGURG to its own threads: tgkill, below) and wasmtime's trap handling (SIGSEGV on guard pages)",
		[]string{"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack"}},
	{"time and randomness: clocks when the vDSO is unavailable, getrandom for the TLS keys and Go's maps",
		[]string{"clock_gettime", "gettimeofday", "getrandom"}},
	{"files, within Landlock's rules: the module, the precompiled cache (temp file, fsync, fchmod, rename or link, unlink), /proc/self/fd of the verified entry",
		[]string{"openat", "read", "write", "close", "fstat", "newfstatat", "statx", "lseek", "fcntl", "fsync", "renameat", "linkat", "unlinkat", "fchmod", "ioctl"}},
	{"socket group: go-plugin gives its socket dir and socket to the supervisor's group when the sidecar runs as another user (RunAs)",
		[]string{"fchownat", "fchmodat"}},
	{"event loop: Go's netpoller and go-plugin's pipes",
		[]string{"epoll_ctl", "epoll_pwait", "pipe2"}},
	{"unix sockets of go-plugin and its GRPCBroker (new sockets are AF_UNIX only, below)",
		[]string{"bind", "listen", "accept4", "connect", "getsockname", "getpeername", "getsockopt", "setsockopt"}},
	{"CPU profiling (PALYRA_SIDECAR_CPUPROFILE_DIR): Go's per-thread profiling timers",
		[]string{"timer_create", "timer_settime", "timer_delete", "setitimer"}},
	{"priority: wasmrt lowers its compile threads' priority (only lowering is possible without CAP_SYS_NICE)",
		[]string{"setpriority"}},
}

// policyGroups is the filter of Apply and the number of syscalls it
// names.
func policyGroups() ([]seccomp.SyscallGroup, int) {
	var names []string
	for _, g := range allowed {
		names = append(names, g.names...)
	}
	pid := uint64(os.Getpid())
	conditional := []seccomp.NameWithConditions{
		// New threads only: clone must carry CLONE_THREAD (no new process).
		{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_THREAD}}},
		// Sockets: AF_UNIX only, no TCP, UDP, netlink or raw sockets.
		{Name: "socket", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_UNIX}}},
		// Signals to the process's own threads only (Go's preemption).
		{Name: "tgkill", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: pid}}},
	}
	return []seccomp.SyscallGroup{
		{Action: seccomp.ActionAllow, Names: names, NamesWithCondtions: conditional},
		// clone3 passes its flags in memory, which a filter cannot read: it
		// fails with ENOSYS, so that the C library falls back to clone.
		{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
	}, len(names) + len(conditional)
}
