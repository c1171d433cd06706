// Package examples_test checks the example skills' packaging inputs:
// skill.toml against the manifest rules (Palyra's, through
// host/manifest and directly), the tools against the handlers each main.go
// registers, and sbom.cdx.json and provenance.json against what the
// artifact reader requires.
package examples_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// wantCaps is exactly what each example may ask for.
var wantCaps = map[string]struct {
	http, secrets, writeRoots []string
}{
	"echo":       {},
	"http-fetch": {http: []string{"api.example.com"}, secrets: []string{"skill:palyra.http_fetch/api_token"}},
	"event-log":  {writeRoots: []string{"events"}},
	"kv-counter": {writeRoots: []string{"counters"}},
	"report":     {},
}

var (
	skillIDRe    = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)*$`)
	identifierRe = regexp.MustCompile(`^[a-z0-9._:-]+$`)
	semverRe     = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	labelRe      = regexp.MustCompile(`^[a-z0-9._-]+$`)
	entrypointRe = regexp.MustCompile(`^[a-z0-9_-]+$`)
	handleRe     = regexp.MustCompile(`skill\.Handle(?:Raw)?\("([^"]+)"`)
)

func TestManifests(t *testing.T) {
	for _, name := range examplebuild.Names() {
		t.Run(name, func(t *testing.T) {
			dir := examplebuild.MustDir(t, name)
			data, err := os.ReadFile(filepath.Join(dir, "skill.toml"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := manifest.Parse(data)
			if err != nil {
				t.Fatalf("manifest.Parse: %v", err)
			}
			if err := manifest.CheckCompat(m); err != nil {
				t.Errorf("CheckCompat: %v", err)
			}
			if w := m.Warnings(); len(w) != 0 {
				t.Errorf("warnings: %+v", w)
			}

			if m.ManifestVersion != 2 || m.Publisher != "palyra" || strings.TrimSpace(m.Name) == "" || !semverRe.MatchString(m.Version) {
				t.Errorf("identity: version %d publisher %q name %q version %q", m.ManifestVersion, m.Publisher, m.Name, m.Version)
			}
			if !skillIDRe.MatchString(m.SkillID) || !strings.HasPrefix(m.SkillID, "palyra.") {
				t.Errorf("skill_id %q", m.SkillID)
			}
			var toolIDs []string
			for i, tool := range m.Entrypoints.Tools {
				if !identifierRe.MatchString(tool.ID) || !strings.HasPrefix(tool.ID, m.Publisher+".") {
					t.Errorf("tools[%d].id %q is not an identifier namespaced %q", i, tool.ID, m.Publisher+".")
				}
				if slices.Contains(toolIDs, tool.ID) {
					t.Errorf("tools[%d].id %q repeats", i, tool.ID)
				}
				toolIDs = append(toolIDs, tool.ID)
				if strings.TrimSpace(tool.Name) == "" || strings.TrimSpace(tool.Description) == "" {
					t.Errorf("tools[%d]: blank name or description", i)
				}
				for what, schema := range map[string]map[string]any{"input_schema": tool.InputSchema, "output_schema": tool.OutputSchema} {
					if schema == nil {
						t.Errorf("tools[%d].%s missing", i, what)
						continue
					}
					if _, err := json.Marshal(schema); err != nil {
						t.Errorf("tools[%d].%s is not JSON: %v", i, what, err)
					}
					if what == "input_schema" && schema["type"] != "object" {
						t.Errorf("tools[%d].%s: type %v, want object", i, what, schema["type"])
					}
				}
			}
			if len(toolIDs) == 0 {
				t.Fatal("no tools")
			}

			// The tools are exactly the handlers main.go registers.
			src, err := os.ReadFile(filepath.Join(dir, "main.go"))
			if err != nil {
				t.Fatal(err)
			}
			var handlers []string
			for _, mm := range handleRe.FindAllStringSubmatch(string(src), -1) {
				handlers = append(handlers, mm[1])
			}
			sort.Strings(handlers)
			sorted := slices.Sorted(slices.Values(toolIDs))
			if !slices.Equal(handlers, sorted) {
				t.Errorf("main.go registers %v, skill.toml declares %v", handlers, sorted)
			}

			// Capabilities: exactly what the example needs.
			c := m.Capabilities
			want := wantCaps[name]
			var secrets []string
			for _, s := range c.Secrets {
				for _, k := range s.KeyNames {
					secrets = append(secrets, s.Scope+"/"+k)
				}
			}
			if !equal(c.HTTPEgressAllowlist, want.http) || !equal(secrets, want.secrets) || !equal(c.Filesystem.WriteRoots, want.writeRoots) ||
				len(c.Filesystem.ReadRoots)+len(c.DeviceCapabilities)+len(c.NodeCapabilities) != 0 || c.WildcardOptIn != (manifest.WildcardOptIn{}) {
				t.Errorf("capabilities = %+v, want %+v", c, want)
			}
			q := c.Quotas
			if q.WallClockTimeoutMS == 0 || q.FuelBudget == 0 || q.MaxMemoryBytes < 65536 {
				t.Errorf("quotas %+v", q)
			}
			if m.Compat.RequiredProtocolMajor != 1 || m.Compat.MinPalyraVersion != "0.1.0" {
				t.Errorf("compat %+v", m.Compat)
			}

			// Operator section (v2).
			op := m.Operator
			if strings.TrimSpace(op.DisplayName) == "" || strings.TrimSpace(op.Summary) == "" || strings.TrimSpace(op.Description) == "" {
				t.Errorf("operator: display_name, summary and description must be set")
			}
			for _, l := range append(slices.Clone(op.Categories), op.Tags...) {
				if !labelRe.MatchString(strings.TrimSpace(l)) {
					t.Errorf("operator label %q breaks [a-z0-9._-]+", l)
				}
			}
			if !strings.HasPrefix(op.DocsURL, "https://") || strings.ContainsAny(op.DocsURL, " #") {
				t.Errorf("operator.docs_url %q", op.DocsURL)
			}
			if p := op.Plugin; p != nil {
				if p.DefaultToolID != "" && !slices.Contains(toolIDs, p.DefaultToolID) {
					t.Errorf("operator.plugin.default_tool_id %q is not a tool", p.DefaultToolID)
				}
				if p.DefaultEntrypoint != "palyra_plugin_main" || !entrypointRe.MatchString(p.DefaultEntrypoint) {
					t.Errorf("operator.plugin.default_entrypoint %q", p.DefaultEntrypoint)
				}
			}
		})
	}
}

func equal(a, b []string) bool { return len(a) == 0 && len(b) == 0 || slices.Equal(a, b) }

func TestSBOMAndProvenance(t *testing.T) {
	for _, name := range examplebuild.Names() {
		t.Run(name, func(t *testing.T) {
			dir := examplebuild.MustDir(t, name)
			var sbom struct {
				BOMFormat   string `json:"bomFormat"`
				SpecVersion string `json:"specVersion"`
				Version     int    `json:"version"`
				Components  []struct {
					Type string `json:"type"`
					Name string `json:"name"`
				} `json:"components"`
			}
			readJSON(t, filepath.Join(dir, "sbom.cdx.json"), &sbom)
			if sbom.BOMFormat != "CycloneDX" || sbom.SpecVersion != "1.6" || sbom.Version < 1 {
				t.Errorf("sbom header %+v", sbom)
			}
			named := false
			for _, c := range sbom.Components {
				if c.Type == "" || c.Name == "" {
					t.Errorf("sbom component %+v lacks type or name", c)
				}
				named = named || c.Name == examplebuild.ModulePath
			}
			if !named {
				t.Errorf("sbom components do not name %s", examplebuild.ModulePath)
			}

			var prov map[string]any
			readJSON(t, filepath.Join(dir, "provenance.json"), &prov)
			if _, ok := prov["builder"].(map[string]any); !ok {
				t.Errorf("provenance.builder is not an object")
			}
			if s, ok := prov["subject"].([]any); !ok || len(s) == 0 {
				t.Errorf("provenance.subject is not a non-empty array")
			}

			readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
			if err != nil {
				t.Fatal(err)
			}
			if cmd := "GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o " + name + ".wasm ./sdk/examples/" + name; !strings.Contains(string(readme), cmd) {
				t.Errorf("README.md does not show %q", cmd)
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
