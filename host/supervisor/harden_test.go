package supervisor

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// procStatus reads the hardening lines of /proc/<pid>/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// TestHardenedSidecar starts real sidecars through the supervisor and reads
// what the kernel says of them: hardened by default (no_new_privs, seccomp
// filter mode, no capability left although the test runs as root), not
// hardened only when Config.Hardening.Off says so, and reported either
// way in the sidecar's state.
func TestHardenedSidecar(t *testing.T) {
	tests := []struct {
		name       string
		hardening  HardeningConfig
		wantStatus map[string]string
		wantLevel  string
	}{
		{
			name:       "on by default",
			wantStatus: map[string]string{"NoNewPrivs": "1", "Seccomp": "2", "CapEff": "0000000000000000", "CapPrm": "0000000000000000", "CapBnd": "0000000000000000", "CapAmb": "0000000000000000"},
			wantLevel:  "full",
		},
		{
			name:       "with limits",
			hardening:  HardeningConfig{MaxOpenFiles: 128, MaxDataBytes: 8 << 30},
			wantStatus: map[string]string{"NoNewPrivs": "1", "Seccomp": "2", "CapEff": "0000000000000000"},
			wantLevel:  "full",
		},
		{
			name:       "off only when asked",
			hardening:  HardeningConfig{Off: true},
			wantStatus: map[string]string{"NoNewPrivs": "0", "Seccomp": "0"},
			wantLevel:  "off",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSup(t, Config{CacheDir: shortDir(t), Hardening: tt.hardening, HealthInterval: -1, IdleTimeout: -1})
			tg := fixture(t, "test.hard", "echo.wasm")
			res, err := s.Call(ctxT(t), tg, "test.hard", []byte(`{"msg":"hi"}`), CallOptions{})
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			st := procStatus(t, res.PID)
			for k, want := range tt.wantStatus {
				if st[k] != want {
					t.Errorf("/proc/%d/status %s: %q, want %q", res.PID, k, st[k], want)
				}
			}
			h := s.State("test.hard", "1.0.0").Hardening
			if got := h.Level(); got != tt.wantLevel {
				t.Fatalf("reported hardening %s (%+v), want %s", got, h, tt.wantLevel)
			}
			if tt.hardening.Off {
				return
			}
			if h.Status["Seccomp"] != "2" || h.LandlockABI < 1 || h.Rlimits["core"] != 0 || h.SeccompSyscalls == 0 {
				t.Errorf("report %+v", h)
			}
			wantData := tt.hardening.MaxDataBytes
			if wantData == 0 { // derived: 64 MiB for each of 8 prepared and 4 concurrent instances
				wantData = DataBaseBytes + 12*64<<20
			}
			if h.Rlimits["data"] != wantData {
				t.Errorf("rlimit data %d, want %d", h.Rlimits["data"], wantData)
			}
			if tt.hardening.MaxOpenFiles != 0 && h.Rlimits["nofile"] != tt.hardening.MaxOpenFiles {
				t.Errorf("rlimits %v, want nofile %d", h.Rlimits, tt.hardening.MaxOpenFiles)
			}
			lim, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", res.PID))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(lim), "Max core file size        0                    0") {
				t.Errorf("core limit not 0:\n%s", lim)
			}
		})
	}
}

// TestRunAs starts a sidecar through the supervisor as an unprivileged user
// (nobody), which the host may do when it runs as root: the sidecar runs
// with that uid, reaches the broker over go-plugin's group-writable
// sockets, serves calls and reports itself hardened.
func TestRunAs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running sidecars as another user needs root")
	}
	const nobody = 65534
	// A tree nobody can traverse: the binary, the socket root, the cache
	// (its own), the module (world-readable, in the repository).
	// Not under TestMain's TMPDIR, which is root's alone (0700).
	root, err := os.MkdirTemp("/tmp", "palyra-runas-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	bin, sock, cache := root+"/bin", root+"/s", root+"/c"
	for _, d := range []string{bin, sock, cache} {
		if err := os.Mkdir(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(cache, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(binPath, bin+"/palyra-sidecar"); err != nil {
		t.Fatal(err)
	}
	s := newSup(t, Config{SidecarPath: bin + "/palyra-sidecar", SocketDir: sock, CacheDir: cache,
		RunAs: &Credential{UID: nobody, GID: nobody}, HealthInterval: -1, IdleTimeout: -1})
	tg := fixture(t, "test.runas", "echo.wasm")
	res, err := s.Call(ctxT(t), tg, "test.runas", []byte(`{"msg":"hi"}`), CallOptions{})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	st := procStatus(t, res.PID)
	if !strings.HasPrefix(st["Uid"], "65534\t") || st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" || st["CapEff"] != "0000000000000000" {
		t.Errorf("/proc/%d/status: Uid %q NoNewPrivs %q Seccomp %q CapEff %q", res.PID, st["Uid"], st["NoNewPrivs"], st["Seccomp"], st["CapEff"])
	}
	if h := s.State("test.runas", "1.0.0").Hardening; h.UID != nobody || h.Level() != "full" {
		t.Errorf("reported hardening %+v", h)
	}
}
