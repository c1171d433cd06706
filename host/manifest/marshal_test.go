package manifest_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
)

func handBuilt() *manifest.Manifest {
	return &manifest.Manifest{
		SkillID:   "acme.built",
		Name:      "Built",
		Version:   "1.0.0",
		Publisher: "acme",
		Entrypoints: manifest.Entrypoints{Tools: []manifest.Tool{{
			ID:           "acme.run",
			Name:         "run",
			Description:  "Runs",
			InputSchema:  map[string]any{"type": "object", "required": []string{"x"}},
			OutputSchema: map[string]any{"type": "integer", "maximum": 10},
		}}},
		Compat: manifest.Compat{RequiredProtocolMajor: 1, MinPalyraVersion: "0.1.0"},
	}
}

// TestMarshalHandBuilt: zero values in a manifest built in code read back
// as the defaults.
func TestMarshalHandBuilt(t *testing.T) {
	out, err := manifest.Marshal(handBuilt())
	if err != nil {
		t.Fatal(err)
	}
	m := mustParse(t, out)
	if m.ManifestVersion != 2 || m.Capabilities.Quotas.FuelBudget != manifest.DefaultFuelBudget {
		t.Fatalf("defaults not applied: %+v", m)
	}
	if got := m.Entrypoints.Tools[0].InputSchema["required"]; !reflect.DeepEqual(got, []any{"x"}) {
		t.Fatalf("required = %#v", got)
	}
	if !m.Operator.IsEmpty() || m.Builder != nil {
		t.Fatalf("optional sections appeared: %+v", m)
	}
}

// TestMarshalIntegrity is what the artifact builder does: parse, fill in the
// integrity list, marshal.
func TestMarshalIntegrity(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/v1_without_operator.toml"))
	m.Integrity.Files = []manifest.IntegrityFile{
		{Path: "modules/module.wasm", SHA256: "93a44bbb96c751218e4c00d479e4c14358122a389acca16205b1e4d0dc5f9476"},
	}
	out, err := manifest.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if back := mustParse(t, out); !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip: %+v != %+v", back, m)
	}
	var doc map[string]any
	if err := tomlUnmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["operator"]; ok {
		t.Fatal("a v1 manifest got an [operator] table")
	}
}

func TestMarshalInvalid(t *testing.T) {
	tests := []struct {
		name   string
		change func(m *manifest.Manifest)
		path   string
		also   error
	}{
		{"tool id", func(m *manifest.Manifest) { m.Entrypoints.Tools[0].ID = "other.run" }, "entrypoints.tools[0].id", nil},
		{"nil schema", func(m *manifest.Manifest) { m.Entrypoints.Tools[0].OutputSchema = nil }, "entrypoints.tools[0].output_schema", nil},
		{"no tools", func(m *manifest.Manifest) { m.Entrypoints.Tools = nil }, "entrypoints.tools", nil},
		{"bad schema", func(m *manifest.Manifest) { m.Entrypoints.Tools[0].InputSchema = map[string]any{"type": "nothing"} }, "entrypoints.tools[0].input_schema", nil},
		{"v1 operator", func(m *manifest.Manifest) { m.ManifestVersion = 1; m.Operator.DisplayName = "X" }, "operator", nil},
		{"bad integrity path", func(m *manifest.Manifest) {
			m.Integrity.Files = []manifest.IntegrityFile{{Path: "/abs", SHA256: "93a44bbb96c751218e4c00d479e4c14358122a389acca16205b1e4d0dc5f9476"}}
		}, "integrity.files[0].path", nil},
		{"schema not JSON", func(m *manifest.Manifest) { m.Entrypoints.Tools[0].InputSchema = map[string]any{"f": func() {}} }, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := handBuilt()
			tt.change(m)
			out, err := manifest.Marshal(m)
			if err == nil {
				t.Fatalf("Marshal accepted it:\n%s", out)
			}
			fe := fieldError(t, err)
			if fe.Path != tt.path || !errors.Is(err, manifest.ErrValidation) || fe.Line != 0 {
				t.Fatalf("got %v (path %q, line %d), want a validation error at %q", err, fe.Path, fe.Line, tt.path)
			}
		})
	}
	if _, err := manifest.Marshal(nil); !errors.Is(err, manifest.ErrValidation) {
		t.Fatalf("Marshal(nil) = %v", err)
	}
}
