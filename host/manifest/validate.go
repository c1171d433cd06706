package manifest

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/palyra-go/palyra/host/internal/skillpath"
	"github.com/palyra-go/palyra/internal/textutil"
)

// validator checks Palyra's manifest rules on a decoded manifest. Values are
// judged on trimmed copies; the manifest keeps what was written.
type validator struct {
	collector
	info *docInfo
}

func (v *validator) fail(path, format string, args ...any) {
	v.addf(ErrValidation, path, format, args...)
}

// failPath reports a path that breaks the artifact path rule; the error
// wraps both ErrValidation and skillpath.ErrInvalid.
func (v *validator) failPath(path string, err error) {
	reason := err.Error()
	var pe *skillpath.Error
	if errors.As(err, &pe) {
		reason = fmt.Sprintf("invalid artifact path %q: %s", pe.Raw, pe.Reason)
	}
	v.errs = append(v.errs, pending{path: path, reason: reason, err: ErrValidation, cause: err})
}

func (v *validator) present(path string) bool { return v.info.present[path] }

// identifierReason checks Palyra's identifier rule: trimmed, non-empty,
// only [a-z0-9._:-]. It returns "" when s is one.
func identifierReason(s string) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return "must not be empty"
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == ':' || r == '-') {
			return fmt.Sprintf("must contain only a-z, 0-9, '.', '_', ':' and '-', found %s in %q", describeRune(r), truncate(t, 80))
		}
	}
	return ""
}

// describeRune quotes a rune for an error message, adding its code point
// when it is not ASCII, so that look-alikes (the Kelvin sign for 'K') show.
func describeRune(r rune) string {
	if r < 0x80 {
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("%q (U+%04X)", r, r)
}

// slugReason checks [a-z0-9._-]+ (categories, tags, config property names);
// with dots=false it checks [a-z0-9_-]+ (entrypoint names).
func slugReason(s string, dots bool) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return "must not be empty"
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || dots && r == '.') {
			if dots {
				return fmt.Sprintf("must contain only a-z, 0-9, '.', '_' and '-', found %s in %q", describeRune(r), truncate(t, 80))
			}
			return fmt.Sprintf("must contain only a-z, 0-9, '_' and '-', found %s in %q", describeRune(r), truncate(t, 80))
		}
	}
	return ""
}

func (v *validator) notBlank(path, s string) {
	if strings.TrimSpace(s) == "" {
		v.fail(path, "must not be blank")
	}
}

func (v *validator) semver(path, s string) (Version, bool) {
	ver, reason := parseVersion(s)
	if reason != "" {
		v.fail(path, "invalid version %q: %s", s, reason)
		return Version{}, false
	}
	return ver, true
}

func (v *validator) manifest(m *Manifest) {
	if m.ManifestVersion != legacyManifestVersion && m.ManifestVersion != currentManifestVersion {
		v.fail("manifest_version", "must be 1 (legacy) or 2, found %d", m.ManifestVersion)
	}
	v.skillID(m.SkillID)
	v.notBlank("name", m.Name)
	v.semver("version", m.Version)
	publisher := ""
	if r := identifierReason(m.Publisher); r != "" {
		v.fail("publisher", "%s", r)
	} else {
		publisher = strings.TrimSpace(m.Publisher)
	}
	v.tools(m.Entrypoints.Tools, publisher)
	v.capabilities(&m.Capabilities)
	v.compat(&m.Compat)
	v.integrity(m.Integrity.Files)
	if m.Builder != nil {
		v.builder(m.Builder)
	}
	v.operator(m, publisher)
	if m.Config != nil {
		v.config(m.Config)
	}
}

// skillID: an identifier with no ':' and no empty dot-segment, that is
// ^[a-z0-9_-]+(\.[a-z0-9_-]+)*$ after trimming.
func (v *validator) skillID(s string) {
	if r := identifierReason(s); r != "" {
		v.fail("skill_id", "%s", r)
		return
	}
	t := strings.TrimSpace(s)
	if strings.Contains(t, ":") {
		v.fail("skill_id", "must not contain ':', found %q", t)
		return
	}
	for _, seg := range strings.Split(t, ".") {
		if seg == "" {
			v.fail("skill_id", "must be dot-separated non-empty segments of a-z, 0-9, '_' and '-', found %q", t)
			return
		}
	}
}

