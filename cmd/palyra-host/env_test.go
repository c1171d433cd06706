package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateDirFromEnvironment: palyra-host still takes its state directory
// from --state-dir, else $PALYRA_STATE_DIR (read by the command, not the
// libraries), and `token path` only prints: it creates nothing. A variable
// that is set but empty is refused.
func TestStateDirFromEnvironment(t *testing.T) {
	tmp := t.TempDir()
	envState, flagState := filepath.Join(tmp, "env-state"), filepath.Join(tmp, "flag-state")
	tests := []struct {
		name    string
		args    []string
		env     string
		want    string // stdout; "" means a failure
		wantErr string
	}{
		{name: "variable", args: []string{"token", "path"}, env: envState, want: filepath.Join(envState, "daemon", "admin-token")},
		{name: "flag wins", args: []string{"token", "path", "--state-dir", flagState}, env: envState, want: filepath.Join(flagState, "daemon", "admin-token")},
		{name: "set but empty", args: []string{"token", "path"}, env: "", wantErr: "invalid_state_dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(bin, "palyra-host"), tt.args...)
			cmd.Env = append(os.Environ(), "PALYRA_STATE_DIR="+tt.env)
			out, err := cmd.CombinedOutput()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(string(out), tt.wantErr) {
					t.Fatalf("%v: %v\n%s", tt.args, err, out)
				}
				return
			}
			if err != nil || strings.TrimSpace(string(out)) != tt.want {
				t.Fatalf("%v = %q, %v; want %q", tt.args, out, err, tt.want)
			}
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Fatalf("token path created %v", ents)
			}
		})
	}
}
