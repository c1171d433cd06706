package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/skillpath"
	"github.com/palyra-go/palyra/host/manifest"
)

const manifestsDir = "../../testdata/manifests"

func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(manifestsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParse(t testing.TB, data []byte) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return m
}

func fieldError(t *testing.T, err error) *manifest.FieldError {
	t.Helper()
	var fe *manifest.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *manifest.FieldError", err, err)
	}
	return fe
}

// TestParseGood parses every good fixture, checks its round trip through
// Marshal and that it has no path-rule surprises.
func TestParseGood(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(manifestsDir, "good", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no good fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m := mustParse(t, data)
			out, err := manifest.Marshal(m)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			back := mustParse(t, out)
			if !reflect.DeepEqual(m, back) {
				t.Fatalf("round trip changed the manifest\nbefore: %#v\nafter:  %#v\ntext:\n%s", m, back, out)
			}
			again, err := manifest.Marshal(back)
			if err != nil || string(again) != string(out) {
				t.Fatalf("Marshal is not stable (err %v)", err)
			}
			if err := manifest.CheckCompat(m); err != nil {
				t.Fatalf("CheckCompat: %v", err)
			}
		})
	}
}

type badCase struct {
	path string  // want FieldError.Path
	err  error   // want errors.Is(err, this)
	also []error // and these
}

var (
	parse    = manifest.ErrParse
	invalid  = manifest.ErrValidation
	pathRule = []error{skillpath.ErrInvalid}
)

