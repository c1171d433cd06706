package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/policy"
)

// The behaviours Palyra's own audit tests check (its skills crate's
// src/tests.rs), on the same sample manifest. Where this audit is stricter,
// the test says so.

// palyraChecks are the check ids of a one-module report, in order.
var palyraChecks = []string{
	"signature_validity", "sbom_presence", "provenance_presence", "manifest_sanity",
	"manifest_filesystem_scopes", "manifest_http_egress_scopes", "manifest_secret_scopes",
	"forbidden_device_capabilities", "forbidden_wildcard_capabilities",
	"policy_compliance",
	"wasm_module_presence",
	"wasm_module_size_limit", "wasm_module_validation", "wasm_module_complexity", "wasm_exported_function_limit",
	"wasm_wasi_filesystem_imports", "wasm_import_modules", "wasm_import_surface",
	"wasm_memory_limits", "wasm_data_segments", "wasm_table_limits", "wasm_start_function",
	"wasm_entrypoint",
	"provenance_module_digest",
	"sbom_entry_digest",
	"vulnerability_feed_hook",
}

func TestPalyraBaselinePasses(t *testing.T) {
	vr := verified(t, sampleManifest, map[string][]byte{"module.wasm": fixture(t, "palyra_baseline")})
	r := run(t, vr, Input{})
	if !r.Passed || r.ShouldQuarantine {
		t.Fatalf("baseline did not pass: %q", r.QuarantineReasons)
	}
	if len(r.ManifestWarnings) != 0 {
		t.Errorf("manifest_warnings = %v, want none for the v2 sample", r.ManifestWarnings)
	}
	// Palyra warns about its vulnerability feed hook unless an
	// environment variable is set, though it consults no feed either way;
	// here the check consults the installed deny feed (host/feed), and
	// with none installed it is skipped and says so, and nothing warns
	// (RATIONALE.md, "The deny feed").
	if got := r.WarningChecks(); len(got) != 0 {
		t.Errorf("warning checks = %v, want none", got)
	}
	v := r.VulnerabilityScan
	wantStatus(t, v, StatusSkipped, "no deny feed is installed", "palyra feed update")
	if v.CheckID != "vulnerability_feed_hook" || v.Severity != SeverityInfo || v.Details["feed_consulted"] != false {
		t.Errorf("vulnerability_scan = %+v", v)
	}
	if c := mustCheck(t, r, "vulnerability_feed_hook"); c.Status != StatusSkipped {
		t.Errorf("vulnerability_feed_hook check = %+v", c)
	}
	// Palyra's variable changes nothing: the package reads no environment.
	t.Setenv("PALYRA_SKILL_AUDIT_VULN_FEED_HOOK", "https://feed.example.com/hook")
	if again := run(t, vr, Input{}); again.VulnerabilityScan.Status != StatusSkipped || len(again.WarningChecks()) != 0 {
		t.Errorf("with PALYRA_SKILL_AUDIT_VULN_FEED_HOOK set: %+v", again.VulnerabilityScan)
	}
	got := make([]string, len(r.Checks))
	for i, c := range r.Checks {
		got[i] = c.CheckID
	}
	if !slices.Equal(got, palyraChecks) {
		t.Errorf("check ids:\n got %v\nwant %v", got, palyraChecks)
	}
	if r.SkillID != "acme.echo_http" || r.Version != "1.0.0" || r.Publisher != "acme" ||
		!r.Accepted || r.TrustDecision != "tofu_newly_pinned" || r.PayloadSHA256 != vr.PayloadSHA256 ||
		r.GeneratedAtUnixMS != auditedAt.UnixMilli() {
		t.Errorf("report header = %+v", r)
	}
	want := Policy{MaxModuleBytes: 8 << 20, MaxExportedFunctions: 128}
	if r.Policy != want {
		t.Errorf("policy = %+v, want Palyra's default %+v", r.Policy, want)
	}
	if r.Err() != nil {
		t.Errorf("Err() = %v", r.Err())
	}
}

// TestPalyraEmptyModule: Palyra's baseline test audits the 8-byte empty
// module and passes it. Palyra's own runtime cannot run it (no run
// export, MissingExport); this audit says so at admission.
func TestPalyraEmptyModule(t *testing.T) {
	r := auditModule(t, sampleManifest, []byte("\x00asm\x01\x00\x00\x00"))
	if r.Passed {
		t.Fatal("the empty module passed")
	}
	if got := r.FailedChecks(); !slices.Equal(got, []string{"wasm_entrypoint"}) {
		t.Fatalf("failed checks = %v, want only wasm_entrypoint", got)
	}
	wantStatus(t, mustCheck(t, r, "wasm_entrypoint"), StatusFail, "modules/module.wasm", `"run"`)
}

