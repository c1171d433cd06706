package harden

import (
	"os"
	"strings"
	"testing"
)

// TestProbe compares Probe with what the kernel shows of itself: the
// NoNewPrivs and Seccomp_filters lines of /proc/self/status, and the
// active security modules when the system lets us read them.
func TestProbe(t *testing.T) {
	k := Probe()
	if !k.Linux || k.LandlockTarget != landlockTarget {
		t.Fatalf("Probe = %+v", k)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	st := ParseStatus(status)
	if _, ok := st["NoNewPrivs"]; ok != k.NoNewPrivs {
		t.Errorf("NoNewPrivs: status line present %t, Probe %t", ok, k.NoNewPrivs)
	}
	if _, ok := st["Seccomp_filters"]; ok && !k.Seccomp {
		t.Errorf("the kernel counts seccomp filters but Probe says seccomp is unavailable")
	}
	if lsm, err := os.ReadFile("/sys/kernel/security/lsm"); err == nil {
		if on := strings.Contains(string(lsm), "landlock"); on != (k.LandlockABI > 0) {
			t.Errorf("landlock in the active LSMs %t, Probe's ABI %d", on, k.LandlockABI)
		}
	}
	if missing := k.Missing(); (len(missing) == 0) != (k.LandlockABI > 0 && k.Seccomp && k.NoNewPrivs) {
		t.Errorf("Missing = %q for %+v", missing, k)
	}
}
