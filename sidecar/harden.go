package sidecar

import (
	"flag"
	"os"
	"slices"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	"github.com/palyra-go/palyra/sidecar/internal/harden"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// hardenFlags are the hardening flags of both modes (see
// sidecarplugin.HardenSpec).
type hardenFlags struct {
	on                           bool
	module, cacheDir, privateDir string
	nofile, nproc, data          uint64
}

// register adds the flags to fs; the module and cache flags only to the
// serving mode (the precompile mode hardens for its --wasm and
// --cache-dir).
func (h *hardenFlags) register(fs *flag.FlagSet, serve bool) {
	fs.BoolVar(&h.on, sidecarplugin.FlagHarden, true, "harden the process before reading any module (Linux)")
	if serve {
		fs.StringVar(&h.module, sidecarplugin.FlagHardenModule, "", "module `file` the sidecar may read")
		fs.StringVar(&h.cacheDir, sidecarplugin.FlagHardenCacheDir, "", "precompiled-module cache `dir` the sidecar may read and write")
	}
	fs.StringVar(&h.privateDir, sidecarplugin.FlagHardenPrivateDir, "", "private `dir` (default: the temporary directory) the sidecar may read and write")
	fs.Uint64Var(&h.nofile, sidecarplugin.FlagHardenNofile, 0, "RLIMIT_NOFILE (0: default)")
	fs.Uint64Var(&h.nproc, sidecarplugin.FlagHardenNproc, 0, "RLIMIT_NPROC (0: default)")
	fs.Uint64Var(&h.data, sidecarplugin.FlagHardenData, 0, "RLIMIT_DATA in bytes (0: none)")
}

// apply hardens the process as the flags say, allowing read access to
// readOnly and read-write access to readWrite besides the private
// directory. With --harden=false it applies nothing and reports so.
func (h *hardenFlags) apply(readOnly, readWrite []string) (*sidecarv1.Hardening, error) {
	if !h.on {
		return &sidecarv1.Hardening{Enabled: false, Uid: int32(os.Getuid()), Gid: int32(os.Getgid())}, nil
	}
	priv := h.privateDir
	if priv == "" {
		priv = os.TempDir()
	}
	cfg := harden.Config{
		ReadWrite:    append([]string{priv}, readWrite...),
		MaxOpenFiles: h.nofile,
		MaxProcs:     h.nproc,
		MaxDataBytes: h.data,
	}
	for _, p := range readOnly {
		if p != "" {
			cfg.ReadOnly = append(cfg.ReadOnly, p)
		}
	}
	rep, err := harden.Apply(cfg)
	return hardeningToProto(rep), err
}

// applyServe hardens a serving sidecar. Without --harden-module (the
// supervisor starts every serving sidecar before it knows the skill: a
// spare may take any), the per-skill part waits for LoadSkill: the
// returned laterHarden applies it. With --harden-module, everything is
// applied now and laterHarden is nil.
func (h *hardenFlags) applyServe() (*sidecarv1.Hardening, *laterHarden, error) {
	if !h.on || h.module != "" {
		hr, err := h.apply([]string{h.module}, nonEmpty(h.cacheDir))
		return hr, nil, err
	}
	priv := h.privateDir
	if priv == "" {
		priv = os.TempDir()
	}
	cfg := harden.Config{
		ReadWrite:    []string{priv},
		MaxOpenFiles: h.nofile,
		MaxProcs:     h.nproc,
		Later:        true,
	}
	rep, err := harden.Apply(cfg)
	if err != nil {
		return hardeningToProto(rep), nil, err
	}
	return hardeningToProto(rep), &laterHarden{base: cfg, rep: rep}, nil
}

// laterHarden is the per-skill part of a serving sidecar's hardening,
// applied by LoadSkill before it reads the module (harden.Restrict): the
// Landlock rules of the module file, the cache dir and the private dir,
// and RLIMIT_DATA for the skill's limits.
type laterHarden struct {
	base harden.Config
	rep  harden.Report
}

// apply restricts the process for a module at modulePath ("" when the
// module came as bytes) and the cache dir ("" for none), and returns the
// whole report.
func (l *laterHarden) apply(modulePath, cacheDir string, dataBytes uint64) (*sidecarv1.Hardening, error) {
	cfg := l.base
	cfg.ReadOnly = nonEmpty(modulePath)
	cfg.ReadWrite = append(slices.Clip(cfg.ReadWrite), nonEmpty(cacheDir)...)
	cfg.MaxDataBytes = dataBytes
	err := harden.Restrict(cfg, &l.rep)
	return hardeningToProto(l.rep), err
}

// hardeningToProto is the wire form of a harden.Report.
func hardeningToProto(r harden.Report) *sidecarv1.Hardening {
	return &sidecarv1.Hardening{
		Enabled:         true,
		Supported:       r.Supported,
		NoNewPrivs:      r.NoNewPrivs,
		Seccomp:         r.Seccomp,
		SeccompMode:     int32(r.SeccompMode),
		SeccompSyscalls: int32(r.SeccompSyscalls),
		Landlock:        r.Landlock,
		LandlockAbi:     int32(r.LandlockABI),
		CapsDropped:     r.CapsDropped,
		Rlimits:         r.Rlimits,
		Uid:             int32(r.UID),
		Gid:             int32(r.GID),
		Status:          r.Status,
	}
}
