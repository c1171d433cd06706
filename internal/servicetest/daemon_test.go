package servicetest_test

import (
	"context"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/internal/proctest"
	"github.com/palyra-go/palyra/internal/servicetest"
)

// startDaemon runs `palyra-host serve` on a loopback port over state and
// returns a client of it; the daemon is stopped (SIGTERM, then checked for
// a clean exit with no child left) when the test ends.
func startDaemon(t *testing.T, state string) *client.Client {
	t.Helper()
	out, errb := &proctest.Buffer{}, &proctest.Buffer{}
	cmd := exec.Command(filepath.Join(bin, "palyra-host"), "serve", "--state-dir", state, "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "PALYRA_SIDECAR="+filepath.Join(bin, "palyra-sidecar"))
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		kids := proctest.Children(cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("palyra-host exit: %v\nstderr:\n%s", err, errb)
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("palyra-host did not exit within 60 s of SIGTERM")
		}
		proctest.WaitGone(t, kids, 5*time.Second)
		if t.Failed() {
			t.Logf("palyra-host stderr:\n%s", errb)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if info, err := daemon.ReadInfo(state); err == nil && info.PID == cmd.Process.Pid {
			tok, err := daemon.ReadToken(daemon.TokenPath(state))
			if err != nil {
				t.Fatal(err)
			}
			if resp, err := http.Get(info.URL + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					c, err := client.New(info.URL, tok)
					if err != nil {
						t.Fatal(err)
					}
					return c
				}
			}
		}
		select {
		case err := <-done:
			t.Fatalf("palyra-host exited early: %v\nstderr:\n%s", err, errb)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("palyra-host did not start\nstderr:\n%s", errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLocalAndDaemonAgree runs the conformance suite against the local host
// and against the daemon's client talking to a real palyra-host process,
// each on a fresh state dir, and checks that every case ended with the same
// code on both.
func TestLocalAndDaemonAgree(t *testing.T) {
	ctx := context.Background()
	var local, remote map[string]string
	t.Run("local", func(t *testing.T) {
		h, err := host.Open(ctx, host.Config{StateDir: t.TempDir(), SidecarPath: filepath.Join(bin, "palyra-sidecar")})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(ctx)
		local = servicetest.Run(t, h)
	})
	t.Run("daemon", func(t *testing.T) {
		c := startDaemon(t, t.TempDir())
		remote = servicetest.Run(t, c)
		// The daemon reports its version on its node (a local host
		// knows none).
		st, err := c.Cluster(ctx)
		if err != nil || len(st.Nodes) != 1 || st.Nodes[0].Version != manifest.RuntimeVersion {
			t.Errorf("the daemon's cluster: %+v, %v; want its node at version %s", st, err, manifest.RuntimeVersion)
		}
	})
	if len(local) != servicetest.Count() || !maps.Equal(local, remote) {
		t.Fatalf("the local host and the daemon disagree:\nlocal:  %v\ndaemon: %v", local, remote)
	}
}