func (v *validator) tools(tools []Tool, publisher string) {
	if len(tools) == 0 {
		v.fail("entrypoints.tools", "must declare at least one tool")
		return
	}
	if len(tools) > MaxTools {
		v.fail("entrypoints.tools", "declares %d tools, above the limit of %d", len(tools), MaxTools)
		return
	}
	seen := make(map[string]int, len(tools))
	for i, tl := range tools {
		p := joinIndex("entrypoints.tools", i)
		idPath := p + ".id"
		if r := identifierReason(tl.ID); r != "" {
			v.fail(idPath, "%s", r)
		} else {
			id := strings.TrimSpace(tl.ID)
			if publisher != "" && !strings.HasPrefix(id, publisher+".") {
				v.fail(idPath, "must start with publisher prefix %q, found %q", publisher+".", id)
			}
			if j, dup := seen[id]; dup {
				v.fail(idPath, "duplicate tool id %q (also entrypoints.tools[%d].id)", id, j)
			} else {
				seen[id] = i
			}
		}
		v.notBlank(p+".name", tl.Name)
		v.notBlank(p+".description", tl.Description)
		v.schema(p+".input_schema", tl.InputSchema)
		v.schema(p+".output_schema", tl.OutputSchema)
	}
}

// schema checks that a tool schema is a table that compiles as JSON Schema.
func (v *validator) schema(path string, doc map[string]any) {
	if found, bad := v.info.nonTable[path]; bad {
		v.fail(path, "must be a table (a JSON Schema object), found %s", found)
		return
	}
	if doc == nil {
		v.fail(path, "must be a table (a JSON Schema object)")
		return
	}
	if _, errs := compileSchema(path, doc); len(errs) > 0 {
		v.errs = append(v.errs, errs...)
	}
}

func (v *validator) capabilities(c *Capabilities) {
	opt := c.WildcardOptIn
	for i, r := range c.Filesystem.ReadRoots {
		v.fsRoot(joinIndex("capabilities.filesystem.read_roots", i), r, opt.Filesystem)
	}
	for i, r := range c.Filesystem.WriteRoots {
		v.fsRoot(joinIndex("capabilities.filesystem.write_roots", i), r, opt.Filesystem)
	}
	for i, h := range c.HTTPEgressAllowlist {
		p := joinIndex("capabilities.http_egress_allowlist", i)
		if strings.Contains(h, "*") {
			// Palyra validates a wildcard entry no further once opted in.
			if !opt.HTTPEgress {
				v.fail(p, "wildcard host %q needs capabilities.wildcard_opt_in.http_egress = true", strings.TrimSpace(h))
			}
			continue
		}
		if r := hostReason(h); r != "" {
			v.fail(p, "%s", r)
		}
	}
	for i, s := range c.Secrets {
		p := joinIndex("capabilities.secrets", i)
		if r := scopeReason(s.Scope); r != "" {
			v.fail(p+".scope", "%s", r)
		}
		if len(s.KeyNames) == 0 {
			v.fail(p+".key_names", "must list at least one key")
		}
		for j, k := range s.KeyNames {
			kp := joinIndex(p+".key_names", j)
			if strings.Contains(k, "*") {
				if !opt.Secrets {
					v.fail(kp, "wildcard key %q needs capabilities.wildcard_opt_in.secrets = true", strings.TrimSpace(k))
				}
				continue
			}
			if r := identifierReason(k); r != "" {
				v.fail(kp, "%s", r)
			}
		}
	}
	v.capList("capabilities.device_capabilities", c.DeviceCapabilities, opt.Device, "device")
	v.capList("capabilities.node_capabilities", c.NodeCapabilities, opt.Node, "node")
	for i, ch := range c.Channels {
		p := joinIndex("capabilities.channels", i)
		if strings.Contains(ch, "*") {
			v.fail(p, "wildcard channel %q is not supported: name each channel", strings.TrimSpace(ch))
			continue
		}
		if r := identifierReason(ch); r != "" {
			v.fail(p, "%s", r)
		}
	}

	q := c.Quotas
	if q.WallClockTimeoutMS == 0 {
		v.fail("capabilities.quotas.wall_clock_timeout_ms", "must be greater than 0")
	}
	if q.FuelBudget == 0 {
		v.fail("capabilities.quotas.fuel_budget", "must be greater than 0")
	}
	if q.MaxMemoryBytes < minMaxMemoryBytes {
		v.fail("capabilities.quotas.max_memory_bytes", "must be at least %d (one wasm page), found %d", minMaxMemoryBytes, q.MaxMemoryBytes)
	}
}

