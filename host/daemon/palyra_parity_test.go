package daemon_test

import (
	"net/http"
	"testing"

	"github.com/palyra-go/palyra/host/install"
)

// TestPalyraAdminSkillIDLowerCased is the skill_id case of Palyra's admin
// surface test (facts §11): quarantine and enable on Palyra's
// /admin/v1 routes take the skill id in any case and act on, and answer
// with, the lower-cased id. docs/palyra-parity.md cites it.
func TestPalyraAdminSkillIDLowerCased(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.case"), nil)
	for _, tt := range []struct {
		verb string
		body map[string]any
		want string
	}{
		{"quarantine", map[string]any{"reason": "odd"}, "quarantined"},
		{"enable", map[string]any{"reason": "reviewed", "override": true}, "active"},
	} {
		var sr install.StatusResult
		p.must(http.StatusOK, http.MethodPost, "/admin/v1/skills/TEST.Case/"+tt.verb, tt.body, &sr)
		if sr.SkillID != "test.case" || string(sr.Status) != tt.want || !sr.Changed {
			t.Fatalf("%s of TEST.Case: %+v", tt.verb, sr)
		}
	}
}
