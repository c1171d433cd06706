package sidecarplugin

import "strconv"

// Hardening flags of palyra-sidecar, in its serving mode (before any
// other argument) and in its precompile mode. The supervisor builds them
// with HardenSpec.Args; the sidecar parses them. One definition for both
// ends, so that what the supervisor allows is what the sidecar enforces.
const (
	// FlagHarden turns the sidecar's self-hardening on (the default) or
	// off (--harden=false, reported in the sidecar's state).
	FlagHarden = "harden"
	// FlagHardenModule is the module file the serving sidecar may read.
	FlagHardenModule = "harden-module"
	// FlagHardenCacheDir is the precompiled-module cache the sidecar may
	// read and write.
	FlagHardenCacheDir = "harden-cache-dir"
	// FlagHardenPrivateDir is the sidecar's private directory (its
	// TMPDIR, where go-plugin's sockets live), read-write.
	FlagHardenPrivateDir = "harden-private-dir"
	// FlagHardenNofile, FlagHardenNproc and FlagHardenData set
	// RLIMIT_NOFILE, RLIMIT_NPROC and RLIMIT_DATA (0: the sidecar's
	// default; for data: no limit).
	FlagHardenNofile = "harden-nofile"
	FlagHardenNproc  = "harden-nproc"
	FlagHardenData   = "harden-data"
)

// HardenSpec is what a supervisor tells a sidecar process to allow itself
// after it hardens (see package sidecar/internal/harden).
type HardenSpec struct {
	// Off turns the hardening off (it is reported, never silent).
	Off bool
	// ModulePath is the module file (read-only); empty for the precompile
	// mode, which reads its --wasm.
	ModulePath string
	// CacheDir is the precompiled-module cache (read-write); empty for the
	// precompile mode, which writes its --cache-dir.
	CacheDir string
	// PrivateDir is the sidecar's private directory (read-write).
	PrivateDir string
	// MaxOpenFiles, MaxProcs and MaxDataBytes are rlimits; 0 keeps the
	// sidecar's default.
	MaxOpenFiles, MaxProcs, MaxDataBytes uint64
}

// Args returns the flags that say h, in --name=value form.
func (h HardenSpec) Args() []string {
	if h.Off {
		return []string{"--" + FlagHarden + "=false"}
	}
	var out []string
	add := func(name, v string) {
		if v != "" {
			out = append(out, "--"+name+"="+v)
		}
	}
	num := func(name string, v uint64) {
		if v != 0 {
			add(name, strconv.FormatUint(v, 10))
		}
	}
	add(FlagHardenModule, h.ModulePath)
	add(FlagHardenCacheDir, h.CacheDir)
	add(FlagHardenPrivateDir, h.PrivateDir)
	num(FlagHardenNofile, h.MaxOpenFiles)
	num(FlagHardenNproc, h.MaxProcs)
	num(FlagHardenData, h.MaxDataBytes)
	return out
}
