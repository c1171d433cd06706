package manifest

import (
	"bytes"
	"errors"
	"fmt"

	toml "github.com/pelletier/go-toml/v2"
)

// Marshal encodes m as skill.toml: deterministic TOML (struct fields in
// the order of Palyra's SkillManifest, map keys sorted) with the current key
// names (required_protocol_major, min_palyra_version). Zero quotas and
// versions are left out, so they read back as their defaults; empty lists and
// an empty operator section are left out too, so a legacy manifest stays
// valid.
//
// Marshal checks its own output with Parse and returns that error (a
// *FieldError whose Path names the bad field of m; Line and Column are 0)
// rather than text that would not load. For a manifest returned by Parse,
// Parse(Marshal(m)) equals m.
func Marshal(m *Manifest) ([]byte, error) {
	return marshal(m, nil)
}

// marshal is Marshal; order, when set, turns the encodable form into the
// value to encode (MarshalOrdered).
func marshal(m *Manifest, order func(*outManifest) (any, error)) ([]byte, error) {
	if m == nil {
		return nil, &FieldError{Reason: "nil manifest", Err: ErrValidation}
	}
	for i, tl := range m.Entrypoints.Tools {
		p := joinIndex("entrypoints.tools", i)
		if tl.InputSchema == nil {
			return nil, &FieldError{Path: p + ".input_schema", Reason: "must be a table (a JSON Schema object)", Err: ErrValidation}
		}
		if tl.OutputSchema == nil {
			return nil, &FieldError{Path: p + ".output_schema", Reason: "must be a table (a JSON Schema object)", Err: ErrValidation}
		}
	}
	var v any = encodable(m)
	if order != nil {
		var err error
		if v, err = order(v.(*outManifest)); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		return nil, &FieldError{Reason: "cannot encode as TOML: " + err.Error(), Err: ErrValidation, Cause: err}
	}
	if _, err := Parse(buf.Bytes()); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Line, fe.Column = 0, 0
			return nil, fe
		}
		return nil, fmt.Errorf("%w: encoded manifest does not parse: %w", ErrValidation, err)
	}
	return buf.Bytes(), nil
}

// The out* types fix the encoded layout: which keys are left out when empty.

type outManifest struct {
	ManifestVersion uint32          `toml:"manifest_version,omitempty"`
	SkillID         string          `toml:"skill_id"`
	Name            string          `toml:"name"`
	Version         string          `toml:"version"`
	Publisher       string          `toml:"publisher"`
	Entrypoints     outEntrypoints  `toml:"entrypoints"`
	Capabilities    outCapabilities `toml:"capabilities,omitempty"`
	Compat          outCompat       `toml:"compat"`
	Integrity       outIntegrity    `toml:"integrity,omitempty"`
	Builder         *Builder        `toml:"builder,omitempty"`
	Operator        *outOperator    `toml:"operator,omitempty"`
	Config          *Config         `toml:"config,omitempty"`
}

type outEntrypoints struct {
	Tools []outTool `toml:"tools"`
}

type outTool struct {
	ID           string         `toml:"id"`
	Name         string         `toml:"name"`
	Description  string         `toml:"description"`
	InputSchema  map[string]any `toml:"input_schema"`
	OutputSchema map[string]any `toml:"output_schema"`
	Risk         Risk           `toml:"risk"`
	HooksOnly    bool           `toml:"hooks_only,omitempty"`
}

type outCapabilities struct {
	Filesystem          outFilesystem `toml:"filesystem,omitempty"`
	HTTPEgressAllowlist []string      `toml:"http_egress_allowlist,omitempty"`
	Secrets             []SecretScope `toml:"secrets,omitempty"`
	DeviceCapabilities  []string      `toml:"device_capabilities,omitempty"`
	NodeCapabilities    []string      `toml:"node_capabilities,omitempty"`
	Channels            []string      `toml:"channels,omitempty"`
	Quotas              outQuotas     `toml:"quotas,omitempty"`
	WildcardOptIn       outOptIn      `toml:"wildcard_opt_in,omitempty"`
}

type outFilesystem struct {
	ReadRoots  []string `toml:"read_roots,omitempty"`
	WriteRoots []string `toml:"write_roots,omitempty"`
}

type outQuotas struct {
	WallClockTimeoutMS uint64 `toml:"wall_clock_timeout_ms,omitempty"`
	FuelBudget         uint64 `toml:"fuel_budget,omitempty"`
	MaxMemoryBytes     uint64 `toml:"max_memory_bytes,omitempty"`
}

