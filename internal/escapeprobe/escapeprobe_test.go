package escapeprobe

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// TestProbesHold runs the escape probes as the serving sidecar and as the
// precompile child, as the host's user (root here) and as an unprivileged
// RunAs user: every escape attempt fails, both controls succeed, and the
// kernel shows the hardened process with no_new_privs, a seccomp filter
// and no capability.
func TestProbesHold(t *testing.T) {
	want := []string{"open_etc_passwd", "open_state_file", "tcp_connect", "tcp_listen", "socket_netlink", "execve_sh", "fork",
		"ptrace_parent", "process_vm_readv_parent", "write_outside", "kill_parent", "read_module", "write_private_dir"}
	tests := []struct {
		name string
		opts Options
	}{
		{name: "as the host's user", opts: Options{Hardening: sidecarplugin.HardenSpec{MaxOpenFiles: 64}}},
		{name: "as nobody", opts: Options{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Credential != nil && os.Geteuid() != 0 {
				t.Skip("running as another user needs root")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			tt.opts.Probe = probeBin
			if tt.opts.Credential == nil {
				tt.opts.Dir = t.TempDir()
			}
			res, status, err := Run(ctx, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, child := range Children {
				seen := map[string]bool{}
				for _, r := range res {
					if r.Child != child {
						continue
					}
					seen[r.Name] = true
					if !r.Held {
						t.Errorf("%s: %s %s: succeeded %v (control %v) err %q", child, r.Name, r.Target, r.Succeeded, r.Control, r.Err)
					}
				}
				for _, n := range want {
					if !seen[n] {
						t.Errorf("%s: attempt %s not made", child, n)
					}
				}
				st := status[child]
				if st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" || st["CapEff"] != "0000000000000000" || st["CapPrm"] != "0000000000000000" {
					t.Errorf("%s: /proc status %v", child, st)
				}
				if tt.opts.Credential == nil && st["CapBnd"] != "0000000000000000" {
					t.Errorf("%s: bounding set %s left to a root sidecar", child, st["CapBnd"])
				}
				t.Logf("%s: /proc/<pid>/status %v", child, st)
			}
		})
	}
}
