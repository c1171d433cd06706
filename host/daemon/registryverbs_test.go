package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/palyra-go/palyra/internal/testskill"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

// echoArtifact is a skill running testdata/wasm/echo.wasm at version,
// asking for a wall-clock timeout of wallMS (more than a previous
// version's is a capability escalation).
func echoArtifact(t testing.TB, id, version string, wallMS int) []byte {
	t.Helper()
	m := fmt.Sprintf(`manifest_version = 2
skill_id = %q
name = "Echo"
version = %q
publisher = "test"

[[entrypoints.tools]]
id = "test.echo"
name = "echo"
description = "Copies its input"
input_schema = { type = "object" }
output_schema = { type = "object" }

[capabilities.quotas]
wall_clock_timeout_ms = %d

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`, id, version, wallMS)
	return testskill.Build(t, m, readFixture(t, filepath.Join("..", "..", "testdata", "wasm", "echo.wasm")), publisherKey)
}

// postJSON posts body (raw JSON) with contentType and returns the status
// and the response body.
func (p *proc) postJSON(path, contentType, body string) (int, []byte) {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url+path, bytes.NewReader([]byte(body)))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// TestRegistryVerbsHTTP checks the routes of issue 21 that need no
// registry: dry-run uploads (200, nothing installed; a refused escalation
// answers capability_escalation with the result and its diff as details),
// GET /v1/skills/outdated, POST /v1/skills/{id}/update and the JSON body
// of POST /v1/skills, with their status codes and JSON shapes.
func TestRegistryVerbsHTTP(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	const id = "test.reg"
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", echoArtifact(t, id, "1.0.0", 5000), nil)

	// A dry run of a new skill: 200, nothing installed.
	var dry struct {
		SkillID        string   `json:"skill_id"`
		Version        string   `json:"version"`
		Installed      bool     `json:"installed"`
		CapabilityDiff []string `json:"capability_diff"`
	}
	p.must(http.StatusOK, http.MethodPost, "/v1/skills?dry_run=true", echoArtifact(t, "test.reg_new", "1.0.0", 5000), &dry)
	if dry.SkillID != "test.reg_new" || dry.Installed {
		t.Fatalf("dry run: %+v", dry)
	}
	if st, body := p.do(http.MethodGet, "/v1/skills/test.reg_new", nil, nil); st != http.StatusNotFound || errCode(t, body) != "skill_not_found" {
		t.Fatalf("info after a dry run: HTTP %d %s", st, body)
	}

	// An escalation in a dry run: refused, with the diff in the details.
	esc := echoArtifact(t, id, "1.1.0", 20000)
	st, body := p.do(http.MethodPost, "/v1/skills?dry_run=true", esc, nil)
	var refused struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
		Details struct {
			Installed       bool     `json:"installed"`
			PreviousVersion string   `json:"previous_version"`
			CapabilityDiff  []string `json:"capability_diff"`
		} `json:"details"`
	}
	if err := json.Unmarshal(body, &refused); err != nil {
		t.Fatalf("refused escalation: %v: %s", err, body)
	}
	if st != http.StatusUnprocessableEntity || refused.Error.Code != "capability_escalation" ||
		refused.Details.Installed || refused.Details.PreviousVersion != "1.0.0" || len(refused.Details.CapabilityDiff) == 0 {
		t.Fatalf("dry run of an escalation: HTTP %d %s", st, body)
	}
	p.must(http.StatusOK, http.MethodPost, "/v1/skills?dry_run=true&accept_capabilities=true", esc, &dry)
	if dry.Installed || dry.Version != "1.1.0" || len(dry.CapabilityDiff) == 0 {
		t.Fatalf("accepted dry run: %+v", dry)
	}

	// Outdated: a skill from a file is not listed; the list is [] not null.
	_, body = p.do(http.MethodGet, "/v1/skills/outdated", nil, nil)
	if got := string(bytes.TrimSpace(body)); got != `{"skills":[]}` {
		t.Errorf("outdated: %s, want {\"skills\":[]}", got)
	}

	cases := []struct {
		name, method, path, contentType, body string
		status                                int
		code                                  string
	}{
		{"outdated of a skill from a file", http.MethodGet, "/v1/skills/outdated?skill_id=" + id, "", "", http.StatusConflict, "no_source"},
		{"outdated of an unknown skill", http.MethodGet, "/v1/skills/outdated?skill_id=test.none", "", "", http.StatusNotFound, "skill_not_found"},
		{"outdated with a bad boolean", http.MethodGet, "/v1/skills/outdated?allow_tofu=maybe", "", "", http.StatusBadRequest, "bad_request"},
		{"update of a skill from a file", http.MethodPost, "/v1/skills/" + id + "/update", "application/json", `{"dry_run":true}`, http.StatusConflict, "no_source"},
		{"update of an unknown skill", http.MethodPost, "/v1/skills/test.none/update", "application/json", `{}`, http.StatusNotFound, "skill_not_found"},
		{"update naming another skill in the body", http.MethodPost, "/v1/skills/" + id + "/update", "application/json", `{"skill_id":"test.other"}`, http.StatusBadRequest, "bad_request"},
		{"update with an unknown field", http.MethodPost, "/v1/skills/" + id + "/update", "application/json", `{"versoin":"2.0.0"}`, http.StatusBadRequest, "bad_request"},
		{"install from two places", http.MethodPost, "/v1/skills", "application/json", `{"registry_url":"https://127.0.0.1:1/index.json","registry_dir":"/nonexistent","skill_id":"test.reg"}`, http.StatusBadRequest, "invalid_source"},
		{"install from no source", http.MethodPost, "/v1/skills", "application/json; charset=utf-8", `{"dry_run":true}`, http.StatusBadRequest, "invalid_source"},
		{"install from oci with a skill id", http.MethodPost, "/v1/skills", "application/json", `{"source":"oci://127.0.0.1:1/test/reg:1.0.0","skill_id":"test.reg"}`, http.StatusBadRequest, "invalid_source"},
		{"apply of a document in another format version", http.MethodPost, "/v1/apply", "application/json", `{"document":"version = 2\n","dry_run":true}`, http.StatusBadRequest, "invalid_desired_state"},
		{"apply of a document with an unknown key", http.MethodPost, "/v1/apply", "application/json", `{"document":"version = 1\ncolour = 1\n"}`, http.StatusBadRequest, "invalid_desired_state"},
		{"install from an unknown field", http.MethodPost, "/v1/skills", "application/json", `{"registry":"x"}`, http.StatusBadRequest, "bad_request"},
	}
	for _, c := range cases {
		var st int
		var body []byte
		if c.method == http.MethodGet {
			st, body = p.do(c.method, c.path, nil, nil)
		} else {
			st, body = p.postJSON(c.path, c.contentType, c.body)
		}
		if st != c.status || errCode(t, body) != c.code {
			t.Errorf("%s: HTTP %d %s, want %d %s", c.name, st, body, c.status, c.code)
		}
	}
	// Nothing of the above installed anything.
	var list struct {
		Count int `json:"count"`
	}
	p.must(http.StatusOK, http.MethodGet, "/v1/skills", nil, &list)
	if list.Count != 1 {
		t.Errorf("after the refusals %d skill versions are installed, want 1", list.Count)
	}
}