// badCases maps every file of testdata/manifests/bad to the error it must
// give: the field path, and the sentinels it must wrap.
var badCases = map[string]badCase{
	// Whole-document problems.
	"not_utf8":           {"", parse, nil},
	"toml_syntax":        {"", parse, nil},
	"toml_duplicate_key": {"", parse, nil},

	// Strict decoding: unknown keys at every depth, in document order.
	"unknown_key_top":       {"colour", parse, nil},
	"unknown_key_order":     {"zeta", parse, nil},
	"unknown_key_tool":      {"entrypoints.tools[1].export", parse, nil},
	"unknown_key_risk":      {"entrypoints.tools[0].risk.auto_approve", parse, nil},
	"unknown_key_quotas":    {"capabilities.quotas.max_tables", parse, nil},
	"unknown_key_opt_in":    {"capabilities.wildcard_opt_in.storage", parse, nil},
	"unknown_key_secret":    {"capabilities.secrets[0].scopes", parse, nil},
	"unknown_key_contract":  {"operator.plugin.contracts[0].name", parse, nil},
	"unknown_key_property":  {"operator.config.properties.api_key.secret", parse, nil},
	"unknown_key_checklist": {"builder.checklist.notes", parse, nil},
	"unknown_key_integrity": {"integrity.files[0].size", parse, nil},

	// Legacy aliases: the old and the new name of one field together.
	"compat_both_major_names":       {"compat.min_protocol_major", parse, nil},
	"compat_both_min_version_names": {"compat.min_runtime_version", parse, nil},

	// Required keys and types.
	"missing_skill_id":          {"skill_id", parse, nil},
	"missing_compat":            {"compat", parse, nil},
	"missing_compat_major":      {"compat.required_protocol_major", parse, nil},
	"missing_entrypoints":       {"entrypoints", parse, nil},
	"missing_input_schema":      {"entrypoints.tools[0].input_schema", parse, nil},
	"missing_before_unknown":    {"entrypoints.tools[0].entry", parse, nil},
	"wrong_type_version":        {"version", parse, nil},
	"wrong_type_quota":          {"capabilities.quotas.fuel_budget", parse, nil},
	"wrong_type_tools":          {"entrypoints.tools", parse, nil},
	"negative_quota":            {"capabilities.quotas.wall_clock_timeout_ms", parse, nil},
	"manifest_version_overflow": {"manifest_version", parse, nil},
	"wrong_type_key_name":       {"capabilities.secrets[0].key_names[1]", parse, nil},

	// Top level.
	"manifest_version_3":    {"manifest_version", invalid, nil},
	"manifest_version_0":    {"manifest_version", invalid, nil},
	"skill_id_dot":          {"skill_id", invalid, nil},
	"skill_id_dotdot":       {"skill_id", invalid, nil},
	"skill_id_double_dot":   {"skill_id", invalid, nil},
	"skill_id_leading_dot":  {"skill_id", invalid, nil},
	"skill_id_trailing_dot": {"skill_id", invalid, nil},
	"skill_id_drive":        {"skill_id", invalid, nil},
	"skill_id_colon":        {"skill_id", invalid, nil},
	"skill_id_upper":        {"skill_id", invalid, nil},
	"skill_id_blank":        {"skill_id", invalid, nil},
	"name_blank":            {"name", invalid, nil},
	"version_two_parts":     {"version", invalid, nil},
	"version_prerelease":    {"version", invalid, nil},
	"version_negative":      {"version", invalid, nil},
	"version_overflow":      {"version", invalid, nil},
	"publisher_upper":       {"publisher", invalid, nil},

	// Tools.
	"no_tools":                    {"entrypoints.tools", invalid, nil},
	"tool_id_not_namespaced":      {"entrypoints.tools[1].id", invalid, nil},
	"tool_id_publisher_only":      {"entrypoints.tools[0].id", invalid, nil},
	"tool_id_duplicate":           {"entrypoints.tools[1].id", invalid, nil},
	"tool_id_bad_char":            {"entrypoints.tools[0].id", invalid, nil},
	"tool_name_blank":             {"entrypoints.tools[0].name", invalid, nil},
	"tool_description_blank":      {"entrypoints.tools[0].description", invalid, nil},
	"input_schema_not_table":      {"entrypoints.tools[0].input_schema", invalid, nil},
	"output_schema_not_compiling": {"entrypoints.tools[0].output_schema", invalid, nil},
	"schema_remote_ref":           {"entrypoints.tools[0].input_schema", invalid, nil},
	"schema_file_ref":             {"entrypoints.tools[0].output_schema", invalid, nil},
	"schema_remote_metaschema":    {"entrypoints.tools[0].input_schema", invalid, nil},
	"schema_datetime":             {"entrypoints.tools[0].input_schema.const", invalid, nil},
	"schema_nan":                  {"entrypoints.tools[0].input_schema.maximum", invalid, nil},
	"schema_bad_regex":            {"entrypoints.tools[0].input_schema", invalid, nil},

	// Capabilities.
	"http_wildcard_without_opt_in":    {"capabilities.http_egress_allowlist[1]", invalid, nil},
	"channels_wildcard":               {"capabilities.channels[1]", invalid, nil},
	"channels_bad_name":               {"capabilities.channels[1]", invalid, nil},
	"http_host_scheme":                {"capabilities.http_egress_allowlist[0]", invalid, nil},
	"http_host_port":                  {"capabilities.http_egress_allowlist[0]", invalid, nil},
	"http_host_empty_label":           {"capabilities.http_egress_allowlist[0]", invalid, nil},
	"http_host_leading_dash":          {"capabilities.http_egress_allowlist[0]", invalid, nil},
	"http_host_blank":                 {"capabilities.http_egress_allowlist[0]", invalid, nil},
	"http_host_unicode_fold":          {"capabilities.http_egress_allowlist[0]", invalid, nil},
	"fs_wildcard_without_opt_in":      {"capabilities.filesystem.read_roots[0]", invalid, nil},
	"fs_wildcard_parent":              {"capabilities.filesystem.read_roots[1]", invalid, pathRule},
	"fs_wildcard_empty_segment":       {"capabilities.filesystem.read_roots[1]", invalid, pathRule},
	"fs_wildcard_inner_empty_segment": {"capabilities.filesystem.read_roots[1]", invalid, pathRule},
	"fs_write_root_absolute":          {"capabilities.filesystem.write_roots[0]", invalid, pathRule},
	"secret_scope_principal_empty":    {"capabilities.secrets[0].scope", invalid, nil},
	"secret_scope_channel_empty":      {"capabilities.secrets[0].scope", invalid, nil},
	"secret_scope_skill_empty":        {"capabilities.secrets[0].scope", invalid, nil},
	"secret_scope_unknown":            {"capabilities.secrets[0].scope", invalid, nil},
	// The vault scope of publishers' signing keys: no skill may name it.
	"secret_scope_signing":               {"capabilities.secrets[0].scope", invalid, nil},
	"secret_key_names_empty":             {"capabilities.secrets[0].key_names", invalid, nil},
	"secret_key_wildcard_without_opt_in": {"capabilities.secrets[0].key_names[0]", invalid, nil},
	"secret_key_bad":                     {"capabilities.secrets[0].key_names[2]", invalid, nil},
	"device_wildcard_without_opt_in":     {"capabilities.device_capabilities[0]", invalid, nil},
	"node_capability_bad":                {"capabilities.node_capabilities[0]", invalid, nil},
	"quota_timeout_zero":                 {"capabilities.quotas.wall_clock_timeout_ms", invalid, nil},
	"quota_fuel_zero":                    {"capabilities.quotas.fuel_budget", invalid, nil},
	"quota_memory_too_small":             {"capabilities.quotas.max_memory_bytes", invalid, nil},

	// Compat syntax (not this build's compatibility: see CheckCompat).
	"compat_min_not_semver":        {"compat.min_palyra_version", invalid, nil},
	"compat_max_below_min":         {"compat.max_palyra_version", invalid, nil},
	"compat_max_blank":             {"compat.max_palyra_version", invalid, nil},
	"compat_legacy_min_not_semver": {"compat.min_runtime_version", invalid, nil},

	// Integrity.
	"integrity_bad_path":  {"integrity.files[0].path", invalid, pathRule},
	"integrity_upper_hex": {"integrity.files[0].sha256", invalid, nil},
	"integrity_duplicate": {"integrity.files[1].path", invalid, nil},

	// Builder.
	"builder_not_experimental":        {"builder.experimental", invalid, nil},
	"builder_empty_test_harness_path": {"builder.checklist.test_harness_path", invalid, nil},
	"builder_checklist_bad_path":      {"builder.checklist.provenance_path", invalid, pathRule},
	"builder_blank_source_kind":       {"builder.source_kind", invalid, nil},
	"builder_missing_checklist":       {"builder.checklist", parse, nil},

	// Operator.
	"v1_with_operator":                 {"operator", invalid, nil},
	"v1_with_empty_plugin":             {"operator", invalid, nil},
	"operator_display_name_blank":      {"operator.display_name", invalid, nil},
	"operator_category_bad":            {"operator.categories[1]", invalid, nil},
	"operator_tag_bad":                 {"operator.tags[0]", invalid, nil},
	"operator_docs_url_http":           {"operator.docs_url", invalid, nil},
	"operator_docs_url_fragment":       {"operator.docs_url", invalid, nil},
	"operator_docs_url_space":          {"operator.docs_url", invalid, nil},
	"default_tool_id_undeclared":       {"operator.plugin.default_tool_id", invalid, nil},
	"default_tool_id_bad":              {"operator.plugin.default_tool_id", invalid, nil},
	"default_module_path_prefix":       {"operator.plugin.default_module_path", invalid, nil},
	"default_module_path_extension":    {"operator.plugin.default_module_path", invalid, nil},
	"default_module_path_parent":       {"operator.plugin.default_module_path", invalid, nil},
	"default_module_path_colon":        {"operator.plugin.default_module_path", invalid, pathRule},
	"default_entrypoint_bad":           {"operator.plugin.default_entrypoint", invalid, nil},
	"contract_duplicate_kind":          {"operator.plugin.contracts[1].kind", invalid, nil},
	"contract_version_0":               {"operator.plugin.contracts[0].version", invalid, nil},
	"contract_version_99":              {"operator.plugin.contracts[0].version", invalid, nil},
	"contract_unknown_kind":            {"operator.plugin.contracts[0].kind", invalid, nil},
	"config_schema_version_0":          {"operator.config.schema_version", invalid, nil},
	"config_required_undeclared":       {"operator.config.required[0]", invalid, nil},
	"config_property_name_bad":         {`operator.config.properties."API KEY"`, invalid, nil},
	"config_property_type_bad":         {"operator.config.properties.api_key.type", invalid, nil},
	"config_enum_not_string":           {"operator.config.properties.level.enum_values", invalid, nil},
	"config_enum_blank":                {"operator.config.properties.mode.enum_values[1]", invalid, nil},
	"config_enum_duplicate":            {"operator.config.properties.mode.enum_values[2]", invalid, nil},
	"config_default_type":              {"operator.config.properties.retries.default", invalid, nil},
	"config_default_float_for_integer": {"operator.config.properties.retries.default", invalid, nil},
	"config_default_list_item":         {"operator.config.properties.cities.default[1]", invalid, nil},
	"config_default_not_in_enum":       {"operator.config.properties.api_key.default", invalid, nil},
	"config_default_inf":               {"operator.config.properties.threshold.default", invalid, nil},

	// Several problems: the first in the document is reported.
	"order_compat_before_tools":     {"compat.min_palyra_version", invalid, nil},
	"order_second_tool_first_field": {"entrypoints.tools[1].name", invalid, nil},
}

