package harden

import (
	seccomp "github.com/elastic/go-seccomp-bpf"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/palyra-go/palyra/internal/buildinfo"
)

func probe() buildinfo.KernelSupport {
	k := buildinfo.KernelSupport{Linux: true, LandlockTarget: landlockTarget, Seccomp: seccomp.Supported()}
	if abi, err := llsys.LandlockGetABIVersion(); err == nil {
		k.LandlockABI = abi
	}
	// PR_GET_NO_NEW_PRIVS is EINVAL on a kernel without the bit.
	_, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	k.NoNewPrivs = err == nil
	return k
}