// TestRegistryVerbsGRPC checks the gRPC twins of the registry routes that
// need no registry: a dry-run InstallSkill installs nothing, ListOutdated
// leaves out a skill from a file, and UpdateSkill and an InstallSkill from
// a bad source answer the status and palyra code the HTTP API gives.
func TestRegistryVerbsGRPC(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	c := dialGRPC(t, p)
	bg, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx := authed(bg, p.token)
	const id = "test.reg"
	if _, err := c.InstallSkill(ctx, &hostv1.InstallSkillRequest{Artifact: echoArtifact(t, id, "1.0.0", 5000), AllowTofu: true}); err != nil {
		t.Fatal(err)
	}

	dry, err := c.InstallSkill(ctx, &hostv1.InstallSkillRequest{Artifact: echoArtifact(t, id, "1.1.0", 20000), DryRun: true, AcceptCapabilities: true})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Installed      bool     `json:"installed"`
		CapabilityDiff []string `json:"capability_diff"`
	}
	if err := json.Unmarshal(dry.GetResultJson(), &res); err != nil || res.Installed || len(res.CapabilityDiff) == 0 || dry.GetVersion() != "1.1.0" {
		t.Fatalf("dry run: %v %s (%v)", dry, dry.GetResultJson(), err)
	}
	if _, err := c.InstallSkill(ctx, &hostv1.InstallSkillRequest{Artifact: echoArtifact(t, id, "1.1.0", 20000), DryRun: true}); status.Code(err) != codes.FailedPrecondition || grpcErrCode(err) != "capability_escalation" {
		t.Errorf("dry run of an escalation: %v", err)
	}
	ls, err := c.ListSkills(ctx, &hostv1.ListSkillsRequest{})
	if err != nil || len(ls.GetSkills()) != 1 || ls.GetSkills()[0].GetVersion() != "1.0.0" {
		t.Fatalf("after the dry runs: %v %v", ls, err)
	}

	out, err := c.ListOutdated(ctx, &hostv1.ListOutdatedRequest{})
	if err != nil || len(out.GetSkills()) != 0 {
		t.Errorf("outdated: %v %v", out, err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want codes.Code
		code string
	}{
		{"outdated of a skill from a file", func() error {
			_, err := c.ListOutdated(ctx, &hostv1.ListOutdatedRequest{SkillId: id})
			return err
		}, codes.FailedPrecondition, "no_source"},
		{"update of a skill from a file", func() error {
			_, err := c.UpdateSkill(ctx, &hostv1.UpdateSkillRequest{SkillId: id, DryRun: true})
			return err
		}, codes.FailedPrecondition, "no_source"},
		{"update of an unknown skill", func() error {
			_, err := c.UpdateSkill(ctx, &hostv1.UpdateSkillRequest{SkillId: "test.none"})
			return err
		}, codes.NotFound, "skill_not_found"},
		{"install from two places", func() error {
			_, err := c.InstallSkill(ctx, &hostv1.InstallSkillRequest{Source: &hostv1.InstallSource{RegistryUrl: "https://127.0.0.1:1/index.json", RegistryDir: "/nonexistent", SkillId: id}})
			return err
		}, codes.InvalidArgument, "invalid_source"},
	} {
		err := tc.call()
		if status.Code(err) != tc.want || grpcErrCode(err) != tc.code {
			t.Errorf("%s: %v, want %s %s", tc.name, err, tc.want, tc.code)
		}
	}
}
