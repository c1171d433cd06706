package manifest_test

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
)

const vectorsDir = "../../testdata/vectors"

// artifactManifest returns skill.toml from a derived .palyra-skill.
func artifactManifest(t testing.TB, name string) []byte {
	t.Helper()
	z, err := zip.OpenReader(filepath.Join(vectorsDir, "derived", name))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	f, err := z.Open("skill.toml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestVectors checks warnings, grants and bindings against
// testdata/vectors/derived/expected.json, for the skill.toml inside each
// derived artifact and for the echo example's own skill.toml.
func TestVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(vectorsDir, "derived", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Artifacts map[string]struct {
			IntegrityFiles []manifest.IntegrityFile `json:"integrity_files"`
			Expected       struct {
				ManifestWarnings []string                  `json:"manifest_warnings"`
				CapabilityGrants manifest.CapabilityGrants `json:"capability_grants"`
				PolicyBindings   []manifest.PolicyBinding  `json:"policy_bindings"`
			} `json:"expected"`
		} `json:"artifacts"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Artifacts) == 0 {
		t.Fatal("no artifacts in expected.json")
	}
	check := func(t *testing.T, data []byte, name string) {
		want := doc.Artifacts[name].Expected
		m := mustParse(t, data)
		var codes []string
		for _, w := range m.Warnings() {
			codes = append(codes, w.Code)
			if w.Severity != "warning" || w.Message == "" {
				t.Errorf("warning %+v: want severity warning and a message", w)
			}
		}
		if !reflect.DeepEqual(codes, want.ManifestWarnings) {
			t.Errorf("warnings = %q, want %q", codes, want.ManifestWarnings)
		}
		if got := m.CapabilityGrants(); !reflect.DeepEqual(got, want.CapabilityGrants) {
			t.Errorf("grants = %+v, want %+v", got, want.CapabilityGrants)
		}
		if got := m.PolicyBindings(); !reflect.DeepEqual(got, want.PolicyBindings) {
			t.Errorf("bindings = %+v, want %+v", got, want.PolicyBindings)
		}
		// The grants serialize with [] for empty lists, as Palyra's do.
		gotJSON, _ := json.Marshal(m.CapabilityGrants())
		wantJSON, _ := json.Marshal(want.CapabilityGrants)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("grants JSON = %s, want %s", gotJSON, wantJSON)
		}
		if err := manifest.CheckCompat(m); err != nil {
			t.Errorf("CheckCompat: %v", err)
		}
	}
	for name, a := range doc.Artifacts {
		t.Run(name, func(t *testing.T) {
			data := artifactManifest(t, name)
			check(t, data, name)
			if got := mustParse(t, data).Integrity.Files; !reflect.DeepEqual(got, a.IntegrityFiles) {
				t.Errorf("integrity = %+v, want %+v", got, a.IntegrityFiles)
			}
		})
	}
	t.Run("palyra-echo-http-example", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(vectorsDir, "palyra-echo-http-example", "skill.toml"))
		if err != nil {
			t.Fatal(err)
		}
		check(t, data, "acme.echo_http-1.0.0.palyra-skill")
		m := mustParse(t, data)
		want := manifest.Quotas{WallClockTimeoutMS: 2000, FuelBudget: 5_000_000, MaxMemoryBytes: 32 << 20}
		if m.ManifestVersion != 1 || len(m.Entrypoints.Tools) != 2 || m.Capabilities.Quotas != want {
			t.Errorf("echo manifest = %+v", m)
		}
	})
}

func TestWarnings(t *testing.T) {
	minimal := string(readFixture(t, "good/minimal_v2.toml"))
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"v2 without operator", minimal, []string{"missing_operator_metadata"}},
		{"v1 without operator", string(readFixture(t, "good/v1_without_operator.toml")), []string{"legacy_manifest_version", "missing_operator_metadata"}},
		{"display name set", minimal + "\n[operator]\ndisplay_name = \"Echo\"\n", nil},
		{"no display name", minimal + "\n[operator]\ntags = [\"x\"]\n", []string{"missing_operator_display_name"}},
		{"empty config", minimal + "\n[operator]\ndisplay_name = \"Echo\"\n\n[operator.config]\n", []string{"empty_operator_config_contract"}},
		{"redaction", string(readFixture(t, "good/operator_warnings.toml")), []string{
			"missing_operator_display_name",
			"operator_config_redaction_recommended", // client_key
			"operator_config_redaction_recommended", // service_token; password is redacted
		}},
		{"redaction hints", minimal + `
[operator]
display_name = "Echo"

[operator.config.properties.my_secret]
type = "string"
[operator.config.properties.api_key_2]
type = "string"
[operator.config.properties.safe]
type = "string"
[operator.config.properties."user.password"]
type = "string"
`, []string{"operator_config_redaction_recommended", "operator_config_redaction_recommended", "operator_config_redaction_recommended"}},
		{"full", string(readFixture(t, "good/full_v2.toml")), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := mustParse(t, []byte(tt.text)).Warnings()
			if ws == nil {
				t.Fatal("Warnings returned nil")
			}
			var codes []string
			for _, w := range ws {
				codes = append(codes, w.Code)
				if w.Severity != "warning" {
					t.Errorf("severity %q", w.Severity)
				}
			}
			if !reflect.DeepEqual(codes, tt.want) {
				t.Errorf("warnings = %q, want %q", codes, tt.want)
			}
		})
	}
}

func TestCapabilityGrantsChannels(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/channels.toml"))
	if got, want := m.CapabilityGrants().Channels, []string{"audit", "ops.alerts"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("channels = %q, want %q", got, want)
	}
}

func TestCapabilityGrants(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/full_v2.toml"))
	want := manifest.CapabilityGrants{
		HTTPHosts:       []string{"10.0.0.1", "API.Weather.Example", "alerts.weather.example.", "api.weather.example", "cdn.weather.example"},
		SecretKeys:      []string{"skill:acme.weather/api_token"},
		StoragePrefixes: []string{"skills/cache", "skills/tmp"},
		Channels:        []string{},
	}
	if got := m.CapabilityGrants(); !reflect.DeepEqual(got, want) {
		t.Fatalf("grants = %#v\nwant %#v", got, want)
	}
	got, _ := json.Marshal(mustParse(t, readFixture(t, "good/minimal_v2.toml")).CapabilityGrants())
	if want := `{"http_hosts":[],"secret_keys":[],"storage_prefixes":[],"channels":[]}`; string(got) != want {
		t.Fatalf("empty grants JSON = %s, want %s", got, want)
	}
}

func TestPolicyBindings(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/full_v2.toml"))
	skill := "skill:acme.weather"
	want := []manifest.PolicyBinding{
		{Action: "skill.capability.device.use", Resource: skill, RequiresApproval: true},
		{Action: "skill.capability.filesystem.write", Resource: skill, RequiresApproval: true},
		{Action: "skill.capability.http.egress", Resource: skill, RequiresApproval: true},
		{Action: "skill.capability.vault.read", Resource: skill, RequiresApproval: true},
		{Action: "tool.execute", Resource: "tool:acme.weather.alerts", RequiresApproval: true},
		{Action: "tool.execute", Resource: "tool:acme.weather.current", RequiresApproval: false},
	}
	if got := m.PolicyBindings(); !reflect.DeepEqual(got, want) {
		t.Fatalf("bindings = %+v\nwant %+v", got, want)
	}

	// Node capabilities alone ask for device.use; equal bindings collapse;
	// the same action and resource sort false before true.
	hand := &manifest.Manifest{SkillID: "acme.x"}
	hand.Capabilities.NodeCapabilities = []string{"gpu"}
	hand.Entrypoints.Tools = []manifest.Tool{
		{ID: "acme.t", Risk: manifest.Risk{RequiresApproval: true}},
		{ID: "acme.t"},
		{ID: "acme.t"},
	}
	want = []manifest.PolicyBinding{
		{Action: "skill.capability.device.use", Resource: "skill:acme.x", RequiresApproval: true},
		{Action: "tool.execute", Resource: "tool:acme.t", RequiresApproval: false},
		{Action: "tool.execute", Resource: "tool:acme.t", RequiresApproval: true},
	}
	if got := hand.PolicyBindings(); !reflect.DeepEqual(got, want) {
		t.Fatalf("bindings = %+v\nwant %+v", got, want)
	}
}
