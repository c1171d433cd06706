package daemon_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/testskill"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

// versionArtifact is a skill like wasmArtifact's (default quotas) at
// version, running testdata/wasm/<module>.
func versionArtifact(t testing.TB, id, version, module string) []byte {
	t.Helper()
	m := wasmManifest(id)
	m = strings.Replace(m, `version = "0.1.0"`, `version = "`+version+`"`, 1)
	return testskill.Build(t, m, readFixture(t, filepath.Join("..", "..", "testdata", "wasm", module)), publisherKey)
}

// wasmManifest is the manifest wasmArtifact builds, without quotas.
func wasmManifest(id string) string {
	return `manifest_version = 2
skill_id = "` + id + `"
name = "Fixture"
version = "0.1.0"
publisher = "test"

[[entrypoints.tools]]
id = "test.run"
name = "run"
description = "Runs the fixture"
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`
}

// TestGRPCHeldBack checks the held-back upgrade over gRPC: the held-back
// version's Skill carries held_back_code and reason, GetSkill's info JSON
// lists it, calls keep going to the current version, and EnableSkill of
// the held-back version refuses with audit_failed.
func TestGRPCHeldBack(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	c := dialGRPC(t, p)
	bg, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx := authed(bg, p.token)

	if _, err := c.InstallSkill(ctx, &hostv1.InstallSkillRequest{Artifact: versionArtifact(t, "test.up", "0.1.0", "echo.wasm"), AllowTofu: true}); err != nil {
		t.Fatal(err)
	}
	_, err := c.InstallSkill(ctx, &hostv1.InstallSkillRequest{Artifact: versionArtifact(t, "test.up", "0.2.0", "wasi_path_open.wasm")})
	if grpcErrCode(err) != "audit_failed" {
		t.Fatalf("install 0.2.0: %v", err)
	}
	ls, err := c.ListSkills(ctx, &hostv1.ListSkillsRequest{SkillId: "test.up"})
	if err != nil || len(ls.GetSkills()) != 2 {
		t.Fatalf("list: %v %v", ls, err)
	}
	cur, held := ls.GetSkills()[0], ls.GetSkills()[1]
	if !cur.GetCurrent() || cur.GetHeldBackCode() != "" || held.GetCurrent() || held.GetHeldBackCode() != "audit_failed" || held.GetHeldBackReason() == "" {
		t.Fatalf("list: %v", ls.GetSkills())
	}
	gs, err := c.GetSkill(ctx, &hostv1.GetSkillRequest{SkillId: "test.up"})
	if err != nil || gs.GetSkill().GetVersion() != "0.1.0" || !strings.Contains(string(gs.GetInfoJson()), `"held_back":[{"version":"0.2.0"`) {
		t.Fatalf("get: %v %v", gs, err)
	}
	r, err := c.CallTool(ctx, &hostv1.CallToolRequest{SkillId: "test.up", ToolId: "test.run", InputJson: []byte(`{}`)})
	if err != nil || r.GetVersion() != "0.1.0" {
		t.Fatalf("call: %v %v", r, err)
	}
	if _, err := c.EnableSkill(ctx, &hostv1.EnableSkillRequest{SkillId: "test.up", Version: "0.2.0", Reason: "try", Override: true}); grpcErrCode(err) != "audit_failed" {
		t.Fatalf("enable 0.2.0: %v", err)
	}
}
