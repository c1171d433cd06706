// Package procstat reads what the bench needs of a process from Linux's
// /proc: its resident set size, and its proportional set size with the
// anonymous/file split. The density figures of scenario E come from it,
// for sidecars, peers and the host-embedding process alike.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSSKiB returns the resident set size of process pid in KiB (the VmRSS
// line of /proc/PID/status).
func RSSKiB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kib, err := strconv.Atoi(f[1])
			if err != nil {
				return 0, fmt.Errorf("procstat: /proc/%d/status: VmRSS %q: %w", pid, f[1], err)
			}
			return kib, nil
		}
	}
	return 0, fmt.Errorf("procstat: no VmRSS in /proc/%d/status", pid)
}

// Memory is a process's memory from /proc/PID/smaps_rollup, in KiB.
type Memory struct {
	// RSS is the resident set size (Rss), every resident page counted in
	// full.
	RSS int
	// PSS is the proportional set size (Pss): a page shared by k
	// processes counts 1/k in each, so the PSS of processes that share a
	// binary adds up to what they cost the machine together.
	PSS int
	// PSSAnon and PSSFile split PSS into anonymous memory (heaps, stacks,
	// linear memories) and file-backed pages (the binary, its libraries,
	// mapped cache files).
	PSSAnon, PSSFile int
}

// ReadMemory returns the memory of process pid from
// /proc/PID/smaps_rollup (Linux 4.14 and later).
func ReadMemory(pid int) (Memory, error) {
	path := fmt.Sprintf("/proc/%d/smaps_rollup", pid)
	b, err := os.ReadFile(path)
	if err != nil {
		return Memory{}, fmt.Errorf("procstat: %w", err)
	}
	var m Memory
	fields := map[string]*int{"Rss:": &m.RSS, "Pss:": &m.PSS, "Pss_Anon:": &m.PSSAnon, "Pss_File:": &m.PSSFile}
	seen := 0
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		p := fields[f[0]]
		if p == nil {
			continue
		}
		if *p, err = strconv.Atoi(f[1]); err != nil {
			return Memory{}, fmt.Errorf("procstat: %s: %s %q: %w", path, f[0], f[1], err)
		}
		seen++
	}
	if seen != len(fields) {
		return Memory{}, fmt.Errorf("procstat: %s: %d of the fields Rss, Pss, Pss_Anon, Pss_File", path, seen)
	}
	return m, nil
}