func TestParseBad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(manifestsDir, "bad", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".toml")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			want, ok := badCases[name]
			if !ok {
				t.Fatalf("bad fixture %s has no entry in badCases", name)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := manifest.Parse(data)
			if err == nil {
				t.Fatalf("Parse accepted it: %#v", m)
			}
			if m != nil {
				t.Errorf("Parse returned a manifest with its error")
			}
			fe := fieldError(t, err)
			if fe.Path != want.path {
				t.Errorf("Path = %q, want %q (error: %v)", fe.Path, want.path, err)
			}
			for _, s := range append([]error{want.err}, want.also...) {
				if !errors.Is(err, s) {
					t.Errorf("error %v does not wrap %v", err, s)
				}
			}
			other := manifest.ErrValidation
			if want.err == manifest.ErrValidation {
				other = manifest.ErrParse
			}
			if errors.Is(err, other) {
				t.Errorf("error %v wraps both ErrParse and ErrValidation", err)
			}
			wantCode := errcode.Of(want.err)
			if len(want.also) > 0 {
				wantCode = "invalid_artifact_path"
			}
			if got := errcode.Of(err); got != wantCode {
				t.Errorf("errcode.Of = %q, want %q", got, wantCode)
			}
			if want.path != "" && !strings.HasPrefix(name, "missing_") && fe.Line == 0 {
				t.Errorf("no line for %q", fe.Path)
			}
		})
	}
	for name := range badCases {
		if !seen[name] {
			t.Errorf("badCases names %s, which is not in testdata/manifests/bad", name)
		}
	}
}

