//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package vault

import (
	"os/exec"
	"syscall"
)

// isolate runs the key command in its own process group and makes a
// cancelled or timed-out run kill the whole group, so a command that
// started children leaves none behind.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
