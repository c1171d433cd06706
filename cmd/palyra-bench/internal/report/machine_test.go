package report

import (
	"runtime"
	"strings"
	"testing"
)

func TestCPUModel(t *testing.T) {
	tests := []struct {
		name    string
		cpuinfo string
		want    string
	}{
		{"x86", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Processor\nstepping\t: 7\n\nprocessor\t: 1\nmodel name\t: Other\n", "Intel(R) Xeon(R) Processor"},
		{"padded", "model name\t:   AMD  EPYC   7B13 64-Core Processor  \n", "AMD EPYC 7B13 64-Core Processor"},
		{"arm64 without model name", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", "unknown"},
		{"model is not model name", "model\t\t: 85\n", "unknown"},
		{"empty value skipped", "model name\t:\nmodel name\t: Second\n", "Second"},
		{"empty", "", "unknown"},
	}
	for _, tt := range tests {
		if got := cpuModel(strings.NewReader(tt.cpuinfo)); got != tt.want {
			t.Errorf("%s: cpuModel = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := cpuModelFromFile("/nonexistent/cpuinfo"); got != "unknown" {
		t.Errorf("missing file: cpuModelFromFile = %q, want unknown", got)
	}
}

func TestDetectMachine(t *testing.T) {
	versions := map[string]string{"github.com/tetratelabs/wazero": "v1.9.0"}
	m := DetectMachine(versions)
	if m.OS != runtime.GOOS || m.Arch != runtime.GOARCH || m.Cores != runtime.NumCPU() || m.GoVersion != runtime.Version() {
		t.Errorf("DetectMachine = %+v, want this runtime's OS, arch, cores and Go version", m)
	}
	if m.CPUModel == "" {
		t.Error("CPUModel is empty, want a model or \"unknown\"")
	}
	versions["github.com/tetratelabs/wazero"] = "changed"
	if got := m.Versions["github.com/tetratelabs/wazero"]; got != "v1.9.0" {
		t.Errorf("Versions shares the caller's map: got %q after the caller changed it", got)
	}
}
