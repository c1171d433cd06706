//go:build palyraprobe

package sidecar

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// The escape probe of the palyraprobe build (test-only; see package
// internal/escapeprobe): `palyra-sidecar probe [HARDEN-FLAGS] --as MODE
// --state-file F --tcp ADDR --outside-dir D` hardens the process exactly as
// the serving sidecar does with the same flags, then tries what an escaped
// guest would, prints one ProbeReport as JSON on stdout and waits for its
// stdin to close, so that the caller can read /proc/<pid>/status of the
// hardened process.
func init() { extraCommands["probe"] = runProbe }

// ProbeAttempt is one escape attempt of the probe.
type ProbeAttempt struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	// Control attempts are ones the hardened process must still be able
	// to do (read its module, write its private dir): they prove the
	// probe ran hardened rather than broken.
	Control bool   `json:"control"`
	OK      bool   `json:"ok"`
	Err     string `json:"err,omitempty"`
}

// ProbeReport is what the probe prints.
type ProbeReport struct {
	As        string               `json:"as"`
	Pid       int                  `json:"pid"`
	Hardening *sidecarv1.Hardening `json:"hardening"`
	Attempts  []ProbeAttempt       `json:"attempts"`
}

func runProbe(args []string, _ ServeConfig, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var hf hardenFlags
	hf.register(fs, true)
	as := fs.String("as", "serve", "which child this probe stands for: serve or precompile")
	wasm := fs.String("wasm", "", "precompile: the module file (read-only)")
	cacheDir := fs.String("cache-dir", "", "precompile: the cache dir (read-write)")
	stateFile := fs.String("state-file", "", "a file of the host's state dir")
	tcp := fs.String("tcp", "", "a 127.0.0.1 listener's address")
	outside := fs.String("outside-dir", "", "a directory outside the sidecar's own")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rep := ProbeReport{As: *as, Pid: os.Getpid()}
	ppid := os.Getppid() // getppid is not on the allowlist
	var err error
	if *as == "precompile" {
		rep.Hardening, err = hf.apply([]string{*wasm}, nonEmpty(*cacheDir))
	} else {
		// As a serving sidecar does: hardened before its skill is known,
		// the per-skill part (Landlock, RLIMIT_DATA) applied as LoadSkill
		// would, before the module is read.
		early := hf
		early.module = ""
		var later *laterHarden
		rep.Hardening, later, err = early.applyServe()
		if err == nil && later != nil {
			rep.Hardening, err = later.apply(hf.module, hf.cacheDir, hf.data)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "palyra-sidecar probe:", err)
		return 1
	}
	module := hf.module
	if *as == "precompile" {
		module = *wasm
	}
	priv := hf.privateDir
	if priv == "" {
		priv = os.TempDir()
	}
	try := func(name, target string, control bool, f func() error) {
		err := f()
		a := ProbeAttempt{Name: name, Target: target, Control: control, OK: err == nil}
		if err != nil {
			a.Err = err.Error()
		}
		rep.Attempts = append(rep.Attempts, a)
	}
	try("read_module", module, true, func() error { _, err := os.ReadFile(module); return err })
	try("write_private_dir", priv, true, func() error {
		p := filepath.Join(priv, "probe-control")
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			return err
		}
		return os.Remove(p)
	})
	try("open_etc_passwd", "/etc/passwd", false, func() error { return openClose("/etc/passwd") })
	try("open_state_file", *stateFile, false, func() error { return openClose(*stateFile) })
	try("tcp_connect", *tcp, false, func() error {
		c, err := net.DialTimeout("tcp", *tcp, 2*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
	try("tcp_listen", "127.0.0.1:0", false, func() error {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			l.Close()
		}
		return err
	})
	try("socket_netlink", "AF_NETLINK", false, func() error {
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
		if err == nil {
			unix.Close(fd)
		}
		return err
	})
	try("execve_sh", "/bin/sh", false, func() error {
		// Should it succeed, the shell replaces the probe and prints
		// "escaped" instead of a report: the caller fails on that.
		return syscall.Exec("/bin/sh", []string{"sh", "-c", "echo escaped"}, nil)
	})
	try("fork", "fork", false, func() error {
		pid, _, e := syscall.RawSyscall(syscall.SYS_FORK, 0, 0, 0)
		if e != 0 {
			return e
		}
		if pid == 0 {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
		return nil
	})
	try("ptrace_parent", fmt.Sprint(ppid), false, func() error {
		err := unix.PtraceAttach(ppid)
		if err == nil {
			_ = unix.PtraceDetach(ppid)
		}
		return err
	})
	try("process_vm_readv_parent", fmt.Sprint(ppid), false, func() error {
		buf := make([]byte, 8)
		_, err := unix.ProcessVMReadv(ppid, []unix.Iovec{{Base: &buf[0], Len: 8}}, []unix.RemoteIovec{{Base: 0x400000, Len: 8}}, 0)
		return err
	})
	try("write_outside", *outside, false, func() error {
		return os.WriteFile(filepath.Join(*outside, "escaped"), []byte("x"), 0o600)
	})
	try("kill_parent", fmt.Sprint(ppid), false, func() error { return unix.Kill(ppid, 0) })
	if err := json.NewEncoder(stdout).Encode(rep); err != nil {
		return 1
	}
	// Wait for the caller to read /proc/<pid>/status.
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

func openClose(path string) error {
	if path == "" {
		return errors.New("no path given")
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}