// fsRoot: a '*' needs the filesystem opt-in, and every root, wildcard or
// not, must pass the artifact path rule.
func (v *validator) fsRoot(path, root string, optIn bool) {
	if strings.Contains(root, "*") && !optIn {
		v.fail(path, "wildcard root %q needs capabilities.wildcard_opt_in.filesystem = true", strings.TrimSpace(root))
		return
	}
	if _, err := skillpath.Normalize(root); err != nil {
		v.failPath(path, err)
	}
}

func (v *validator) capList(path string, list []string, optIn bool, optName string) {
	for i, c := range list {
		p := joinIndex(path, i)
		if strings.TrimSpace(c) == "*" {
			if !optIn {
				v.fail(p, "wildcard needs capabilities.wildcard_opt_in.%s = true", optName)
			}
			continue
		}
		if r := identifierReason(c); r != "" {
			v.fail(p, "%s", r)
		}
	}
}

// hostReason checks an http_egress_allowlist entry without '*': trimmed,
// trailing dots stripped and lower-cased (ASCII only, so no Unicode letter
// can fold into an ASCII host), it must be a bare host name.
func hostReason(h string) string {
	t := asciiLower(strings.TrimRight(strings.TrimSpace(h), "."))
	if t == "" {
		return "host must not be empty"
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return fmt.Sprintf("must be a bare host name (a-z, 0-9, '.' and '-'; no scheme, port or path), found %s in %q", describeRune(r), truncate(strings.TrimSpace(h), 80))
		}
	}
	if strings.Contains(t, "..") {
		return fmt.Sprintf("host %q has an empty label", strings.TrimSpace(h))
	}
	if strings.HasPrefix(t, ".") || strings.HasPrefix(t, "-") || strings.HasSuffix(t, "-") {
		return fmt.Sprintf("host %q must not start or end with '.' or '-'", strings.TrimSpace(h))
	}
	return ""
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// scopeReason checks a secret scope: global, principal:<id>, channel:<id>
// or skill:<id>, where id is an identifier (so it may contain ':').
func scopeReason(s string) string {
	t := strings.TrimSpace(s)
	if t == "global" {
		return ""
	}
	for _, prefix := range []string{"principal:", "channel:", "skill:"} {
		id, ok := strings.CutPrefix(t, prefix)
		if !ok {
			continue
		}
		if id == "" {
			return fmt.Sprintf("scope %q has an empty id after %q", t, prefix)
		}
		if id != strings.TrimSpace(id) {
			return fmt.Sprintf("scope %q has white space after %q", t, prefix)
		}
		if r := identifierReason(id); r != "" {
			return fmt.Sprintf("scope id %s", r)
		}
		return ""
	}
	return fmt.Sprintf("must be global, principal:<id>, channel:<id> or skill:<id>, found %q", t)
}

func (v *validator) compat(c *Compat) {
	minPath := v.info.path("compat.min_palyra_version")
	minV, minOK := v.semver(minPath, c.MinPalyraVersion)
	if v.present("compat.max_palyra_version") || c.MaxPalyraVersion != "" {
		maxV, maxOK := v.semver("compat.max_palyra_version", c.MaxPalyraVersion)
		if minOK && maxOK && maxV.Compare(minV) < 0 {
			v.fail("compat.max_palyra_version", "must not be below min_palyra_version %s, found %s", minV, maxV)
		}
	}
}