// TestErrorPosition checks the line and column of a few errors.
func TestErrorPosition(t *testing.T) {
	tests := []struct {
		file      string
		line, col int
	}{
		{"order_compat_before_tools", 9, 1},      // min_palyra_version = "0.1"
		{"order_second_tool_first_field", 20, 1}, // name = ""
		{"secret_key_bad", 20, 24},               // "API_TOKEN" in the array
		{"missing_compat_major", 14, 2},          // the [compat] header
		{"missing_skill_id", 0, 0},               // the top level has no position
		{"not_utf8", 18, 6},                      // the byte 0xe9 after "# caf"
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := manifest.Parse(readFixture(t, "bad/"+tt.file+".toml"))
			fe := fieldError(t, err)
			if fe.Line != tt.line || fe.Column != tt.col {
				t.Errorf("position = %d:%d, want %d:%d (%v)", fe.Line, fe.Column, tt.line, tt.col, err)
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	data := append(readFixture(t, "good/minimal_v2.toml"), strings.Repeat("# padding\n", manifest.MaxManifestBytes/10+1)...)
	_, err := manifest.Parse(data)
	if fe := fieldError(t, err); fe.Path != "" || !errors.Is(err, manifest.ErrParse) {
		t.Fatalf("got %v", err)
	}
}

func TestParseByteOrderMark(t *testing.T) {
	data := append([]byte("\ufeff"), readFixture(t, "good/minimal_v2.toml")...)
	mustParse(t, data)
}

func TestDefaults(t *testing.T) {
	text := strings.Replace(string(readFixture(t, "good/minimal_v2.toml")), "manifest_version = 2\n", "", 1)
	text += "\n[operator.plugin]\ncontracts = [{ kind = \"memory_provider\" }]\n\n[operator.config]\n"
	m := mustParse(t, []byte(text))
	if m.ManifestVersion != 2 {
		t.Errorf("ManifestVersion = %d, want 2", m.ManifestVersion)
	}
	want := manifest.Quotas{WallClockTimeoutMS: 30000, FuelBudget: 10_000_000, MaxMemoryBytes: 67_108_864}
	if m.Capabilities.Quotas != want {
		t.Errorf("Quotas = %+v, want %+v", m.Capabilities.Quotas, want)
	}
	if v := m.Operator.Plugin.Contracts[0].Version; v != 1 {
		t.Errorf("contract version = %d, want 1", v)
	}
	if v := m.Operator.Config.SchemaVersion; v != 1 {
		t.Errorf("config schema_version = %d, want 1", v)
	}
	if m.Builder != nil || m.Integrity.Files != nil || m.Capabilities.Secrets != nil {
		t.Errorf("absent sections are not empty: %+v", m)
	}
	if m.Entrypoints.Tools[0].Risk != (manifest.Risk{}) {
		t.Errorf("Risk = %+v, want both false", m.Entrypoints.Tools[0].Risk)
	}

	// Partial quotas: only the missing ones get defaults.
	m = mustParse(t, append(readFixture(t, "good/minimal_v2.toml"), "\n[capabilities.quotas]\nfuel_budget = 5\n"...))
	if q := m.Capabilities.Quotas; q.FuelBudget != 5 || q.WallClockTimeoutMS != 30000 || q.MaxMemoryBytes != 64<<20 {
		t.Errorf("Quotas = %+v", q)
	}
}

func TestLegacyCompatNames(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/legacy_compat_names.toml"))
	if m.Compat.RequiredProtocolMajor != 1 || m.Compat.MinPalyraVersion != "0.1.0" {
		t.Fatalf("Compat = %+v", m.Compat)
	}
	out, err := manifest.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	// The current names are written; the legacy names are not.
	var back struct {
		Compat map[string]any `toml:"compat"`
	}
	if err := tomlUnmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(back.Compat))
	for k := range back.Compat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if want := []string{"min_palyra_version", "required_protocol_major"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("compat keys written = %v, want %v", keys, want)
	}
}

func TestV1Operator(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/v1_without_operator.toml"))
	if m.ManifestVersion != 1 || !m.Operator.IsEmpty() {
		t.Fatalf("got version %d, operator %+v", m.ManifestVersion, m.Operator)
	}
	out, err := manifest.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if back := mustParse(t, out); back.ManifestVersion != 1 {
		t.Fatalf("manifest_version written as %d", back.ManifestVersion)
	}
}

// TestOriginalsKept: values are judged trimmed, but kept as written.
func TestOriginalsKept(t *testing.T) {
	text := strings.NewReplacer(
		`publisher = "acme"`, `publisher = " acme "`,
		`id = "acme.echo"`, `id = " acme.echo"`,
		`version = "1.0.0"`, `version = " 01.0.+2 "`,
	).Replace(string(readFixture(t, "good/minimal_v2.toml")))
	m := mustParse(t, []byte(text))
	if m.Publisher != " acme " || m.Entrypoints.Tools[0].ID != " acme.echo" || m.Version != " 01.0.+2 " {
		t.Fatalf("originals not kept: %q %q %q", m.Publisher, m.Entrypoints.Tools[0].ID, m.Version)
	}
	if tl, ok := m.Tool("acme.echo"); !ok || tl != &m.Entrypoints.Tools[0] {
		t.Fatalf("Tool(acme.echo) = %v, %v", tl, ok)
	}
	if _, ok := m.Tool("acme.other"); ok {
		t.Fatal("Tool found an undeclared tool")
	}
	if got := m.PolicyBindings()[0].Resource; got != "tool:acme.echo" {
		t.Fatalf("binding resource = %q", got)
	}
}

func TestFullManifest(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/full_v2.toml"))
	if len(m.Entrypoints.Tools) != 2 || m.Compat.MaxPalyraVersion != "1.0.0" || len(m.Integrity.Files) != 2 {
		t.Fatalf("unexpected manifest: %+v", m)
	}
	if got := m.Capabilities.Quotas; got != (manifest.Quotas{WallClockTimeoutMS: 5000, FuelBudget: 20_000_000, MaxMemoryBytes: 65536}) {
		t.Errorf("Quotas = %+v", got)
	}
	cfg := m.Operator.Config
	if cfg == nil || len(cfg.Properties) != 7 {
		t.Fatalf("config = %+v", cfg)
	}
	defaults := map[string]any{
		"units":     "metric",
		"retries":   int64(3),
		"threshold": 0.5,
		"verbose":   false,
		"cities":    []any{"Oslo", "Lima"},
		"api_key":   nil,
		"cache.ttl": nil,
	}
	for k, want := range defaults {
		if got := cfg.Properties[k].Default; !reflect.DeepEqual(got, want) {
			t.Errorf("default of %s = %#v, want %#v", k, got, want)
		}
	}
	if len(m.Warnings()) != 0 {
		t.Errorf("Warnings = %+v, want none", m.Warnings())
	}
}

func TestBuilder(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/builder_complete.toml"))
	if !m.RequiresReview() {
		t.Fatal("pending builder output must require review")
	}
	for status, want := range map[string]bool{"approved": false, " Signed ": false, "pending": true, "": true, "rejected": true} {
		b := *m.Builder
		b.ReviewStatus = status
		if got := b.RequiresReview(); got != want {
			t.Errorf("review_status %q: RequiresReview = %v, want %v", status, got, want)
		}
	}
	if mustParse(t, readFixture(t, "good/minimal_v2.toml")).RequiresReview() {
		t.Error("a manifest without [builder] requires review")
	}
}

func TestSecretScopes(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/secret_scopes.toml"))
	want := []string{
		"channel:discord:acct_1/bot_token",
		"channel:discord:acct_1/webhook",
		"global/shared_token",
		"principal:admin:ops/api_token",
		"skill:acme.echo_http/api_token",
	}
	if got := m.CapabilityGrants().SecretKeys; !reflect.DeepEqual(got, want) {
		t.Fatalf("SecretKeys = %q, want %q", got, want)
	}
}

func TestContracts(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/contracts_six_kinds.toml"))
	if n := len(m.Operator.Plugin.Contracts); n != 6 {
		t.Fatalf("%d contracts, want 6", n)
	}
	for _, c := range m.Operator.Plugin.Contracts {
		if c.Version != 1 {
			t.Errorf("contract %s version %d", c.Kind, c.Version)
		}
	}
}

func TestWildcardsOptedIn(t *testing.T) {
	m := mustParse(t, readFixture(t, "good/wildcards_opted_in.toml"))
	if got := m.Capabilities.Filesystem.ReadRoots; !reflect.DeepEqual(got, []string{"skills/*"}) {
		t.Fatalf("ReadRoots = %q", got)
	}
	g := m.CapabilityGrants()
	if !reflect.DeepEqual(g.HTTPHosts, []string{"*"}) || !reflect.DeepEqual(g.SecretKeys, []string{"skill:acme.echo_http/api_*"}) {
		t.Fatalf("grants = %+v", g)
	}
}

// TestNestingLimits: deep keys and values are refused before decoding, and
// nothing inside strings or comments counts.
func TestNestingLimits(t *testing.T) {
	base := string(readFixture(t, "good/minimal_v2.toml"))
	dots := strings.Repeat("a.", 300) + "a"
	deepSchema := strings.Repeat("{ not = ", 100) + "{}" + strings.Repeat(" }", 100)
	ok := []string{
		strings.Replace(base, `description = "Echo payload"`, `description = "`+dots+`" # `+dots, 1),
		strings.Replace(base, `description = "Echo payload"`, "description = '''\n"+dots+"\n'''", 1),
		strings.Replace(base, `description = "Echo payload"`, `description = """`+dots+`\"" "\"\"" """`, 1),
		strings.Replace(base, `description = "Echo payload"`, `description = '[[[[{{{{'`, 1),
		strings.Replace(base, `output_schema = { type = "object" }`, "output_schema = "+deepSchema, 1),
		strings.Replace(base, `input_schema = { type = "object" }`, `input_schema = { type = "number", enum = [1.5, -2.5e3, 0.25, 1979.5] }`, 1),
	}
	for i, text := range ok {
		if _, err := manifest.Parse([]byte(text)); err != nil {
			t.Errorf("ok[%d]: %v", i, err)
		}
	}
	bad := []string{
		base + "\n[operator]\n" + strings.Repeat("x.", manifest.MaxNesting) + "x = 1\n",
		base + "\n[" + strings.Repeat(`"x" . `, manifest.MaxNesting) + "x]\n",
		base + "\nx = " + strings.Repeat("[", manifest.MaxNesting+1) + strings.Repeat("]", manifest.MaxNesting+1) + "\n",
		base + "\nx = " + strings.Repeat("{ a = ", 200),
	}
	for i, text := range bad {
		_, err := manifest.Parse([]byte(text))
		if fe := fieldError(t, err); !errors.Is(err, manifest.ErrParse) || fe.Line < 18 {
			t.Errorf("bad[%d]: got %v at line %d", i, err, fe.Line)
		}
	}
}
