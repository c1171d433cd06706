package harden

import "github.com/palyra-go/palyra/internal/buildinfo"

// Probe reports what the running system offers the hardening, without
// applying any of it: the kernel's Landlock ABI, whether seccomp filters
// and no_new_privs exist. palyra-sidecar's version mode reports it.
func Probe() buildinfo.KernelSupport { return probe() }
