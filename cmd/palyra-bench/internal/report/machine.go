package report

import (
	"bufio"
	"io"
	"maps"
	"os"
	"runtime"
	"strings"
)

// unknownCPU is the CPU model reported when it cannot be found.
const unknownCPU = "unknown"

// DetectMachine describes the running machine: OS, architecture, logical
// cores and Go version from package runtime, the CPU model from the first
// "model name" line of /proc/cpuinfo ("unknown" where that file is missing
// or has no such line, as on macOS, Windows and most arm64 Linux kernels),
// and a copy of versions.
func DetectMachine(versions map[string]string) Machine {
	return Machine{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		Cores:     runtime.NumCPU(),
		CPUModel:  cpuModelFromFile("/proc/cpuinfo"),
		GoVersion: runtime.Version(),
		Versions:  maps.Clone(versions),
	}
}

// cpuModelFromFile returns the CPU model named in the cpuinfo file at path,
// or unknownCPU.
func cpuModelFromFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return unknownCPU
	}
	defer f.Close()
	return cpuModel(f)
}

// cpuModel returns the value of the first "model name" line of a
// /proc/cpuinfo listing, or unknownCPU. Runs of blanks in the value are
// collapsed, since some kernels pad the model name.
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(key) != "model name" {
			continue
		}
		if v := strings.Join(strings.Fields(value), " "); v != "" {
			return v
		}
	}
	return unknownCPU
}
