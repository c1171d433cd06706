package harden

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"
)

// TestApplyInChild runs Apply in a child process of this test binary,
// which has no prestart constructor (cmd/palyra-sidecar has): every
// capability step and no_new_privs then go through psx, and every thread
// must show them done.
func TestApplyInChild(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	var out struct {
		Report  Report
		Err     string
		Threads threadCreds
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("child printed %q: %v", b, err)
	}
	if out.Err != "" {
		t.Fatalf("Apply: %s", out.Err)
	}
	if len(out.Threads) < 2 {
		t.Fatalf("the child read %d threads; the Go runtime runs several", len(out.Threads))
	}
	keys := []string{"CapEff", "CapPrm", "CapInh", "CapAmb"}
	if os.Getuid() == 0 {
		keys = append(keys, "CapBnd")
	}
	if !out.Threads.allZero(keys...) {
		t.Errorf("a thread keeps a capability: %v", out.Threads)
	}
	if !out.Threads.all(func(st map[string]string) bool { return st["NoNewPrivs"] == "1" }) {
		t.Errorf("a thread lacks no_new_privs: %v", out.Threads)
	}
}

// TestThreadCreds checks the decision that skips a psx broadcast: only
// when every thread read shows the step done, never when none was read.
func TestThreadCreds(t *testing.T) {
	done := map[string]string{"CapBnd": "0000000000000000", "CapAmb": "0000000000000000", "NoNewPrivs": "1"}
	open := map[string]string{"CapBnd": "000001ffffffffff", "CapAmb": "0000000000000000", "NoNewPrivs": "0"}
	tests := []struct {
		name string
		tc   threadCreds
		bnd  bool
		amb  bool
	}{
		{"none read", nil, false, false},
		{"every thread done", threadCreds{done, done}, true, true},
		{"one thread left", threadCreds{done, open}, false, true},
		{"a missing field", threadCreds{{"CapAmb": "0"}}, false, true},
	}
	for _, tt := range tests {
		if got := tt.tc.allZero("CapBnd"); got != tt.bnd {
			t.Errorf("%s: allZero(CapBnd) = %v, want %v", tt.name, got, tt.bnd)
		}
		if got := tt.tc.allZero("CapAmb"); got != tt.amb {
			t.Errorf("%s: allZero(CapAmb) = %v, want %v", tt.name, got, tt.amb)
		}
	}
}