func (v *validator) integrity(files []IntegrityFile) {
	seen := make(map[string]int, len(files))
	for i, f := range files {
		p := joinIndex("integrity.files", i)
		if np, err := skillpath.Normalize(f.Path); err != nil {
			v.failPath(p+".path", err)
		} else if j, dup := seen[np]; dup {
			v.fail(p+".path", "duplicate path %q (also integrity.files[%d].path)", np, j)
		} else {
			seen[np] = i
		}
		if !isLowerHex(f.SHA256, 64) {
			v.fail(p+".sha256", "must be 64 lower-case hex digits, found %q", truncate(f.SHA256, 80))
		}
	}
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (v *validator) builder(b *Builder) {
	if !b.Experimental {
		v.fail("builder.experimental", "must be true")
	}
	v.notBlank("builder.source_kind", b.SourceKind)
	v.notBlank("builder.source_ref", b.SourceRef)
	v.notBlank("builder.rollout_flag", b.RolloutFlag)
	for _, f := range []struct{ key, val string }{
		{"capability_declaration_path", b.Checklist.CapabilityDeclarationPath},
		{"provenance_path", b.Checklist.ProvenancePath},
		{"test_harness_path", b.Checklist.TestHarnessPath},
	} {
		p := "builder.checklist." + f.key
		if strings.TrimSpace(f.val) == "" {
			v.fail(p, "must not be empty")
			continue
		}
		if _, err := skillpath.Normalize(f.val); err != nil {
			v.failPath(p, err)
		}
	}
}

// ContractKinds returns the typed plugin contract kinds that
// operator.plugin.contracts may declare, in Palyra's order.
func ContractKinds() []string { return append([]string(nil), contractKinds...) }

// ConfigTypes returns the types an operator config property may have.
func ConfigTypes() []string { return append([]string(nil), configTypes...) }

var contractKinds = []string{
	"memory_provider", "context_engine", "routing_strategy", "run_lifecycle_hook",
	"compaction_provider", "diagnostics_provider", "policy_signal_provider",
	"channel_binding_provider", "delivery_adapter", "scheduler_task_provider",
	"model_auth_provider", "connector_adapter",
}

var configTypes = []string{"string", "integer", "number", "boolean", "string_list"}

func (v *validator) operator(m *Manifest, publisher string) {
	o := &m.Operator
	if m.ManifestVersion == legacyManifestVersion && !o.IsEmpty() {
		v.fail("operator", "operator metadata requires manifest_version 2")
	}
	for _, f := range []struct{ key, val string }{
		{"display_name", o.DisplayName}, {"summary", o.Summary}, {"description", o.Description},
	} {
		if p := "operator." + f.key; v.present(p) || f.val != "" {
			v.notBlank(p, f.val)
		}
	}
	for i, c := range o.Categories {
		if r := slugReason(c, true); r != "" {
			v.fail(joinIndex("operator.categories", i), "%s", r)
		}
	}
	for i, t := range o.Tags {
		if r := slugReason(t, true); r != "" {
			v.fail(joinIndex("operator.tags", i), "%s", r)
		}
	}
	if v.present("operator.docs_url") || o.DocsURL != "" {
		u := strings.TrimSpace(o.DocsURL)
		switch {
		case !strings.HasPrefix(u, "https://"):
			v.fail("operator.docs_url", "must start with https://, found %q", truncate(u, 80))
		case strings.IndexFunc(u, unicode.IsSpace) >= 0:
			v.fail("operator.docs_url", "must not contain white space")
		case strings.Contains(u, "#"):
			v.fail("operator.docs_url", "must not contain '#'")
		}
	}
	if o.Plugin != nil {
		v.plugin(o.Plugin, m.Entrypoints.Tools, publisher)
	}
	if o.Config != nil {
		v.operatorConfig(o.Config)
	}
}

func (v *validator) plugin(pl *OperatorPlugin, tools []Tool, publisher string) {
	if p := "operator.plugin.default_tool_id"; v.present(p) || pl.DefaultToolID != "" {
		if r := identifierReason(pl.DefaultToolID); r != "" {
			v.fail(p, "%s", r)
		} else {
			id := strings.TrimSpace(pl.DefaultToolID)
			declared := false
			for _, tl := range tools {
				declared = declared || strings.TrimSpace(tl.ID) == id
			}
			switch {
			case !declared:
				v.fail(p, "names tool %q, which entrypoints.tools does not declare", id)
			case publisher != "" && !strings.HasPrefix(id, publisher+"."):
				v.fail(p, "must start with publisher prefix %q, found %q", publisher+".", id)
			}
		}
	}
	if p := "operator.plugin.default_module_path"; v.present(p) || pl.DefaultModulePath != "" {
		t := strings.TrimSpace(pl.DefaultModulePath)
		switch {
		case !strings.HasPrefix(t, "modules/"):
			v.fail(p, "must start with modules/, found %q", truncate(t, 80))
		case !strings.HasSuffix(t, ".wasm"):
			v.fail(p, "must end with .wasm, found %q", truncate(t, 80))
		case strings.Contains(t, ".."):
			v.fail(p, "must not contain '..'")
		case strings.ContainsRune(t, 0):
			v.fail(p, "must not contain NUL")
		default:
			if _, err := skillpath.Normalize(t); err != nil {
				v.failPath(p, err)
			}
		}
	}
	if p := "operator.plugin.default_entrypoint"; v.present(p) || pl.DefaultEntrypoint != "" {
		if r := slugReason(pl.DefaultEntrypoint, false); r != "" {
			v.fail(p, "%s", r)
		}
	}
	seen := make(map[string]int, len(pl.Contracts))
	for i, c := range pl.Contracts {
		p := joinIndex("operator.plugin.contracts", i)
		kind := strings.TrimSpace(c.Kind)
		switch j, dup := seen[kind]; {
		case !contains(contractKinds, kind):
			v.fail(p+".kind", "unknown contract kind %q", truncate(kind, 80))
		case dup:
			v.fail(p+".kind", "duplicate contract kind %q (also operator.plugin.contracts[%d].kind)", kind, j)
		default:
			seen[kind] = i
		}
		switch {
		case c.Version == 0:
			v.fail(p+".version", "must not be 0")
		case c.Version != supportedContractVersion:
			v.fail(p+".version", "contract %s version %d is not supported by this SDK ABI (supported: %d)", kind, c.Version, supportedContractVersion)
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func (v *validator) operatorConfig(c *OperatorConfig) {
	if c.SchemaVersion == 0 {
		v.fail("operator.config.schema_version", "must not be 0")
	}
	keys := make([]string, 0, len(c.Properties))
	declared := make(map[string]bool, len(c.Properties))
	for k := range c.Properties {
		keys = append(keys, k)
		declared[strings.TrimSpace(k)] = true
	}
	sort.Strings(keys)
	for i, r := range c.Required {
		if !declared[strings.TrimSpace(r)] {
			v.fail(joinIndex("operator.config.required", i), "names property %q, which operator.config.properties does not declare", truncate(strings.TrimSpace(r), 80))
		}
	}
	for _, k := range keys {
		v.property(joinKey("operator.config.properties", k), k, c.Properties[k])
	}
}

func (v *validator) property(p, key string, prop ConfigProperty) {
	if r := slugReason(key, true); r != "" {
		v.fail(p, "property name %s", r)
	}
	typ := strings.TrimSpace(prop.Type)
	typeOK := contains(configTypes, typ)
	if !typeOK {
		v.fail(p+".type", "must be one of %s, found %q", strings.Join(configTypes, ", "), truncate(typ, 80))
	}
	enums := make(map[string]int, len(prop.EnumValues))
	if len(prop.EnumValues) > 0 && typeOK && typ != "string" {
		v.fail(p+".enum_values", "allowed only for type string, not %s", typ)
	}
	for j, e := range prop.EnumValues {
		ep := joinIndex(p+".enum_values", j)
		t := strings.TrimSpace(e)
		if t == "" {
			v.fail(ep, "must not be blank")
		} else if i, dup := enums[t]; dup {
			v.fail(ep, "duplicate value %q (also enum_values[%d])", truncate(t, 80), i)
		} else {
			enums[t] = j
		}
	}
	if prop.Default == nil || !typeOK {
		return
	}
	dp := p + ".default"
	if list, ok := prop.Default.([]any); ok && typ == "string_list" {
		for j, e := range list {
			if _, ok := e.(string); !ok {
				v.fail(joinIndex(dp, j), "must be a string for type string_list, found %s", tomlType(e))
			}
		}
		return
	}
	if want := defaultMismatch(typ, prop.Default); want != "" {
		v.fail(dp, "must be %s for type %s, found %s", want, typ, tomlType(prop.Default))
		return
	}
	if s, ok := prop.Default.(string); ok && len(enums) > 0 {
		if _, listed := enums[strings.TrimSpace(s)]; !listed {
			v.fail(dp, "must be one of enum_values, found %q", truncate(s, 80))
		}
	}
}

// defaultMismatch returns what a default of type typ must be, or "" when
// value matches.
func defaultMismatch(typ string, value any) string {
	switch typ {
	case "string":
		if _, ok := value.(string); !ok {
			return "a string"
		}
	case "integer":
		if _, ok := value.(int64); !ok {
			return "an integer"
		}
	case "number":
		switch n := value.(type) {
		case int64:
		case float64:
			if math.IsNaN(n) || math.IsInf(n, 0) {
				return "a finite number"
			}
		default:
			return "a number"
		}
	case "boolean":
		if _, ok := value.(bool); !ok {
			return "a boolean"
		}
	case "string_list":
		if _, ok := value.([]any); !ok {
			return "an array of strings"
		}
	}
	return ""
}

// truncate bounds text quoted from the document in an error message: s as
// is when it is at most n bytes, else cut to n bytes on a rune boundary
// and marked with "…".
func truncate(s string, n int) string { return textutil.Ellipsize(s, n, "…") }