type outOptIn struct {
	Filesystem bool `toml:"filesystem,omitempty"`
	HTTPEgress bool `toml:"http_egress,omitempty"`
	Secrets    bool `toml:"secrets,omitempty"`
	Device     bool `toml:"device,omitempty"`
	Node       bool `toml:"node,omitempty"`
}

type outCompat struct {
	RequiredProtocolMajor uint32 `toml:"required_protocol_major"`
	MinPalyraVersion      string `toml:"min_palyra_version"`
	MaxPalyraVersion      string `toml:"max_palyra_version,omitempty"`
}

type outIntegrity struct {
	Files []IntegrityFile `toml:"files,omitempty"`
}

type outOperator struct {
	DisplayName string     `toml:"display_name,omitempty"`
	Summary     string     `toml:"summary,omitempty"`
	Description string     `toml:"description,omitempty"`
	Categories  []string   `toml:"categories,omitempty"`
	Tags        []string   `toml:"tags,omitempty"`
	DocsURL     string     `toml:"docs_url,omitempty"`
	Plugin      *outPlugin `toml:"plugin,omitempty"`
	Config      *outConfig `toml:"config,omitempty"`
}

type outPlugin struct {
	DefaultToolID     string        `toml:"default_tool_id,omitempty"`
	DefaultModulePath string        `toml:"default_module_path,omitempty"`
	DefaultEntrypoint string        `toml:"default_entrypoint,omitempty"`
	Contracts         []outContract `toml:"contracts,omitempty"`
}

type outContract struct {
	Kind    string `toml:"kind"`
	Version uint32 `toml:"version,omitempty"`
}

type outConfig struct {
	SchemaVersion uint32                 `toml:"schema_version,omitempty"`
	Required      []string               `toml:"required,omitempty"`
	Properties    map[string]outProperty `toml:"properties,omitempty"`
}

type outProperty struct {
	Type        string   `toml:"type"`
	Title       string   `toml:"title,omitempty"`
	Description string   `toml:"description,omitempty"`
	Default     any      `toml:"default,omitempty"`
	Redacted    bool     `toml:"redacted,omitempty"`
	EnumValues  []string `toml:"enum_values,omitempty"`
}

func encodable(m *Manifest) *outManifest {
	c := &m.Capabilities
	out := &outManifest{
		ManifestVersion: m.ManifestVersion,
		SkillID:         m.SkillID,
		Name:            m.Name,
		Version:         m.Version,
		Publisher:       m.Publisher,
		Capabilities: outCapabilities{
			Filesystem:          outFilesystem{ReadRoots: c.Filesystem.ReadRoots, WriteRoots: c.Filesystem.WriteRoots},
			HTTPEgressAllowlist: c.HTTPEgressAllowlist,
			Secrets:             c.Secrets,
			DeviceCapabilities:  c.DeviceCapabilities,
			NodeCapabilities:    c.NodeCapabilities,
			Channels:            c.Channels,
			Quotas:              outQuotas(c.Quotas),
			WildcardOptIn:       outOptIn(c.WildcardOptIn),
		},
		Compat:    outCompat(m.Compat),
		Integrity: outIntegrity(m.Integrity),
		Builder:   m.Builder,
		Config:    m.Config,
	}
	out.Entrypoints.Tools = make([]outTool, len(m.Entrypoints.Tools))
	for i, tl := range m.Entrypoints.Tools {
		out.Entrypoints.Tools[i] = outTool(tl)
	}
	if o := &m.Operator; !o.IsEmpty() {
		oo := &outOperator{
			DisplayName: o.DisplayName,
			Summary:     o.Summary,
			Description: o.Description,
			Categories:  o.Categories,
			Tags:        o.Tags,
			DocsURL:     o.DocsURL,
		}
		if p := o.Plugin; p != nil {
			oo.Plugin = &outPlugin{
				DefaultToolID:     p.DefaultToolID,
				DefaultModulePath: p.DefaultModulePath,
				DefaultEntrypoint: p.DefaultEntrypoint,
			}
			for _, c := range p.Contracts {
				oo.Plugin.Contracts = append(oo.Plugin.Contracts, outContract(c))
			}
		}
		if cfg := o.Config; cfg != nil {
			oo.Config = &outConfig{SchemaVersion: cfg.SchemaVersion, Required: cfg.Required}
			if len(cfg.Properties) > 0 {
				oo.Config.Properties = make(map[string]outProperty, len(cfg.Properties))
				for k, p := range cfg.Properties {
					oo.Config.Properties[k] = outProperty(p)
				}
			}
		}
		out.Operator = oo
	}
	return out
}
