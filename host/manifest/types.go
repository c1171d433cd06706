package manifest

// Manifest is a parsed skill.toml. Field names and TOML keys follow Palyra's
// SkillManifest so that manifests move between the two unchanged. String
// values are kept as written; validation judges trimmed copies.
type Manifest struct {
	ManifestVersion uint32       `toml:"manifest_version"`
	SkillID         string       `toml:"skill_id"`
	Name            string       `toml:"name"`
	Version         string       `toml:"version"`
	Publisher       string       `toml:"publisher"`
	Entrypoints     Entrypoints  `toml:"entrypoints"`
	Capabilities    Capabilities `toml:"capabilities"`
	Compat          Compat       `toml:"compat"`
	Integrity       Integrity    `toml:"integrity"`
	Builder         *Builder     `toml:"builder,omitempty"`
	Operator        Operator     `toml:"operator"`
}

// Entrypoints lists what a skill offers to callers.
type Entrypoints struct {
	Tools []Tool `toml:"tools"`
}

// Tool is one [[entrypoints.tools]] entry. InputSchema and OutputSchema are
// JSON Schema documents (JSON objects); they are decoded from TOML as
// map[string]any so they can be re-encoded as JSON.
type Tool struct {
	ID           string         `toml:"id"`
	Name         string         `toml:"name"`
	Description  string         `toml:"description"`
	InputSchema  map[string]any `toml:"input_schema"`
	OutputSchema map[string]any `toml:"output_schema"`
	Risk         Risk           `toml:"risk"`
}

// Risk marks tools that need a human in the loop.
type Risk struct {
	DefaultSensitive bool `toml:"default_sensitive"`
	RequiresApproval bool `toml:"requires_approval"`
}

// Capabilities are what a skill asks the host for.
type Capabilities struct {
	Filesystem          Filesystem    `toml:"filesystem"`
	HTTPEgressAllowlist []string      `toml:"http_egress_allowlist"`
	Secrets             []SecretScope `toml:"secrets"`
	DeviceCapabilities  []string      `toml:"device_capabilities"`
	NodeCapabilities    []string      `toml:"node_capabilities"`
	Quotas              Quotas        `toml:"quotas"`
	WildcardOptIn       WildcardOptIn `toml:"wildcard_opt_in"`
}

// Filesystem lists artifact-relative roots; write roots become storage grants.
type Filesystem struct {
	ReadRoots  []string `toml:"read_roots"`
	WriteRoots []string `toml:"write_roots"`
}

// SecretScope names the secret keys a skill may use within one vault scope
// (global, principal:<id>, channel:<id> or skill:<id>).
type SecretScope struct {
	Scope    string   `toml:"scope"`
	KeyNames []string `toml:"key_names"`
}

// Quotas bound one invocation. Zero values mean "not set" and are replaced by
// the defaults when the manifest is parsed.
type Quotas struct {
	WallClockTimeoutMS uint64 `toml:"wall_clock_timeout_ms"`
	FuelBudget         uint64 `toml:"fuel_budget"`
	MaxMemoryBytes     uint64 `toml:"max_memory_bytes"`
}

// WildcardOptIn must be set for a '*' in the matching capability list.
type WildcardOptIn struct {
	Filesystem bool `toml:"filesystem"`
	HTTPEgress bool `toml:"http_egress"`
	Secrets    bool `toml:"secrets"`
	Device     bool `toml:"device"`
	Node       bool `toml:"node"`
}

// Compat states which protocol and runtime versions the skill needs. On
// input the legacy names min_protocol_major and min_runtime_version are
// accepted; output always uses the current names.
type Compat struct {
	RequiredProtocolMajor uint32 `toml:"required_protocol_major"`
	MinPalyraVersion      string `toml:"min_palyra_version"`
	MaxPalyraVersion      string `toml:"max_palyra_version,omitempty"`
}

// Integrity lists the sha256 of every payload entry except skill.toml and
// signature.json. The artifact builder fills it in; the verifier requires it
// to match the archive exactly.
type Integrity struct {
	Files []IntegrityFile `toml:"files"`
}

// IntegrityFile is one entry of the integrity list.
type IntegrityFile struct {
	Path   string `toml:"path"`
	SHA256 string `toml:"sha256"`
}

// Builder marks output of a dynamic tool builder.
type Builder struct {
	Experimental bool             `toml:"experimental"`
	SourceKind   string           `toml:"source_kind"`
	SourceRef    string           `toml:"source_ref"`
	RolloutFlag  string           `toml:"rollout_flag"`
	ReviewStatus string           `toml:"review_status"`
	Checklist    BuilderChecklist `toml:"checklist"`
}

// BuilderChecklist points at the review material of builder output.
type BuilderChecklist struct {
	CapabilityDeclarationPath string `toml:"capability_declaration_path"`
	ProvenancePath            string `toml:"provenance_path"`
	TestHarnessPath           string `toml:"test_harness_path"`
	ReviewNotes               string `toml:"review_notes"`
}

// Operator is the v2 metadata an operator sees in listings and consoles.
type Operator struct {
	DisplayName string          `toml:"display_name,omitempty"`
	Summary     string          `toml:"summary,omitempty"`
	Description string          `toml:"description,omitempty"`
	Categories  []string        `toml:"categories,omitempty"`
	Tags        []string        `toml:"tags,omitempty"`
	DocsURL     string          `toml:"docs_url,omitempty"`
	Plugin      *OperatorPlugin `toml:"plugin,omitempty"`
	Config      *OperatorConfig `toml:"config,omitempty"`
}

// OperatorPlugin holds the defaults used when a plugin binding is created.
type OperatorPlugin struct {
	DefaultToolID     string             `toml:"default_tool_id,omitempty"`
	DefaultModulePath string             `toml:"default_module_path,omitempty"`
	DefaultEntrypoint string             `toml:"default_entrypoint,omitempty"`
	Contracts         []OperatorContract `toml:"contracts,omitempty"`
}

// OperatorContract declares a typed plugin contract the skill implements.
type OperatorContract struct {
	Kind    string `toml:"kind"`
	Version uint32 `toml:"version"`
}

// OperatorConfig declares the configuration an operator can set.
type OperatorConfig struct {
	SchemaVersion uint32                    `toml:"schema_version"`
	Required      []string                  `toml:"required,omitempty"`
	Properties    map[string]ConfigProperty `toml:"properties,omitempty"`
}

// ConfigProperty is one operator-settable configuration value.
type ConfigProperty struct {
	Type        string   `toml:"type"`
	Title       string   `toml:"title,omitempty"`
	Description string   `toml:"description,omitempty"`
	Default     any      `toml:"default,omitempty"`
	Redacted    bool     `toml:"redacted"`
	EnumValues  []string `toml:"enum_values,omitempty"`
}