func TestPalyraModuleSizeLimit(t *testing.T) {
	vr := verified(t, sampleManifest, map[string][]byte{"module.wasm": fixture(t, "palyra_baseline")})
	r := run(t, vr, Input{Options: Options{MaxModuleBytes: 4, MaxExportedFunctions: 16}})
	if !r.ShouldQuarantine {
		t.Fatal("an oversized module did not quarantine")
	}
	c := mustCheck(t, r, "wasm_module_size_limit")
	wantStatus(t, c, StatusFail, "module 'modules/module.wasm' exceeds max_module_bytes (36 > 4)")
	if c.Details["module_bytes"] != uint64(36) || c.Details["max_module_bytes"] != uint64(4) {
		t.Errorf("details = %v", c.Details)
	}
	// The module's other checks did not run, and say so.
	for _, id := range append([]string{"wasm_module_validation"}, moduleChecks...) {
		wantStatus(t, moduleCheck(t, r, id, "modules/module.wasm"), StatusSkipped, "exceeds max_module_bytes")
	}
	wantStatus(t, mustCheck(t, r, "wasm_entrypoint"), StatusSkipped)
	if got := r.FailedChecks(); !slices.Equal(got, []string{"wasm_module_size_limit"}) {
		t.Errorf("failed checks = %v", got)
	}
	if r.Policy.MaxModuleBytes != 4 || r.Policy.MaxExportedFunctions != 16 {
		t.Errorf("policy = %+v", r.Policy)
	}
}

func TestPalyraWASIFilesystemWithoutRoots(t *testing.T) {
	m := replace(t, sampleManifest, `read_roots = ["skills/data"]`, `read_roots = []`)
	m = replace(t, m, `write_roots = ["skills/cache"]`, `write_roots = []`)
	r := auditModule(t, m, fixture(t, "palyra_wasi_filesystem"))
	if !r.ShouldQuarantine {
		t.Fatal("a wasi:filesystem import without roots did not quarantine")
	}
	c := mustCheck(t, r, "wasm_wasi_filesystem_imports")
	wantStatus(t, c, StatusFail, "imports wasi:filesystem without declared filesystem capability", "wasi:filesystem.path_open")
	if c.Details["filesystem_declared"] != false {
		t.Errorf("details = %v", c.Details)
	}
	// Beyond Palyra: wasi:filesystem is not a module the host provides.
	wantStatus(t, mustCheck(t, r, "wasm_import_modules"), StatusFail, "wasi:filesystem.path_open")

	// With the sample's roots, Palyra's check passes (the import still
	// fails wasm_import_modules).
	r = auditModule(t, sampleManifest, fixture(t, "palyra_wasi_filesystem"))
	wantStatus(t, mustCheck(t, r, "wasm_wasi_filesystem_imports"), StatusPass)
	wantStatus(t, mustCheck(t, r, "wasm_import_modules"), StatusFail)
}

func TestPalyraForbiddenDeviceCapabilities(t *testing.T) {
	m := replace(t, sampleManifest, `device_capabilities = []`, `device_capabilities = ["camera"]`)
	vr := verified(t, m, map[string][]byte{"module.wasm": fixture(t, "palyra_baseline")})
	r := run(t, vr, Input{})
	c := mustCheck(t, r, "forbidden_device_capabilities")
	wantStatus(t, c, StatusFail, "manifest declares device capabilities")
	if d, _ := c.Details["device_capabilities"].([]string); !slices.Equal(d, []string{"camera"}) {
		t.Errorf("details = %v", c.Details)
	}
	// The operator profile refuses it too, naming the capability.
	wantStatus(t, mustCheck(t, r, "policy:capabilities.device_capabilities[0]"), StatusFail,
		`capabilities.device_capabilities[0] "camera"`, "capabilities.allow_device")

	// A profile that allows devices allows both.
	prof := policy.Default()
	prof.Capabilities.AllowDevice = true
	r = run(t, vr, Input{Profile: prof})
	if !r.Passed {
		t.Fatalf("with allow_device: %q", r.QuarantineReasons)
	}
	if !r.Policy.AllowDeviceCapabilities {
		t.Errorf("policy = %+v", r.Policy)
	}
}

func TestPalyraForbiddenWildcardCapabilities(t *testing.T) {
	// Any opt-in flag fails, even with no '*' in use.
	m := replace(t, sampleManifest, "[capabilities]\n", "[capabilities]\nwildcard_opt_in = { node = true }\n")
	vr := verified(t, m, map[string][]byte{"module.wasm": fixture(t, "palyra_baseline")})
	r := run(t, vr, Input{})
	c := mustCheck(t, r, "forbidden_wildcard_capabilities")
	wantStatus(t, c, StatusFail, "wildcard capabilities")
	if d, _ := c.Details["wildcard_opt_ins"].([]string); !slices.Equal(d, []string{"node"}) {
		t.Errorf("details = %v", c.Details)
	}
	prof := policy.Default()
	prof.Capabilities.AllowWildcards = true
	r = run(t, vr, Input{Profile: prof})
	wantStatus(t, mustCheck(t, r, "forbidden_wildcard_capabilities"), StatusPass)
	if !r.Policy.AllowWildcardCapabilities {
		t.Errorf("policy = %+v", r.Policy)
	}
}

