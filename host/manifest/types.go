package manifest

// Manifest is a parsed skill.toml. Field names and TOML keys follow Palyra's
// SkillManifest so that manifests move between the two unchanged. String
// values are kept as written; validation judges trimmed copies. Parse fills
// in every default, so a parsed Manifest has no zero quota or version; empty
// lists are nil. Build one in code and Marshal it, or get one from Parse.
type Manifest struct {
	ManifestVersion uint32       `toml:"manifest_version" json:"manifest_version"`
	SkillID         string       `toml:"skill_id" json:"skill_id"`
	Name            string       `toml:"name" json:"name"`
	Version         string       `toml:"version" json:"version"`
	Publisher       string       `toml:"publisher" json:"publisher"`
	Entrypoints     Entrypoints  `toml:"entrypoints" json:"entrypoints"`
	Capabilities    Capabilities `toml:"capabilities" json:"capabilities"`
	Compat          Compat       `toml:"compat" json:"compat"`
	Integrity       Integrity    `toml:"integrity" json:"integrity"`
	Builder         *Builder     `toml:"builder,omitempty" json:"builder,omitempty"`
	Operator        Operator     `toml:"operator" json:"operator"`
	// Config is the [config] table (a Palyra-Go extension): the schema of
	// the operator configuration the skill reads at run time. Nil when
	// the manifest has none.
	Config *Config `toml:"config,omitempty" json:"config,omitempty"`
}

// Entrypoints lists what a skill offers to callers.
type Entrypoints struct {
	Tools []Tool `toml:"tools" json:"tools"`
}

// Tool is one [[entrypoints.tools]] entry. InputSchema and OutputSchema are
// JSON Schema documents (JSON objects), decoded from TOML as map[string]any
// whose values are string, int64, float64, bool, []any and map[string]any.
// Use Manifest.ToolSchemas to get them compiled.
type Tool struct {
	ID           string         `toml:"id" json:"id"`
	Name         string         `toml:"name" json:"name"`
	Description  string         `toml:"description" json:"description"`
	InputSchema  map[string]any `toml:"input_schema" json:"input_schema"`
	OutputSchema map[string]any `toml:"output_schema" json:"output_schema"`
	Risk         Risk           `toml:"risk" json:"risk"`
	// HooksOnly (hooks_only = true) marks a tool meant to be run by hooks
	// only, such as a skill's lifecycle-event handler. A Palyra-Go
	// extension (Palyra's manifest has no such key, and Palyra refuses a
	// manifest that has it); false by default. Such a tool can be bound
	// to hook events and is called by the hooks dispatcher as usual, but
	// the MCP server neither lists it nor runs it (an agent must not be
	// able to forge the events it handles), and the tool catalog and a
	// skill's info mark it ("hooks_only": true) so that the console
	// leaves it out of its Run list. An operator may still call it
	// directly over the HTTP or gRPC API or the CLI, to test it with a
	// made-up event: those take the admin token, which may install and
	// remove skills anyway. JSON leaves the key out when false.
	HooksOnly bool `toml:"hooks_only" json:"hooks_only,omitempty"`
}

// Risk marks tools that need a human in the loop.
type Risk struct {
	DefaultSensitive bool `toml:"default_sensitive" json:"default_sensitive"`
	RequiresApproval bool `toml:"requires_approval" json:"requires_approval"`
}

// Capabilities are what a skill asks the host for.
type Capabilities struct {
	Filesystem          Filesystem    `toml:"filesystem" json:"filesystem"`
	HTTPEgressAllowlist []string      `toml:"http_egress_allowlist" json:"http_egress_allowlist"`
	Secrets             []SecretScope `toml:"secrets" json:"secrets"`
	DeviceCapabilities  []string      `toml:"device_capabilities" json:"device_capabilities"`
	NodeCapabilities    []string      `toml:"node_capabilities" json:"node_capabilities"`
	// Channels are the message channels the skill sends to
	// (channel.send). A Palyra-Go extension: Palyra's manifest has no
	// channel field, so its channel grants are always empty.
	Channels      []string      `toml:"channels" json:"channels"`
	Quotas        Quotas        `toml:"quotas" json:"quotas"`
	WildcardOptIn WildcardOptIn `toml:"wildcard_opt_in" json:"wildcard_opt_in"`
}

// Filesystem lists artifact-relative roots; write roots become storage grants.
type Filesystem struct {
	ReadRoots  []string `toml:"read_roots" json:"read_roots"`
	WriteRoots []string `toml:"write_roots" json:"write_roots"`
}

// SecretScope names the secret keys a skill may use within one vault scope
// (global, principal:<id>, channel:<id> or skill:<id>).
type SecretScope struct {
	Scope    string   `toml:"scope" json:"scope"`
	KeyNames []string `toml:"key_names" json:"key_names"`
}

// Quotas bound one invocation. A key left out of skill.toml gets its default
// (DefaultWallClockTimeoutMS, DefaultFuelBudget, DefaultMaxMemoryBytes); an
// explicit 0 is an error. In a Manifest built in code a zero value means
// "not set": Marshal leaves it out, so it reads back as the default.
type Quotas struct {
	WallClockTimeoutMS uint64 `toml:"wall_clock_timeout_ms" json:"wall_clock_timeout_ms"`
	FuelBudget         uint64 `toml:"fuel_budget" json:"fuel_budget"`
	MaxMemoryBytes     uint64 `toml:"max_memory_bytes" json:"max_memory_bytes"`
}

