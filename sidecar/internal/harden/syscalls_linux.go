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
// test suites (see RATIONALE.md, "Hardened sidecars") and is kept tight:
// a syscall is added here only when a test shows the sidecar needs it.
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
	{"memory: the Go heap, wasmtime's linear memories, guard pages, code pages and copy-on-write memory images",
		[]string{"mmap", "munmap", "mprotect", "madvise", "mremap", "brk", "memfd_create", "ftruncate"}},
	{"threads: the Go runtime's and wasmtime's own threads (new threads through clone, below), their waits and their exits",
		[]string{"futex", "set_robust_list", "rseq", "set_tid_address", "gettid", "getpid", "sched_yield", "sched_getaffinity", "nanosleep", "clock_nanosleep", "exit", "exit_group", "arch_prctl"}},
	{"signals: Go's preemption and wasmtime's trap handling (SIGSEGV on guard pages) inside the process",
		[]string{"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack"}},
	{"time and randomness: clocks outside the vDSO, getrandom for go-plugin's AutoMTLS keys and Go's maps",
		[]string{"clock_gettime", "gettimeofday", "getrandom"}},
	{"files, under Landlock's rules: the module, the precompiled cache (atomic write: temp file, fsync, rename), /proc/self/fd for the verified entry",
		[]string{"openat", "read", "write", "pread64", "pwrite64", "readv", "writev", "close", "fstat", "newfstatat", "statx", "lseek", "fcntl", "fsync", "fdatasync", "renameat", "linkat", "unlinkat", "fchmod", "readlinkat", "getdents64", "access", "faccessat2", "dup3", "ioctl"}},
	{"event loop: Go's netpoller and go-plugin's pipes",
		[]string{"epoll_create1", "epoll_ctl", "epoll_pwait", "eventfd2", "pipe2"}},
	{"unix sockets of go-plugin and its GRPCBroker (new sockets: AF_UNIX only, below)",
		[]string{"bind", "listen", "accept4", "connect", "getsockname", "getpeername", "getsockopt", "setsockopt", "sendmsg", "recvmsg", "sendto", "recvfrom", "shutdown"}},
	{"CPU profiling (PALYRA_SIDECAR_CPUPROFILE_DIR): Go's per-thread profiling timers",
		[]string{"timer_create", "timer_settime", "timer_delete", "setitimer"}},
	{"resources: reading limits (prlimit64 may lower them: the hard limits are set already), lowering the compile threads' priority",
		[]string{"prlimit64", "getrusage", "setpriority", "getuid", "geteuid", "getgid", "getegid"}},
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
		{Name: "socketpair", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_UNIX}}},
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
