//go:build linux

package harden

import (
	"slices"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
)

// TestPolicy checks the allowlist assembles for this architecture (every
// name is a syscall of it, none twice) and names none of the calls an
// escaped guest wants: those must fall to the default action.
func TestPolicy(t *testing.T) {
	groups, n := policyGroups()
	p := seccomp.Policy{DefaultAction: seccomp.ActionErrno, Syscalls: groups}
	if _, err := p.Assemble(); err != nil {
		t.Fatalf("the allowlist does not assemble: %v", err)
	}
	var allowed []string
	for _, g := range groups {
		if g.Action != seccomp.ActionAllow {
			continue
		}
		allowed = append(allowed, g.Names...)
		for _, c := range g.NamesWithCondtions {
			allowed = append(allowed, c.Name)
		}
	}
	if len(allowed) != n {
		t.Errorf("policyGroups counts %d syscalls, names %d", n, len(allowed))
	}
	for _, name := range []string{"execve", "execveat", "fork", "vfork", "clone3", "ptrace", "process_vm_readv", "process_vm_writev",
		"kill", "tkill", "mount", "unshare", "setns", "bpf", "perf_event_open", "io_uring_setup", "keyctl", "setuid", "prctl", "seccomp",
		"landlock_restrict_self", "socketpair", "open_by_handle_at", "init_module", "chroot", "pivot_root"} {
		if slices.Contains(allowed, name) {
			t.Errorf("%s is allowed", name)
		}
	}
}