// WildcardOptIn must be set for a '*' in the matching capability list.
type WildcardOptIn struct {
	Filesystem bool `toml:"filesystem" json:"filesystem"`
	HTTPEgress bool `toml:"http_egress" json:"http_egress"`
	Secrets    bool `toml:"secrets" json:"secrets"`
	Device     bool `toml:"device" json:"device"`
	Node       bool `toml:"node" json:"node"`
}

// Compat states which protocol and runtime versions the skill needs. On
// input the legacy names min_protocol_major and min_runtime_version are
// accepted; output always uses the current names.
type Compat struct {
	RequiredProtocolMajor uint32 `toml:"required_protocol_major" json:"required_protocol_major"`
	MinPalyraVersion      string `toml:"min_palyra_version" json:"min_palyra_version"`
	MaxPalyraVersion      string `toml:"max_palyra_version,omitempty" json:"max_palyra_version,omitempty"`
}

// Integrity lists the sha256 of every payload entry except skill.toml and
// signature.json. The artifact builder fills it in; the verifier requires it
// to match the archive exactly.
type Integrity struct {
	Files []IntegrityFile `toml:"files" json:"files"`
}

// IntegrityFile is one entry of the integrity list.
type IntegrityFile struct {
	Path   string `toml:"path" json:"path"`
	SHA256 string `toml:"sha256" json:"sha256"`
}

// Builder marks output of a dynamic tool builder.
type Builder struct {
	Experimental bool             `toml:"experimental" json:"experimental"`
	SourceKind   string           `toml:"source_kind" json:"source_kind"`
	SourceRef    string           `toml:"source_ref" json:"source_ref"`
	RolloutFlag  string           `toml:"rollout_flag" json:"rollout_flag"`
	ReviewStatus string           `toml:"review_status" json:"review_status"`
	Checklist    BuilderChecklist `toml:"checklist" json:"checklist"`
}

// BuilderChecklist points at the review material of builder output.
type BuilderChecklist struct {
	CapabilityDeclarationPath string `toml:"capability_declaration_path" json:"capability_declaration_path"`
	ProvenancePath            string `toml:"provenance_path" json:"provenance_path"`
	TestHarnessPath           string `toml:"test_harness_path" json:"test_harness_path"`
	ReviewNotes               string `toml:"review_notes" json:"review_notes"`
}

// Operator is the v2 metadata an operator sees in listings and consoles. It
// must be empty (see IsEmpty) when manifest_version is 1.
type Operator struct {
	DisplayName string          `toml:"display_name,omitempty" json:"display_name,omitempty"`
	Summary     string          `toml:"summary,omitempty" json:"summary,omitempty"`
	Description string          `toml:"description,omitempty" json:"description,omitempty"`
	Categories  []string        `toml:"categories,omitempty" json:"categories,omitempty"`
	Tags        []string        `toml:"tags,omitempty" json:"tags,omitempty"`
	DocsURL     string          `toml:"docs_url,omitempty" json:"docs_url,omitempty"`
	Plugin      *OperatorPlugin `toml:"plugin,omitempty" json:"plugin,omitempty"`
	Config      *OperatorConfig `toml:"config,omitempty" json:"config,omitempty"`
}

// OperatorPlugin holds the defaults used when a plugin binding is created.
type OperatorPlugin struct {
	DefaultToolID     string             `toml:"default_tool_id,omitempty" json:"default_tool_id,omitempty"`
	DefaultModulePath string             `toml:"default_module_path,omitempty" json:"default_module_path,omitempty"`
	DefaultEntrypoint string             `toml:"default_entrypoint,omitempty" json:"default_entrypoint,omitempty"`
	Contracts         []OperatorContract `toml:"contracts,omitempty" json:"contracts,omitempty"`
}

// OperatorContract declares a typed plugin contract the skill implements.
// Kind is one of ContractKinds(); Version defaults to 1, the only supported
// version.
type OperatorContract struct {
	Kind    string `toml:"kind" json:"kind"`
	Version uint32 `toml:"version" json:"version"`
}

// OperatorConfig declares the configuration an operator can set.
type OperatorConfig struct {
	SchemaVersion uint32                    `toml:"schema_version" json:"schema_version"`
	Required      []string                  `toml:"required,omitempty" json:"required,omitempty"`
	Properties    map[string]ConfigProperty `toml:"properties,omitempty" json:"properties,omitempty"`
}

// ConfigProperty is one operator-settable configuration value. Type is one of
// ConfigTypes(). Default, when set, holds the TOML value as decoded: a string,
// an int64, a float64 (or int64) for "number", a bool, or an []any of
// strings for "string_list".
type ConfigProperty struct {
	Type        string   `toml:"type" json:"type"`
	Title       string   `toml:"title,omitempty" json:"title,omitempty"`
	Description string   `toml:"description,omitempty" json:"description,omitempty"`
	Default     any      `toml:"default,omitempty" json:"default,omitempty"`
	Redacted    bool     `toml:"redacted" json:"redacted"`
	EnumValues  []string `toml:"enum_values,omitempty" json:"enum_values,omitempty"`
}
