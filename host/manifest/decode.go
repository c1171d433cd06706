package manifest

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

// pending is a problem found while decoding or validating, before it is
// placed in the document. Parse reports the one that comes first.
type pending struct {
	path    string
	reason  string
	err     error // the sentinel
	cause   error
	missing bool // a required key is absent: placed at the end of its table
}

// collector gathers pending problems in the order they are found.
type collector struct {
	errs []pending
}

func (c *collector) addf(sentinel error, path, format string, args ...any) {
	c.errs = append(c.errs, pending{path: path, reason: fmt.Sprintf(format, args...), err: sentinel})
}

// docInfo records what the typed Manifest cannot: which optional keys were
// written, the spelling used for aliased keys and tool schemas that were not
// tables.
type docInfo struct {
	present  map[string]bool   // field paths of keys given in the document
	spelled  map[string]string // current path -> path as written (legacy alias)
	nonTable map[string]string // schema path -> TOML type found instead of a table
}

// path returns the path of a field as written in the document.
func (i *docInfo) path(p string) string {
	if s, ok := i.spelled[p]; ok {
		return s
	}
	return p
}

// decoder turns the generic TOML tree into a Manifest. It checks key names,
// required keys and value types (ErrParse); the rules come later.
type decoder struct {
	collector
	info docInfo
	// unset are fields left unset by a problem reported on another path (a
	// key given under both its names); a rule problem on one of them is an
	// echo of that problem.
	unset []string
}

// table is one TOML table being decoded; done reports the keys no one asked for.
type table struct {
	d    *decoder
	path string
	m    map[string]any
	seen []string
}

func (d *decoder) typeErr(path, want string, v any) {
	d.addf(ErrParse, path, "must be %s, found %s", want, tomlType(v))
}

func (d *decoder) missing(path string) {
	d.errs = append(d.errs, pending{path: path, reason: "missing required key", err: ErrParse, missing: true})
}

// asTable returns v as a table, or nil after reporting a type error.
func (d *decoder) asTable(path string, v any) *table {
	m, ok := v.(map[string]any)
	if !ok {
		d.typeErr(path, "a table", v)
		return nil
	}
	return &table{d: d, path: path, m: m}
}

// take marks key as known and returns its value and field path.
func (t *table) take(key string) (any, string, bool) {
	t.seen = append(t.seen, key)
	v, ok := t.m[key]
	p := joinKey(t.path, key)
	if ok {
		t.d.info.present[p] = true
	}
	return v, p, ok
}

// done reports every key of the table that was not taken, in key order.
func (t *table) done() {
	var unknown []string
	for k := range t.m {
		if !slices.Contains(t.seen, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		t.d.addf(ErrParse, joinKey(t.path, k), "unknown key")
	}
}

func (t *table) str(key string, dst *string, required bool) {
	v, p, ok := t.take(key)
	if !ok {
		if required {
			t.d.missing(p)
		}
		return
	}
	s, ok := v.(string)
	if !ok {
		t.d.typeErr(p, "a string", v)
		return
	}
	*dst = s
}

func (t *table) boolean(key string, dst *bool, required bool) {
	v, p, ok := t.take(key)
	if !ok {
		if required {
			t.d.missing(p)
		}
		return
	}
	b, ok := v.(bool)
	if !ok {
		t.d.typeErr(p, "a boolean", v)
		return
	}
	*dst = b
}

func (t *table) integer(key string, max uint64, required bool) (uint64, bool) {
	v, p, ok := t.take(key)
	if !ok {
		if required {
			t.d.missing(p)
		}
		return 0, false
	}
	n, ok := v.(int64)
	if !ok {
		t.d.typeErr(p, "an integer", v)
		return 0, false
	}
	if n < 0 || uint64(n) > max {
		t.d.addf(ErrParse, p, "must be an integer from 0 to %d, found %d", max, n)
		return 0, false
	}
	return uint64(n), true
}

func (t *table) u32(key string, dst *uint32, required bool) {
	if n, ok := t.integer(key, math.MaxUint32, required); ok {
		*dst = uint32(n)
	}
}

func (t *table) u64(key string, dst *uint64) {
	if n, ok := t.integer(key, math.MaxInt64, false); ok {
		*dst = n
	}
}

// strList decodes an array of strings. An empty array leaves dst nil, so a
// manifest reads the same whether a list is written empty or left out.
func (t *table) strList(key string, dst *[]string, required bool) {
	v, p, ok := t.take(key)
	if !ok {
		if required {
			t.d.missing(p)
		}
		return
	}
	a, ok := v.([]any)
	if !ok {
		t.d.typeErr(p, "an array of strings", v)
		return
	}
	var out []string
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			t.d.typeErr(joinIndex(p, i), "a string", e)
			continue
		}
		out = append(out, s)
	}
	*dst = out
}

