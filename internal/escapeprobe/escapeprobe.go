// Package escapeprobe runs the escape probes of a hardened sidecar: a
// test-only build of palyra-sidecar (build tag palyraprobe) that hardens
// itself exactly as the serving sidecar and the precompile child do, with
// the flags the supervisor gives them (sidecarplugin.HardenSpec), then
// tries what a guest that escaped wasmtime would: read /etc/passwd and a
// file of the host's state dir, connect to and listen on TCP, open a
// netlink socket, execve /bin/sh, fork, ptrace, read and signal its parent,
// write outside its own directory. Every attempt must fail; two control
// attempts (read its module, write its private dir) must succeed, so that
// a probe that merely broke counts as a failure too. While the hardened
// probe waits, Run reads NoNewPrivs, Seccomp and the capability sets from
// its /proc/<pid>/status.
//
// The reliability suite (palyra-bench --reliability, R8) and this
// package's test call it:
//
//	bin, err := escapeprobe.Build(ctx, dir)          // go build -tags palyraprobe
//	res, status, err := escapeprobe.Run(ctx, escapeprobe.Options{Probe: bin})
//	// res: one ProbeResult per attempt and child; Held says it held.
//	// status["serve"]["Seccomp"] == "2", ...
package escapeprobe

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// Children are the kinds of child the probe stands for.
var Children = []string{"serve", "precompile"}

// StatusKeys are the /proc/<pid>/status lines StatusLines holds.
var StatusKeys = []string{"NoNewPrivs", "Seccomp", "Seccomp_filters", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}

// ProbeResult is one attempt of one probe child.
type ProbeResult struct {
	// Child is "serve" or "precompile".
	Child string `json:"child"`
	// Name is the attempt (open_etc_passwd, tcp_connect, execve_sh,
	// ptrace_parent, write_outside, ...); Target what it aimed at.
	Name   string `json:"name"`
	Target string `json:"target"`
	// Control attempts must succeed; all others must fail.
	Control bool `json:"control"`
	// Succeeded is whether the attempt succeeded; Err its error.
	Succeeded bool   `json:"succeeded"`
	Err       string `json:"err,omitempty"`
	// Held is true when the outcome is the one hardening requires.
	Held bool `json:"held"`
}

// StatusLines are the hardening lines of /proc/<pid>/status of each probe
// child while it ran hardened, by child.
type StatusLines map[string]map[string]string

// Options configure Run.
type Options struct {
	// Probe is the probe build of palyra-sidecar (Build makes one).
	// Required.
	Probe string
	// Dir is where Run makes its scratch tree (a state dir with a file, a
	// private dir, a cache dir, a module, an outside dir); "" is
	// os.TempDir(). Everything Run makes is removed before it returns.
	Dir string
	// StateFile is a file of the host's state dir the probe must not
	// read; "" makes one in the scratch tree.
	StateFile string
	// Hardening are the rlimits given to the probe, as to a sidecar.
	Hardening sidecarplugin.HardenSpec
	// Credential, when set, runs the probe as that user (the host's
	// RunAs).
	Credential *syscall.Credential
}

// Build builds the probe sidecar (go build -tags palyraprobe
// -ldflags=buildinfo.SidecarLDFlags ./cmd/palyra-sidecar) into dir and returns its path.
func Build(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "palyra-sidecar-probe")
	cmd := exec.CommandContext(ctx, examplebuild.GoCommand(), "build", "-tags", "palyraprobe", "-ldflags="+buildinfo.SidecarLDFlags, "-o", out, "github.com/palyra-go/palyra/cmd/palyra-sidecar")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("escapeprobe: building the probe sidecar: %w: %s", err, b)
	}
	return out, nil
}

// report is the probe's output (sidecar.ProbeReport).
type report struct {
	As        string `json:"as"`
	Pid       int    `json:"pid"`
	Hardening struct {
		Enabled bool `json:"enabled"`
	} `json:"hardening"`
	Attempts []struct {
		Name    string `json:"name"`
		Target  string `json:"target"`
		Control bool   `json:"control"`
		OK      bool   `json:"ok"`
		Err     string `json:"err"`
	} `json:"attempts"`
}

