package manifest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
)

// TestHooksOnly checks the hooks_only extension of [[entrypoints.tools]]:
// read when set, false when absent, refused when not a boolean, kept by
// Marshal, and in JSON only when true.
func TestHooksOnly(t *testing.T) {
	m := handBuilt()
	m.Entrypoints.Tools = append(m.Entrypoints.Tools, manifest.Tool{
		ID: "acme.on_event", Name: "on event", Description: "Handles events",
		InputSchema: map[string]any{"type": "object"}, OutputSchema: map[string]any{"type": "object"}, Risk: manifest.Risk{RequiresApproval: true}, HooksOnly: true,
	})
	out, err := manifest.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "hooks_only = true") || strings.Count(string(out), "hooks_only") != 1 {
		t.Fatalf("marshalled manifest:\n%s", out)
	}
	back := mustParse(t, out)
	if tl := back.Entrypoints.Tools; len(tl) != 2 || tl[0].HooksOnly || !tl[1].HooksOnly || !tl[1].Risk.RequiresApproval {
		t.Fatalf("parsed tools: %+v", tl)
	}
	js, err := json.Marshal(back.Entrypoints.Tools)
	if err != nil {
		t.Fatal(err)
	}
	var tools []map[string]any
	if err := json.Unmarshal(js, &tools); err != nil {
		t.Fatal(err)
	}
	if _, ok := tools[0]["hooks_only"]; ok || tools[1]["hooks_only"] != true {
		t.Errorf("JSON tools: %s", js)
	}
	// The recorded manifest (JSON) reads back the flag.
	var again []manifest.Tool
	if err := json.Unmarshal(js, &again); err != nil || again[0].HooksOnly || !again[1].HooksOnly {
		t.Errorf("JSON round trip: %v %+v", err, again)
	}

	bad := strings.Replace(string(out), "hooks_only = true", `hooks_only = "yes"`, 1)
	if _, err := manifest.Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "hooks_only") {
		t.Errorf("a string hooks_only: %v", err)
	}
}