// sub returns the sub-table key, or nil when it is absent or not a table.
func (t *table) sub(key string, required bool) *table {
	v, p, ok := t.take(key)
	if !ok {
		if required {
			t.d.missing(p)
		}
		return nil
	}
	return t.d.asTable(p, v)
}

// tables returns the elements of an array of tables; elements that are not
// tables are reported and skipped, keeping the index of the others.
func (t *table) tables(key string, each func(i int, e *table)) {
	v, p, ok := t.take(key)
	if !ok {
		return
	}
	a, ok := v.([]any)
	if !ok {
		t.d.typeErr(p, "an array of tables", v)
		return
	}
	for i, e := range a {
		if et := t.d.asTable(joinIndex(p, i), e); et != nil {
			each(i, et)
		}
	}
}

// aliased picks the spelling of a key that has a legacy alias. Giving both
// is an error, as with serde's alias. It returns "" after an error.
func (t *table) aliased(key, alias string) string {
	_, hasKey := t.m[key]
	_, hasAlias := t.m[alias]
	switch {
	case hasKey && hasAlias:
		t.seen = append(t.seen, key, alias)
		t.d.addf(ErrParse, joinKey(t.path, alias), "duplicate field: %s is the legacy name of %s, which is also set", alias, key)
		t.d.unset = append(t.d.unset, joinKey(t.path, key))
		return ""
	case hasAlias:
		t.d.info.spelled[joinKey(t.path, key)] = joinKey(t.path, alias)
		return alias
	default:
		return key
	}
}

// tomlType names the TOML type of a decoded value.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time:
		return "an offset date-time"
	case toml.LocalDateTime:
		return "a local date-time"
	case toml.LocalDate:
		return "a local date"
	case toml.LocalTime:
		return "a local time"
	default:
		return fmt.Sprintf("a value of Go type %T", v)
	}
}

// decode reads the whole manifest from the generic tree.
func (d *decoder) decode(root map[string]any) *Manifest {
	m := &Manifest{ManifestVersion: DefaultManifestVersion}
	m.Capabilities.Quotas = Quotas{
		WallClockTimeoutMS: DefaultWallClockTimeoutMS,
		FuelBudget:         DefaultFuelBudget,
		MaxMemoryBytes:     DefaultMaxMemoryBytes,
	}
	t := &table{d: d, m: root}
	t.u32("manifest_version", &m.ManifestVersion, false)
	t.str("skill_id", &m.SkillID, true)
	t.str("name", &m.Name, true)
	t.str("version", &m.Version, true)
	t.str("publisher", &m.Publisher, true)
	if e := t.sub("entrypoints", true); e != nil {
		e.tables("tools", func(_ int, tt *table) {
			m.Entrypoints.Tools = append(m.Entrypoints.Tools, d.tool(tt))
		})
		e.done()
	}
	if c := t.sub("capabilities", false); c != nil {
		d.capabilities(c, &m.Capabilities)
	}
	if c := t.sub("compat", true); c != nil {
		if k := c.aliased("required_protocol_major", "min_protocol_major"); k != "" {
			c.u32(k, &m.Compat.RequiredProtocolMajor, true)
		}
		if k := c.aliased("min_palyra_version", "min_runtime_version"); k != "" {
			c.str(k, &m.Compat.MinPalyraVersion, true)
		}
		c.str("max_palyra_version", &m.Compat.MaxPalyraVersion, false)
		c.done()
	}
	if it := t.sub("integrity", false); it != nil {
		it.tables("files", func(_ int, ft *table) {
			var f IntegrityFile
			ft.str("path", &f.Path, true)
			ft.str("sha256", &f.SHA256, true)
			ft.done()
			m.Integrity.Files = append(m.Integrity.Files, f)
		})
		it.done()
	}
	if b := t.sub("builder", false); b != nil {
		m.Builder = d.builder(b)
	}
	if o := t.sub("operator", false); o != nil {
		d.operator(o, &m.Operator)
	}
	if c := t.sub("config", false); c != nil {
		m.Config = d.config(c)
	}
	t.done()
	return m
}

func (d *decoder) tool(t *table) Tool {
	var tl Tool
	t.str("id", &tl.ID, true)
	t.str("name", &tl.Name, true)
	t.str("description", &tl.Description, true)
	tl.InputSchema = d.schemaValue(t, "input_schema")
	tl.OutputSchema = d.schemaValue(t, "output_schema")
	if r := t.sub("risk", false); r != nil {
		r.boolean("default_sensitive", &tl.Risk.DefaultSensitive, false)
		r.boolean("requires_approval", &tl.Risk.RequiresApproval, false)
		r.done()
	}
	t.boolean("hooks_only", &tl.HooksOnly, false)
	t.done()
	return tl
}

// schemaValue takes a tool schema. Palyra accepts any TOML value here and
// rejects a non-table in validation, so a non-table is noted for the
// validator rather than reported as a type error.
func (d *decoder) schemaValue(t *table, key string) map[string]any {
	v, p, ok := t.take(key)
	if !ok {
		d.missing(p)
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.info.nonTable[p] = tomlType(v)
		return nil
	}
	return m
}

