package daemon_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// TestA2UIUpdate: the report example's form submit is answered with an
// update; the daemon applies it to the document the form was on, keeps the
// result under the same id (so a second submit patches the patched
// document) and returns the patch, which gives the same document when a
// client applies it.
func TestA2UIUpdate(t *testing.T) {
	dir := examplebuild.MustDir(t, "report")
	m, err := os.ReadFile(filepath.Join(dir, "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(examplebuild.MustBuild(t, "report"))
	if err != nil {
		t.Fatal(err)
	}
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", testskill.Build(t, string(m), mod, publisherKey), nil)

	var cr host.CallResult
	p.must(http.StatusOK, http.MethodPost, "/v1/skills/palyra.report/tools/palyra.report/call",
		map[string]any{"input": map[string]any{"title": "Sales", "rows": []any{map[string]any{"label": "EU", "value": 3}}}}, &cr)
	if cr.A2UI == nil || cr.A2UI.Patch != nil {
		t.Fatalf("a2ui ref of a document: %+v", cr.A2UI)
	}
	id, shown := cr.A2UI.DocumentID, bytes.Clone(cr.Output)
	submit := "/v1/a2ui/" + id + "/submit"
	for i, row := range []map[string]any{{"label": "US", "value": 4.5, "kind": "line"}, {"label": "JP", "value": 2, "kind": "pie"}} {
		p.must(http.StatusOK, http.MethodPost, submit, map[string]any{"componentId": "add", "values": row}, &cr)
		if cr.A2UI == nil || cr.A2UI.DocumentID != id || cr.A2UI.Surface != "report" || cr.A2UI.Patch == nil || !a2ui.IsUpdate(cr.Output) {
			t.Fatalf("submit %d: a2ui ref %+v, output %s", i, cr.A2UI, cr.Output)
		}
		patch, err := a2ui.ParsePatch(cr.A2UI.Patch)
		if err != nil {
			t.Fatalf("submit %d: patch %s: %v", i, cr.A2UI.Patch, err)
		}
		var doc *a2ui.Document
		if shown, doc, err = a2ui.Apply(shown, patch); err != nil {
			t.Fatalf("submit %d: the patch does not apply to the shown document: %v", i, err)
		}
		table := doc.Components[1].Props.(*a2ui.TableProps)
		chart := doc.Components[2].Props.(*a2ui.ChartProps)
		if len(table.Rows) != i+2 || len(chart.Series) != i+2 || string(chart.Kind) != row["kind"] || table.Rows[i+1][0] != row["label"] {
			t.Fatalf("submit %d: patched document %s", i, shown)
		}
		// The whole patched document comes too, for a client that shows
		// nothing to patch: it is the one the patch gave.
		var sent, applied any
		if json.Unmarshal(cr.A2UI.Document, &sent) != nil || json.Unmarshal(shown, &applied) != nil || !reflect.DeepEqual(sent, applied) {
			t.Fatalf("submit %d: document %s, the patch gave %s", i, cr.A2UI.Document, shown)
		}
	}

	// A submit the tool's form does not have is refused before the tool.
	st, body := p.do(http.MethodPost, submit, map[string]any{"componentId": "add", "values": map[string]any{"label": "X", "value": 1, "kind": "donut"}}, nil)
	if st != http.StatusBadRequest || errCode(t, body) != "a2ui_invalid_submit" {
		t.Fatalf("bad kind: HTTP %d %s", st, body)
	}

	// The skill's call summary: the call and the two submits the tool got.
	var sm host.SkillMetrics
	p.must(http.StatusOK, http.MethodGet, "/v1/skills/palyra.report/metrics", nil, &sm)
	if sm.SkillID != "palyra.report" || sm.CallsTotal != 3 || sm.ErrorsTotal != 0 || sm.ByTool["palyra.report"] != 3 ||
		sm.ByCode["ok"] != 3 || sm.FuelConsumedTotal == 0 || sm.DurationMS.Max <= 0 || sm.LastCallAt.IsZero() {
		t.Errorf("metrics: %+v", sm)
	}
	st, body = p.do(http.MethodGet, "/v1/skills/acme.nope/metrics", nil, nil)
	if st != http.StatusNotFound || errCode(t, body) != "skill_not_found" {
		t.Errorf("metrics of an unknown skill: HTTP %d %s", st, body)
	}
}

// TestA2UIUpdateDirect: an update returned by a plain call applies to the
// empty document of its surface; one that does not apply, or that makes an
// invalid document, is refused with the path of the culprit.
func TestA2UIUpdateDirect(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "")
	defer p.stop()
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, "test.ui"), nil)
	call := "/v1/skills/test.ui/tools/test.probe/call"
	update := func(ops string) map[string]any {
		var v any
		if err := json.Unmarshal([]byte(`{"a2ui_update":{"surface":"s","patch":{"v":1,"ops":`+ops+`}}}`), &v); err != nil {
			t.Fatal(err)
		}
		return map[string]any{"input": v}
	}
	var cr host.CallResult
	p.must(http.StatusOK, http.MethodPost, call, update(`[{"op":"add","path":"/components/-","value":{"id":"t","type":"text","props":{"value":"hi"}}}]`), &cr)
	if cr.A2UI == nil || cr.A2UI.Surface != "s" || len(cr.A2UI.DocumentID) != 26 || !strings.Contains(string(cr.A2UI.Patch), `"/components/-"`) {
		t.Fatalf("a2ui ref: %+v", cr.A2UI)
	}
	for _, tt := range []struct{ ops, code, where string }{
		{`[{"op":"remove","path":"/components/3"}]`, "a2ui_patch_conflict", "/ops/0/path"},
		{`[{"op":"add","path":"/components/-","value":{"id":"c","type":"clock","props":{}}}]`, "a2ui_invalid", "/components/0"},
		{`[{"op":"add","path":"/__proto__","value":1}]`, "a2ui_invalid_patch", "forbidden token"},
	} {
		st, body := p.do(http.MethodPost, call, update(tt.ops), nil)
		if st != http.StatusBadGateway || errCode(t, body) != tt.code || !strings.Contains(string(body), tt.where) {
			t.Errorf("update %s: HTTP %d %s", tt.ops, st, body)
		}
	}
}
