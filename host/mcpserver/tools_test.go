package mcpserver_test

import (
	"encoding/json"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/mcpserver"
)

func TestMCPToolSchemas(t *testing.T) {
	cases := []struct {
		name       string
		in, out    map[string]any
		wantIn     string
		wantOut    string // "" = no outputSchema
		wantObject bool
	}{
		{"object schemas kept as they are",
			map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
			map[string]any{"type": "object"},
			`{"properties":{"text":{"type":"string"}},"type":"object"}`, `{"type":"object"}`, true},
		{"an input schema without type gets type object",
			map[string]any{"properties": map[string]any{"n": map[string]any{"type": "integer"}}},
			map[string]any{"type": "object", "required": []any{"n"}},
			`{"properties":{"n":{"type":"integer"}},"type":"object"}`, `{"required":["n"],"type":"object"}`, true},
		{"no input schema at all",
			nil, nil, `{"type":"object"}`, "", false},
		{"an output schema that is not an object schema is not advertised",
			map[string]any{"type": "object"}, map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			`{"type":"object"}`, "", false},
		{"an output schema without type is not advertised",
			map[string]any{"type": "object"}, map[string]any{"description": "anything"},
			`{"type":"object"}`, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := mcpserver.Tool{SkillID: "acme.kit", Version: "1.2.3", Tool: manifest.Tool{ID: "acme.kit.go", Name: "go", Description: "Goes.", InputSchema: c.in, OutputSchema: c.out}}
			_, hadType := c.in["type"]
			mt := tl.MCPTool("acme_kit_go")
			if _, hasType := c.in["type"]; hasType != hadType {
				t.Errorf("MCPTool changed the manifest's input schema: %v", c.in)
			}
			in, _ := json.Marshal(mt.InputSchema)
			if string(in) != c.wantIn {
				t.Errorf("inputSchema %s, want %s", in, c.wantIn)
			}
			if c.wantOut == "" {
				if mt.OutputSchema != nil {
					t.Errorf("outputSchema %v, want none", mt.OutputSchema)
				}
			} else if out, _ := json.Marshal(mt.OutputSchema); string(out) != c.wantOut {
				t.Errorf("outputSchema %s, want %s", out, c.wantOut)
			}
			if tl.ObjectOutput() != c.wantObject {
				t.Errorf("ObjectOutput %t, want %t", tl.ObjectOutput(), c.wantObject)
			}
			if mt.Name != "acme_kit_go" || mt.Title != "go" || mt.Description != "Goes." {
				t.Errorf("name/title/description: %q %q %q", mt.Name, mt.Title, mt.Description)
			}
			if mt.Meta[mcpserver.MetaSkillID] != "acme.kit" || mt.Meta[mcpserver.MetaToolID] != "acme.kit.go" || mt.Meta[mcpserver.MetaVersion] != "1.2.3" {
				t.Errorf("_meta %v", mt.Meta)
			}
		})
	}
}

func TestAnnotations(t *testing.T) {
	cases := []struct {
		name                        string
		risk                        manifest.Risk
		caps                        manifest.Capabilities
		readOnly, destructive, open bool
		approval                    bool
	}{
		{"plain tool, no capability", manifest.Risk{}, manifest.Capabilities{}, true, false, false, false},
		{"requires_approval", manifest.Risk{RequiresApproval: true}, manifest.Capabilities{}, false, true, false, true},
		{"default_sensitive", manifest.Risk{DefaultSensitive: true}, manifest.Capabilities{}, false, true, false, true},
		{"storage writes", manifest.Risk{}, manifest.Capabilities{Filesystem: manifest.Filesystem{WriteRoots: []string{"data"}}}, false, false, false, false},
		{"http egress", manifest.Risk{}, manifest.Capabilities{HTTPEgressAllowlist: []string{"api.example.com"}}, false, false, true, false},
		{"channels, sensitive", manifest.Risk{DefaultSensitive: true}, manifest.Capabilities{Channels: []string{"ops"}}, false, true, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := mcpserver.Tool{SkillID: "s", Tool: manifest.Tool{ID: "s.t", Name: "t", Risk: c.risk}, Capabilities: c.caps}
			a := tl.Annotations()
			if a.ReadOnlyHint != c.readOnly || a.DestructiveHint == nil || *a.DestructiveHint != c.destructive || a.OpenWorldHint == nil || *a.OpenWorldHint != c.open {
				t.Errorf("readOnly=%t destructive=%v open=%v, want %t %t %t", a.ReadOnlyHint, a.DestructiveHint, a.OpenWorldHint, c.readOnly, c.destructive, c.open)
			}
			if a.Title != "t" {
				t.Errorf("title %q", a.Title)
			}
			if tl.RequiresApproval() != c.approval {
				t.Errorf("RequiresApproval %t, want %t", tl.RequiresApproval(), c.approval)
			}
			if got := tl.MCPTool("x").Meta[mcpserver.MetaApproval]; got != c.approval {
				t.Errorf("_meta %s = %v, want %t", mcpserver.MetaApproval, got, c.approval)
			}
		})
	}
}

func TestParseFallback(t *testing.T) {
	for in, want := range map[string]mcpserver.Fallback{"": mcpserver.FallbackDeny, "deny": mcpserver.FallbackDeny, " Allow ": mcpserver.FallbackAllow} {
		got, err := mcpserver.ParseFallback(in)
		if err != nil || got != want {
			t.Errorf("ParseFallback(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := mcpserver.ParseFallback("ask"); err == nil {
		t.Error(`ParseFallback("ask"): no error`)
	}
}

func TestA2UIURI(t *testing.T) {
	if got, want := mcpserver.A2UIURI("acme.report", "sales q1/2"), "palyra-a2ui://acme.report/sales%20q1%2F2"; got != want {
		t.Errorf("A2UIURI = %q, want %q", got, want)
	}
}