func TestPalyraExportedFunctionLimit(t *testing.T) {
	vr := verified(t, sampleManifest, map[string][]byte{"module.wasm": fixture(t, "palyra_exports3")})
	r := run(t, vr, Input{Options: Options{MaxModuleBytes: 64 << 10, MaxExportedFunctions: 1}})
	if !r.ShouldQuarantine {
		t.Fatal("three exports over a limit of one did not quarantine")
	}
	c := mustCheck(t, r, "wasm_exported_function_limit")
	wantStatus(t, c, StatusFail, "module 'modules/module.wasm' exports too many functions (3 > 1)")
	if c.Details["exported_functions"] != 3 || c.Details["max_exported_functions"] != 1 {
		t.Errorf("details = %v", c.Details)
	}
	// Under the default limit it passes.
	r = run(t, vr, Input{})
	wantStatus(t, mustCheck(t, r, "wasm_exported_function_limit"), StatusPass, "(3 <= 128)")
}

func TestPalyraLegacyManifestWarning(t *testing.T) {
	legacy := replace(t, sampleManifest, "manifest_version = 2", "manifest_version = 1")
	legacy, _, _ = strings.Cut(legacy, "\n\n[operator]")
	r := auditModule(t, legacy, fixture(t, "palyra_baseline"))
	c := mustCheck(t, r, "manifest_warning:legacy_manifest_version")
	wantStatus(t, c, StatusWarn)
	if c.Severity != SeverityWarning || c.Details["code"] != "legacy_manifest_version" || c.Details["severity"] != "warning" {
		t.Errorf("check = %+v", c)
	}
	if len(r.ManifestWarnings) == 0 || r.ManifestWarnings[0].Code != "legacy_manifest_version" {
		t.Errorf("manifest_warnings = %v", r.ManifestWarnings)
	}
	// Warnings do not fail the audit.
	if !r.Passed {
		t.Errorf("legacy manifest failed: %q", r.QuarantineReasons)
	}
}

func TestPalyraCapabilityScopes(t *testing.T) {
	r := auditModule(t, sampleManifest, fixture(t, "palyra_baseline"))
	fs := mustCheck(t, r, "manifest_filesystem_scopes")
	wantStatus(t, fs, StatusPass, "1 filesystem read root(s) and 1 write root(s)")
	http := mustCheck(t, r, "manifest_http_egress_scopes")
	wantStatus(t, http, StatusPass, "1 http egress host(s)")
	if h, _ := http.Details["hosts"].([]string); !slices.Equal(h, []string{"api.example.com"}) {
		t.Errorf("hosts = %v", http.Details)
	}
	sec := mustCheck(t, r, "manifest_secret_scopes")
	wantStatus(t, sec, StatusPass, "1 secret scope(s)")
	if s, _ := sec.Details["scopes"].([]string); !slices.Equal(s, []string{"skill:acme.echo_http"}) {
		t.Errorf("scopes = %v", sec.Details)
	}
}

// TestPalyraVectors audits the signed vectors derived from Palyra's
// examples (testdata/vectors/derived). The hook skill (run7.wasm) passes.
// The echo-http example passes Palyra's audit but ships the empty module,
// which no runtime can run: here it fails wasm_entrypoint, and only that.
// Their provenance has no digest or Palyra's placeholder, which only warns.
func TestPalyraVectors(t *testing.T) {
	for _, tt := range []struct {
		file   string
		failed []string
		prov   string
	}{
		{"acme.hook_skill-1.0.0.palyra-skill", []string{}, "carries no digest"},
		{"acme.echo_http-1.0.0.palyra-skill", []string{"wasm_entrypoint"}, "placeholder-generated-at-build"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../../testdata/vectors/derived", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			insp, err := artifact.Inspect(data)
			if err != nil {
				t.Fatal(err)
			}
			r := run(t, &artifact.VerifyReport{Inspection: insp, TrustDecision: "tofu_newly_pinned"}, Input{})
			if got := r.FailedChecks(); !slices.Equal(got, tt.failed) {
				t.Errorf("failed checks = %v, want %v (%q)", got, tt.failed, r.QuarantineReasons)
			}
			// Their provenance carries Palyra's placeholder digest, or
			// none: a warning, not a failure.
			wantStatus(t, mustCheck(t, r, "provenance_module_digest"), StatusWarn, tt.prov)
			t.Logf("warnings: %v", r.WarningChecks())
		})
	}
}
