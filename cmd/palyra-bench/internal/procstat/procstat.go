// Package procstat reads what the bench needs of a process from Linux's
// /proc: its resident set size. The density figures of scenario E come
// from it, for sidecars, peers and the host-embedding process alike.
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