func (d *decoder) capabilities(c *table, caps *Capabilities) {
	if fs := c.sub("filesystem", false); fs != nil {
		fs.strList("read_roots", &caps.Filesystem.ReadRoots, false)
		fs.strList("write_roots", &caps.Filesystem.WriteRoots, false)
		fs.done()
	}
	c.strList("http_egress_allowlist", &caps.HTTPEgressAllowlist, false)
	c.tables("secrets", func(_ int, st *table) {
		var s SecretScope
		st.str("scope", &s.Scope, true)
		st.strList("key_names", &s.KeyNames, true)
		st.done()
		caps.Secrets = append(caps.Secrets, s)
	})
	c.strList("device_capabilities", &caps.DeviceCapabilities, false)
	c.strList("node_capabilities", &caps.NodeCapabilities, false)
	c.strList("channels", &caps.Channels, false)
	if q := c.sub("quotas", false); q != nil {
		q.u64("wall_clock_timeout_ms", &caps.Quotas.WallClockTimeoutMS)
		q.u64("fuel_budget", &caps.Quotas.FuelBudget)
		q.u64("max_memory_bytes", &caps.Quotas.MaxMemoryBytes)
		q.done()
	}
	if w := c.sub("wildcard_opt_in", false); w != nil {
		w.boolean("filesystem", &caps.WildcardOptIn.Filesystem, false)
		w.boolean("http_egress", &caps.WildcardOptIn.HTTPEgress, false)
		w.boolean("secrets", &caps.WildcardOptIn.Secrets, false)
		w.boolean("device", &caps.WildcardOptIn.Device, false)
		w.boolean("node", &caps.WildcardOptIn.Node, false)
		w.done()
	}
	c.done()
}

func (d *decoder) builder(t *table) *Builder {
	b := &Builder{}
	t.boolean("experimental", &b.Experimental, true)
	t.str("source_kind", &b.SourceKind, true)
	t.str("source_ref", &b.SourceRef, true)
	t.str("rollout_flag", &b.RolloutFlag, true)
	t.str("review_status", &b.ReviewStatus, false)
	if c := t.sub("checklist", true); c != nil {
		c.str("capability_declaration_path", &b.Checklist.CapabilityDeclarationPath, true)
		c.str("provenance_path", &b.Checklist.ProvenancePath, true)
		c.str("test_harness_path", &b.Checklist.TestHarnessPath, true)
		c.str("review_notes", &b.Checklist.ReviewNotes, false)
		c.done()
	}
	t.done()
	return b
}

func (d *decoder) operator(t *table, o *Operator) {
	t.str("display_name", &o.DisplayName, false)
	t.str("summary", &o.Summary, false)
	t.str("description", &o.Description, false)
	t.strList("categories", &o.Categories, false)
	t.strList("tags", &o.Tags, false)
	t.str("docs_url", &o.DocsURL, false)
	if pt := t.sub("plugin", false); pt != nil {
		pl := &OperatorPlugin{}
		pt.str("default_tool_id", &pl.DefaultToolID, false)
		pt.str("default_module_path", &pl.DefaultModulePath, false)
		pt.str("default_entrypoint", &pl.DefaultEntrypoint, false)
		pt.tables("contracts", func(_ int, ct *table) {
			c := OperatorContract{Version: DefaultContractVersion}
			ct.str("kind", &c.Kind, true)
			ct.u32("version", &c.Version, false)
			ct.done()
			pl.Contracts = append(pl.Contracts, c)
		})
		pt.done()
		o.Plugin = pl
	}
	if ct := t.sub("config", false); ct != nil {
		cfg := &OperatorConfig{SchemaVersion: DefaultConfigSchemaVersion}
		ct.u32("schema_version", &cfg.SchemaVersion, false)
		ct.strList("required", &cfg.Required, false)
		if props := ct.sub("properties", false); props != nil {
			keys := make([]string, 0, len(props.m))
			for k := range props.m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				pt := d.asTable(joinKey(props.path, k), props.m[k])
				if pt == nil {
					continue
				}
				if cfg.Properties == nil {
					cfg.Properties = make(map[string]ConfigProperty, len(keys))
				}
				cfg.Properties[k] = d.property(pt)
			}
		}
		ct.done()
		o.Config = cfg
	}
	t.done()
}

func (d *decoder) property(t *table) ConfigProperty {
	var p ConfigProperty
	t.str("type", &p.Type, true)
	t.str("title", &p.Title, false)
	t.str("description", &p.Description, false)
	if v, _, ok := t.take("default"); ok {
		p.Default = v
	}
	t.boolean("redacted", &p.Redacted, false)
	t.strList("enum_values", &p.EnumValues, false)
	t.done()
	return p
}
