package daemon_test

import (
	"net/http"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/proctest"
)

// TestRemoveStopsSidecar checks, on a real daemon, that removing a skill
// (DELETE /v1/skills/{id}) ends its sidecar process before the answer,
// while another skill's sidecar keeps running, and that the daemon's stop
// afterwards logs no error (proc.stop checks that).
func TestRemoveStopsSidecar(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	for _, id := range []string{"test.gone", "test.stays"} {
		p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, id), nil)
		p.must(http.StatusOK, http.MethodPost, "/v1/skills/"+id+"/tools/test.probe/call", map[string]any{"input": map[string]any{}}, nil)
	}
	pids := func() map[string]int {
		var sc struct {
			Sidecars []host.SidecarState `json:"sidecars"`
		}
		p.must(http.StatusOK, http.MethodGet, "/v1/sidecars", nil, &sc)
		out := map[string]int{}
		for _, s := range sc.Sidecars {
			out[s.SkillID] = s.PID
			out[s.SkillID+" standby"] = s.StandbyPID
		}
		return out
	}
	before := pids()
	if before["test.gone"] == 0 || before["test.stays"] == 0 {
		t.Fatalf("sidecars before the remove: %v", before)
	}
	p.must(http.StatusOK, http.MethodDelete, "/v1/skills/test.gone", nil, nil)
	for _, k := range []string{"test.gone", "test.gone standby"} {
		if pid := before[k]; pid != 0 && proctest.Alive(pid) {
			t.Errorf("the removed skill's sidecar (%s) %d still runs", k, pid)
		}
	}
	after := pids()
	if after["test.gone"] != 0 || after["test.stays"] != before["test.stays"] || !proctest.Alive(before["test.stays"]) {
		t.Errorf("sidecars after the remove: %v (before %v)", after, before)
	}
}
