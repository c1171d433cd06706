package host_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/proctest"
)

// echoRunning calls palyra.echo twice (the second call puts the version in
// use, which gives it a standby) and waits (up to 30 s) for its standby,
// so that both its sidecars run; it returns their pids.
func echoRunning(t *testing.T, h *host.Host) (serving, standby int) {
	t.Helper()
	var res *host.CallResult
	for range 2 {
		var err error
		res, err = h.Call(context.Background(), host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`)})
		if err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st := sidecarOf(t, h, "palyra.echo")
		if st.PID != res.SidecarPID {
			t.Fatalf("sidecar %+v, the call ran in pid %d", st, res.SidecarPID)
		}
		if st.StandbyPID != 0 {
			return st.PID, st.StandbyPID
		}
		if time.Now().After(deadline) {
			t.Fatal("no standby sidecar within 30 s")
		}
	}
}

// TestLifecycleStopsSidecars checks that a version taken out of service
// (disabled, quarantined, removed) has no sidecar left when the verb
// returns: the serving sidecar's and the standby's processes are gone, not
// left to run until the host stops, and a re-enabled version starts anew.
func TestLifecycleStopsSidecars(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		verb    func(h *host.Host) error
		enabled bool // the version can be enabled and called again
	}{
		{"disable", func(h *host.Host) error {
			_, err := h.Disable(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "test"})
			return err
		}, true},
		{"quarantine", func(h *host.Host) error {
			_, err := h.Quarantine(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "test"})
			return err
		}, true},
		{"remove version", func(h *host.Host) error {
			_, err := h.Remove(ctx, host.RemoveRequest{SkillID: "palyra.echo", Version: "0.1.0"})
			return err
		}, false},
		{"remove every version", func(h *host.Host) error {
			_, err := h.Remove(ctx, host.RemoveRequest{SkillID: "palyra.echo"})
			return err
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := openHost(t)
			serving, standby := echoRunning(t, h)
			if err := tt.verb(h); err != nil {
				t.Fatal(err)
			}
			for what, pid := range map[string]int{"serving sidecar": serving, "standby": standby} {
				if proctest.Alive(pid) {
					t.Errorf("%s %d still runs after %s returned", what, pid, tt.name)
				}
			}
			if st := sidecarOf(t, h, "palyra.echo"); st.Status != supervisor.StatusStopped || st.PID != 0 || st.StandbyPID != 0 {
				t.Errorf("sidecar after %s: %+v", tt.name, st)
			}
			if !tt.enabled {
				return
			}
			if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "palyra.echo", Override: true}); err != nil {
				t.Fatal(err)
			}
			if again, _ := echoRunning(t, h); again == serving || again == standby {
				t.Errorf("re-enabled version served by old pid %d", again)
			}
		})
	}
}

// TestHostCloseLogsNoError checks that closing a host with running
// sidecars (serving, standby and spare) logs no error line: their exits
// are the host's doing.
func TestHostCloseLogsNoError(t *testing.T) {
	ctx := context.Background()
	var buf proctest.Buffer
	log := hclog.New(&hclog.LoggerOptions{Name: "palyra-host", Level: hclog.Trace, Output: &buf})
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	h, err := host.Open(ctx, host.Config{StateDir: t.TempDir(), SidecarPath: sidecarPath, Logger: log, Supervisor: supervisor.Config{SocketDir: sock}})
	if err != nil {
		t.Fatal(err)
	}
	data, keyHex, err := buildEcho()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: data, TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: keyHex}}}); err != nil {
		t.Fatal(err)
	}
	serving, standby := echoRunning(t, h)
	for deadline := time.Now().Add(30 * time.Second); h.ReadySpares() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no spare sidecar within 30 s")
		}
	}
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range []int{serving, standby} {
		if proctest.Alive(pid) {
			t.Errorf("sidecar %d alive after Close", pid)
		}
	}
	out := buf.String()
	var errs []string
	for _, ln := range strings.Split(out, "\n") {
		if strings.Contains(ln, "[ERROR]") {
			errs = append(errs, ln)
		}
	}
	if len(errs) > 0 {
		t.Errorf("an orderly Close logged errors:\n%s", strings.Join(errs, "\n"))
	}
	// The log did receive the sidecars' exits (below error level).
	if !strings.Contains(out, "plugin process exited") {
		t.Errorf("no sidecar exit in the log:\n%s", out)
	}
}

// TestCallRacingADisableLeavesNoSidecar: a call that passed its checks just
// before a disable starts the version's sidecar after the disable stopped
// its sidecars; the call notices the change and stops the sidecar it
// started, instead of leaving it to idle until its idle timeout.
func TestCallRacingADisableLeavesNoSidecar(t *testing.T) {
	ctx := context.Background()
	h := openHost(t)
	serving, _ := echoRunning(t, h)
	host.SetBeforeSidecar(h, func() {
		host.SetBeforeSidecar(h, nil) // once
		if _, err := h.Disable(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "racing a call"}); err != nil {
			t.Error(err)
		}
	})
	res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		t.Fatalf("the call that passed its checks before the disable: %v", err)
	}
	if res.SidecarPID == serving || res.SidecarPID == 0 {
		t.Fatalf("the call ran in pid %d; the disable stopped %d, so a new sidecar should have served it", res.SidecarPID, serving)
	}
	if proctest.Alive(res.SidecarPID) {
		t.Errorf("the sidecar %d the racing call started still runs after the call returned", res.SidecarPID)
	}
	if st := sidecarOf(t, h, "palyra.echo"); st.Status != supervisor.StatusStopped || st.PID != 0 || st.StandbyPID != 0 {
		t.Errorf("sidecar state after the racing call: %+v", st)
	}
}
