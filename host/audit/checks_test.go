package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/policy"
)

const mod = "modules/module.wasm"

// The checks this audit adds to Palyra's, each on a hand-written fixture of
// testdata/audit.
func TestModuleChecks(t *testing.T) {
	smallMemory := replace(t, bareManifest, "[compat]", "[capabilities.quotas]\nmax_memory_bytes = 65536\n\n[compat]")
	tests := []struct {
		name     string
		manifest string
		fixture  string
		check    string
		status   Status
		subs     []string
	}{
		// wasm_import_modules
		{"unknown module", bareManifest, "import_unknown_module", "wasm_import_modules", StatusFail,
			[]string{"env.now", "does not provide"}},
		{"host modules only", sampleManifest, "reactor", "wasm_import_modules", StatusPass, nil},

		// wasm_import_surface
		{"path_open without fs capability", bareManifest, "wasi_path_open", "wasm_import_surface", StatusFail,
			[]string{"wasi_snapshot_preview1.path_open", "no file access", "the manifest declares no filesystem capability"}},
		{"path_open with fs roots", sampleManifest, "wasi_path_open", "wasm_import_surface", StatusFail,
			[]string{"wasi_snapshot_preview1.path_open", "no file access", "only through the storage capability"}},
		{"wasi outside the subset", bareManifest, "wasi_outside_subset", "wasm_import_surface", StatusFail,
			[]string{"wasi_snapshot_preview1.sock_accept", "no socket access", "wasi_snapshot_preview1.fd_readdir",
				"wasi_snapshot_preview1.fd_pread", "wasi_snapshot_preview1.proc_raise", "outside the WASI subset"}},
		{"unknown host function", bareManifest, "import_unknown_name", "wasm_import_surface", StatusFail,
			[]string{"palyra:skills/host@1.exec", "not a function of sdk/ABI.md §2"}},
		{"wrong signatures", sampleManifest, "import_bad_signature", "wasm_import_surface", StatusFail,
			[]string{"palyra:plugins/host-capabilities@0.1.0.http-count has signature (i32) -> i32, but the host provides () -> i32",
				"wasi_snapshot_preview1.fd_write has signature (i32, i32, i32) -> i32, but the host provides (i32, i32, i32, i32) -> i32"}},
		{"memory import", bareManifest, "import_memory", "wasm_import_surface", StatusFail,
			[]string{"palyra:skills/host@1.memory is a memory", "only functions"}},
		{"handles without capabilities", bareManifest, "cap_all_handles", "wasm_import_surface", StatusFail,
			[]string{"http-count asks for http handles", "http-handle", "secret-count asks for secret handles", "secret-handle",
				"storage-count asks for storage handles", "storage-handle"}},
		{"channel handles only warn", sampleManifest, "cap_all_handles", "wasm_import_surface", StatusWarn,
			[]string{"channel-count asks for channel handles", "channel-handle", "a manifest cannot declare channels"}},
		{"handles with declared capabilities", sampleManifest, "cap_http_storage", "wasm_import_surface", StatusPass, nil},
		{"capability-call without capability", bareManifest, "capability_call", "wasm_import_surface", StatusWarn,
			[]string{"palyra:skills/host@1.capability-call", "declares no capability"}},
		{"capability-call with capabilities", sampleManifest, "capability_call", "wasm_import_surface", StatusPass, nil},
		{"wasi subset and host functions", bareManifest, "reactor", "wasm_import_surface", StatusPass, nil},

		// wasm_memory_limits
		{"memory minimum over the manifest default", bareManifest, "memory_min_over", "wasm_memory_limits", StatusFail,
			[]string{"memory 0 declares a minimum of 2000 pages (125 MiB), over the memory limit of 64 MiB",
				"max_memory_bytes 67108864", "quotas.max_memory_bytes 268435456"}},
		{"memory minimum over the manifest quota", sampleManifest, "memory_min_over", "wasm_memory_limits", StatusFail,
			[]string{"over the memory limit of 32 MiB"}},
		{"memory maximum over the limit", bareManifest, "memory_max_over", "wasm_memory_limits", StatusWarn,
			[]string{"maximum of 2000 pages", "capped at the limit at run time"}},
		{"shared memory", bareManifest, "memory_shared", "wasm_memory_limits", StatusFail,
			[]string{"memory 0 is shared", "threads are not supported"}},
		{"two memories", bareManifest, "memory_two", "wasm_memory_limits", StatusFail,
			[]string{"2 memories", "supports one"}},
		{"memory64", bareManifest, "memory64", "wasm_memory_limits", StatusFail,
			[]string{"memory 0 is 64-bit (memory64)"}},
		{"one small memory", bareManifest, "reactor", "wasm_memory_limits", StatusPass, nil},

		// wasm_data_segments
		{"data over the memory limit", smallMemory, "data_over", "wasm_data_segments", StatusFail,
			[]string{"67584 bytes of data segments, over the memory limit of 64 KiB"}},
		{"data within the memory limit", bareManifest, "data_over", "wasm_data_segments", StatusPass, nil},

		// wasm_table_limits
		{"table over the limit", bareManifest, "table_over", "wasm_table_limits", StatusFail,
			[]string{"table 0 declares a minimum of 200000 elements, over the table limit of 100000", "quotas.max_table_elements"}},
		{"two tables", bareManifest, "table_two", "wasm_table_limits", StatusWarn,
			[]string{"2 tables"}},
		{"no table", bareManifest, "reactor", "wasm_table_limits", StatusPass, nil},

		// wasm_start_function
		{"start function", bareManifest, "start_function", "wasm_start_function", StatusWarn,
			[]string{"has a start function (function 0)", "before any input"}},
		{"no start function", bareManifest, "reactor", "wasm_start_function", StatusPass, nil},

		// wasm_entrypoint
		{"no entrypoint", bareManifest, "no_entrypoint", "wasm_entrypoint", StatusFail,
			[]string{"neither palyra_plugin_main nor run is exported"}},
		{"entrypoint of the wrong type", bareManifest, "entrypoint_bad_type", "wasm_entrypoint", StatusFail,
			[]string{`entrypoint "run" has type (i32) -> i32, not () -> i32`}},
		{"default_entrypoint not exported", sampleManifest, "reactor", "wasm_entrypoint", StatusFail,
			[]string{`does not export the entrypoint "run" named by operator.plugin.default_entrypoint`}},
		{"memory not exported", bareManifest, "missing_memory_export", "wasm_entrypoint", StatusFail,
			[]string{"palyra:skills/host@1.output-write", `exports no memory named "memory"`}},
		{"_initialize of the wrong type", bareManifest, "initialize_bad_type", "wasm_entrypoint", StatusFail,
			[]string{"_initialize has type () -> i32, not () -> ()"}},
		{"command module", bareManifest, "command_start", "wasm_entrypoint", StatusFail,
			[]string{"command module", "_start"}},
		{"reactor", bareManifest, "reactor", "wasm_entrypoint", StatusPass,
			[]string{`"palyra_plugin_main"`}},
		{"palyra module", sampleManifest, "palyra_baseline", "wasm_entrypoint", StatusPass,
			[]string{`"run"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := auditModule(t, tt.manifest, fixture(t, tt.fixture))
			c := moduleCheckOrID(t, r, tt.check)
			wantStatus(t, c, tt.status, tt.subs...)
			if c.Details["module_path"] != mod {
				t.Errorf("details.module_path = %v", c.Details["module_path"])
			}
			if tt.status == StatusFail {
				if !slices.Contains(r.QuarantineReasons, c.Message) || r.Passed {
					t.Errorf("the failed check is not a quarantine reason: %q", r.QuarantineReasons)
				}
				if err := r.Err(); !errors.Is(err, ErrAuditFailed) {
					t.Errorf("Err() = %v", err)
				}
			}
		})
	}
}

func moduleCheckOrID(t *testing.T, r *Report, id string) Check {
	t.Helper()
	return moduleCheck(t, r, id, mod)
}

// TestPathOpenQuarantined is the case the admission audit exists for:
// wasi_snapshot_preview1.path_open without a filesystem capability
// quarantines the skill with reasons naming the import.
func TestPathOpenQuarantined(t *testing.T) {
	r := auditModule(t, bareManifest, fixture(t, "wasi_path_open"))
	if !r.ShouldQuarantine {
		t.Fatal("not quarantined")
	}
	if got := r.FailedChecks(); !slices.Equal(got, []string{"wasm_wasi_filesystem_imports", "wasm_import_surface"}) {
		t.Errorf("failed checks = %v", got)
	}
	for _, reason := range r.QuarantineReasons {
		if !strings.Contains(reason, "wasi_snapshot_preview1.path_open") {
			t.Errorf("reason %q does not name the import", reason)
		}
	}
	err := r.Err()
	var fe *FailedError
	if !errors.As(err, &fe) || errcode.Of(err) != "audit_failed" {
		t.Fatalf("Err() = %#v", err)
	}
	if !strings.HasPrefix(err.Error(), "audit: skill acme.bare 1.0.0 failed the security audit: ") ||
		!strings.Contains(err.Error(), "wasi_snapshot_preview1.path_open") {
		t.Errorf("error = %q", err)
	}
	if !slices.Equal(fe.FailedChecks, r.FailedChecks()) || !slices.Equal(fe.Reasons, r.QuarantineReasons) {
		t.Errorf("FailedError = %+v", fe)
	}
}

// TestWATRefused: Palyra's audit compiles WAT text (wasmtime accepts it);
// this audit admits only binary modules and says why.
func TestWATRefused(t *testing.T) {
	wat, err := os.ReadFile(filepath.Join(fixtureDir, "palyra_baseline.wat"))
	if err != nil {
		t.Fatal(err)
	}
	for name, module := range map[string][]byte{
		"wat":       wat,
		"version 2": []byte("\x00asm\x02\x00\x00\x00"),
		"truncated": fixture(t, "reactor")[:40],
		"empty":     {},
	} {
		t.Run(name, func(t *testing.T) {
			r := auditModule(t, sampleManifest, module)
			c := moduleCheck(t, r, "wasm_module_validation", mod)
			wantStatus(t, c, StatusFail, "module 'modules/module.wasm' failed validation: ")
			if c.Details["error_code"] != "invalid_wasm" {
				t.Errorf("details = %v", c.Details)
			}
			for _, id := range moduleChecks {
				wantStatus(t, moduleCheck(t, r, id, mod), StatusSkipped, "failed validation")
			}
			wantStatus(t, mustCheck(t, r, "wasm_entrypoint"), StatusSkipped)
		})
	}
	r := auditModule(t, sampleManifest, wat)
	wantStatus(t, mustCheck(t, r, "wasm_module_validation"), StatusFail, "WebAssembly text (WAT)")
}

func TestReactorPasses(t *testing.T) {
	r := auditModule(t, bareManifest, fixture(t, "reactor"))
	if !r.Passed {
		t.Fatalf("reasons: %q", r.QuarantineReasons)
	}
	if got := r.WarningChecks(); len(got) != 0 {
		t.Errorf("warnings = %v, want none", got)
	}
	c := mustCheck(t, r, "wasm_entrypoint")
	if c.Details["entrypoint_source"] != "exported" || c.Details["initialize"] != true || c.Details["memory_exported"] != true {
		t.Errorf("details = %v", c.Details)
	}
}

// TestLimitsFollowTheProfile: memory and table limits come from the
// decision (min of manifest and profile), not from constants.
func TestLimitsFollowTheProfile(t *testing.T) {
	vr := verified(t, bareManifest, map[string][]byte{"module.wasm": fixture(t, "table_over")})
	prof := policy.Default()
	prof.Quotas.MaxTableElements = 300000
	r := run(t, vr, Input{Profile: prof})
	wantStatus(t, mustCheck(t, r, "wasm_table_limits"), StatusPass, "300000")

	// A profile memory cap below the manifest quota is the limit (and
	// the quota itself is a policy violation).
	vr = verified(t, bareManifest, map[string][]byte{"module.wasm": fixture(t, "data_over")})
	prof = policy.Default()
	prof.Quotas.MaxMemoryBytes = 65536
	r = run(t, vr, Input{Profile: prof})
	wantStatus(t, mustCheck(t, r, "wasm_data_segments"), StatusFail, "over the memory limit of 64 KiB",
		"the operator profile's quotas.max_memory_bytes 65536")
	wantStatus(t, mustCheck(t, r, "policy:capabilities.quotas.max_memory_bytes"), StatusFail, "67108864")
}

func TestPolicyViolations(t *testing.T) {
	vr := verified(t, sampleManifest, map[string][]byte{"module.wasm": fixture(t, "palyra_baseline")})
	prof := policy.Default()
	prof.HTTP.AllowedHosts = []string{"other.example.com"}
	prof.Quotas.MaxFuel = 1000
	r := run(t, vr, Input{Profile: prof})
	if r.Passed {
		t.Fatal("passed outside the profile")
	}
	if _, ok := r.Check("policy_compliance"); ok {
		t.Error("policy_compliance reported alongside violations")
	}
	host := mustCheck(t, r, "policy:capabilities.http_egress_allowlist[0]")
	wantStatus(t, host, StatusFail, `policy_violation: capabilities.http_egress_allowlist[0] "api.example.com"`, "http.allowed_hosts")
	if host.Details["capability"] != "capabilities.http_egress_allowlist[0]" || host.Details["value"] != "api.example.com" {
		t.Errorf("details = %v", host.Details)
	}
	wantStatus(t, mustCheck(t, r, "policy:capabilities.quotas.fuel_budget"), StatusFail, "5000000", "quotas.max_fuel")
	d, err := prof.Evaluate(vr.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, reason := range d.Reasons() {
		if !slices.Contains(r.QuarantineReasons, reason) {
			t.Errorf("reason %q missing from %q", reason, r.QuarantineReasons)
		}
	}

	// Under the default profile the sample complies; its read root is a
	// read-only storage grant, so nothing is ignored.
	r = run(t, vr, Input{})
	c := mustCheck(t, r, "policy_compliance")
	wantStatus(t, c, StatusPass)
	if ig, ok := c.Details["ignored"].([]string); !ok || len(ig) != 0 {
		t.Errorf("details = %v", c.Details)
	}
}

func TestRunModuleSelection(t *testing.T) {
	two := map[string][]byte{"b.wasm": fixture(t, "reactor"), "a.wasm": fixture(t, "table_two")}

	// Two modules and no default_module_path: the runtime cannot choose.
	r := run(t, verified(t, bareManifest, two), Input{})
	wantStatus(t, mustCheck(t, r, "wasm_entrypoint"), StatusFail, "2 modules", "default_module_path is not set")

	// Per-module checks come module by module, in byte order of the path
	// (provenance_module_digest, after wasm_entrypoint, too).
	var order []string
	for _, c := range r.Checks {
		if c.CheckID == "provenance_module_digest" {
			continue
		}
		if p, ok := c.Details["module_path"].(string); ok && (len(order) == 0 || order[len(order)-1] != p) {
			order = append(order, p)
		}
	}
	if !slices.Equal(order, []string{"modules/a.wasm", "modules/b.wasm"}) {
		t.Errorf("module order = %v", order)
	}
	wantStatus(t, moduleCheck(t, r, "wasm_table_limits", "modules/a.wasm"), StatusWarn)
	wantStatus(t, moduleCheck(t, r, "wasm_table_limits", "modules/b.wasm"), StatusPass)

	// default_module_path picks one.
	m := replace(t, bareManifest, `display_name = "Bare"`, "display_name = \"Bare\"\n\n[operator.plugin]\ndefault_module_path = \"modules/b.wasm\"")
	r = run(t, verified(t, m, two), Input{})
	c := mustCheck(t, r, "wasm_entrypoint")
	wantStatus(t, c, StatusPass)
	if c.Details["module_path"] != "modules/b.wasm" || c.Details["module_source"] != "default_module_path" {
		t.Errorf("details = %v", c.Details)
	}
	if !r.Passed {
		t.Errorf("reasons: %q", r.QuarantineReasons)
	}

	// ... and must name a module of the artifact.
	r = run(t, verified(t, sampleManifest, map[string][]byte{"other.wasm": fixture(t, "palyra_baseline")}), Input{})
	wantStatus(t, mustCheck(t, r, "wasm_entrypoint"), StatusFail, "'modules/module.wasm' names no module")
}

func TestInvalidInput(t *testing.T) {
	vr := verified(t, bareManifest, map[string][]byte{"module.wasm": fixture(t, "reactor")})
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	badProfile := policy.Default()
	badProfile.HTTP.AllowedSchemes = nil
	tests := []struct {
		name string
		ctx  context.Context
		in   Input
		want error
	}{
		{"nil inspection", ctx, Input{TrustDecision: "allowlisted"}, ErrInvalidInput},
		{"nil manifest", ctx, Input{Inspection: &artifact.Inspection{}, TrustDecision: "allowlisted"}, ErrInvalidInput},
		{"no trust decision", ctx, Input{Inspection: vr.Inspection, TrustDecision: " "}, ErrInvalidInput},
		{"negative export limit", ctx, Input{Inspection: vr.Inspection, TrustDecision: "allowlisted",
			Options: Options{MaxExportedFunctions: -1}}, ErrInvalidInput},
		{"invalid profile", ctx, Input{Inspection: vr.Inspection, TrustDecision: "allowlisted", Profile: badProfile},
			policy.ErrInvalidProfile},
		{"cancelled", cancelled, Input{Inspection: vr.Inspection, TrustDecision: "allowlisted"}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Audit(tt.ctx, tt.in)
			if !errors.Is(err, tt.want) || r != nil {
				t.Fatalf("Audit = %v, %v; want %v", r, err, tt.want)
			}
			if !strings.Contains(err.Error(), "audit") {
				t.Errorf("error %q does not name the audit", err)
			}
		})
	}
	if errcode.Of(ErrInvalidInput) != "invalid_audit_input" || errcode.Of(ErrAuditFailed) != "audit_failed" {
		t.Error("codes changed")
	}
}

// TestHostileNames: names from the module are quoted and cut in messages.
func TestHostileNames(t *testing.T) {
	long := strings.Repeat("x", 500)
	for _, tt := range []struct{ in, want string }{
		{"env", "env"},
		{"", `""`},
		{"a b", `"a b"`},
		{"line\nbreak", `"line\nbreak"`},
		{"\xff", `"\xff"`},
		{long, `"` + long[:maxNameBytes] + `"...`},
	} {
		if got := displayName(tt.in); got != tt.want {
			t.Errorf("displayName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := mp("modules/a\nb.wasm"); got != `"modules/a\nb.wasm"` {
		t.Errorf("mp = %s", got)
	}
	if got := mp("modules/écho.wasm"); got != "modules/écho.wasm" {
		t.Errorf("mp = %s", got)
	}
}

func TestPagesToBytes(t *testing.T) {
	if pagesToBytes(2) != 131072 || pagesToBytes(1<<48) != ^uint64(0) || pagesToBytes(1<<47) != 1<<63 {
		t.Error("pagesToBytes")
	}
}