// Run runs the probe as each of Children and returns every attempt and
// the status lines. An error means a probe could not be run or did not
// report (an execve that succeeded replaces the probe, so it is one).
func Run(ctx context.Context, o Options) ([]ProbeResult, StatusLines, error) {
	if o.Probe == "" {
		return nil, nil, errors.New("escapeprobe: Options.Probe is required")
	}
	root, err := os.MkdirTemp(o.Dir, "escapeprobe-")
	if err != nil {
		return nil, nil, fmt.Errorf("escapeprobe: %w", err)
	}
	defer os.RemoveAll(root)
	dirs := map[string]string{}
	for _, d := range []string{"state", "cache", "outside", "modules"} {
		dirs[d] = filepath.Join(root, d)
		if err := os.Mkdir(dirs[d], 0o755); err != nil {
			return nil, nil, fmt.Errorf("escapeprobe: %w", err)
		}
	}
	stateFile := o.StateFile
	if stateFile == "" {
		stateFile = filepath.Join(dirs["state"], "inventory.db")
		if err := os.WriteFile(stateFile, []byte("not for sidecars"), 0o644); err != nil {
			return nil, nil, fmt.Errorf("escapeprobe: %w", err)
		}
	}
	module := filepath.Join(dirs["modules"], "skill.wasm")
	if err := os.WriteFile(module, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		return nil, nil, fmt.Errorf("escapeprobe: %w", err)
	}
	if o.Credential != nil {
		for _, p := range []string{root, dirs["cache"], dirs["modules"]} {
			if err := os.Chown(p, int(o.Credential.Uid), int(o.Credential.Gid)); err != nil {
				return nil, nil, fmt.Errorf("escapeprobe: %w", err)
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("escapeprobe: %w", err)
	}
	var accepted atomic.Int64
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	defer func() {
		ln.Close()
		<-acceptDone
	}()

	var results []ProbeResult
	status := StatusLines{}
	for _, child := range Children {
		priv, err := os.MkdirTemp(root, child+"-")
		if err != nil {
			return nil, nil, fmt.Errorf("escapeprobe: %w", err)
		}
		if o.Credential != nil {
			if err := os.Chown(priv, int(o.Credential.Uid), int(o.Credential.Gid)); err != nil {
				return nil, nil, fmt.Errorf("escapeprobe: %w", err)
			}
		}
		spec := o.Hardening
		spec.Off, spec.PrivateDir = false, priv
		args := []string{"probe", "--as", child}
		if child == "serve" {
			spec.ModulePath, spec.CacheDir = module, dirs["cache"]
		} else {
			spec.ModulePath, spec.CacheDir = "", ""
			args = append(args, "--wasm", module, "--cache-dir", dirs["cache"])
		}
		args = append(args, spec.Args()...)
		args = append(args, "--state-file", stateFile, "--tcp", ln.Addr().String(), "--outside-dir", dirs["outside"])
		rep, st, err := runOne(ctx, o.Probe, args, priv, o.Credential)
		if err != nil {
			return nil, nil, fmt.Errorf("escapeprobe: probe as %s: %w", child, err)
		}
		status[child] = st
		for _, a := range rep.Attempts {
			r := ProbeResult{Child: child, Name: a.Name, Target: a.Target, Control: a.Control, Succeeded: a.OK, Err: a.Err}
			r.Held = a.OK == a.Control
			if a.Name == "tcp_connect" && accepted.Load() > 0 {
				r.Succeeded, r.Held = true, false
			}
			if a.Name == "write_outside" {
				if _, err := os.Stat(filepath.Join(dirs["outside"], "escaped")); err == nil {
					r.Succeeded, r.Held = true, false
				}
			}
			results = append(results, r)
		}
	}
	return results, status, nil
}

// runOne runs one probe child, reads its report and, while it waits, its
// /proc/<pid>/status; then closes its stdin and reaps it.
func runOne(ctx context.Context, bin string, args []string, priv string, cred *syscall.Credential) (*report, map[string]string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"TMPDIR=" + priv, "PATH=/usr/bin:/bin"}
	cmd.Dir = priv
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	finish := func() error {
		stdin.Close()
		_, _ = io.Copy(io.Discard, stdout)
		return cmd.Wait()
	}
	line, rerr := bufio.NewReader(stdout).ReadBytes('\n')
	var rep report
	if rerr != nil || json.Unmarshal(line, &rep) != nil {
		werr := finish()
		return nil, nil, fmt.Errorf("no report (output %q, exit %v): %s", line, werr, strings.TrimSpace(stderr.String()))
	}
	b, serr := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if werr := finish(); werr != nil {
		return nil, nil, fmt.Errorf("exit: %w: %s", werr, strings.TrimSpace(stderr.String()))
	}
	if serr != nil {
		return nil, nil, serr
	}
	if !rep.Hardening.Enabled {
		return nil, nil, errors.New("the probe did not harden")
	}
	st := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		for _, want := range StatusKeys {
			if ok && k == want {
				st[k] = strings.TrimSpace(v)
			}
		}
	}
	return &rep, st, nil
}
