package manifest

// NOTE(bootstrap): this file fixes the package's exported API so that other
// packages can be written against it. The manifest helper replaces the bodies
// with the full implementation (validation of every rule, compat aliases,
// defaults, warnings, JSON Schema compilation) and may move code between
// files, but keeps these names and signatures.

import (
	"bytes"

	"github.com/palyra-go/palyra/host/errcode"
	toml "github.com/pelletier/go-toml/v2"
)

const (
	// ProtocolMajor is the highest compat.required_protocol_major this build runs.
	ProtocolMajor = 1
	// RuntimeVersion is the Palyra runtime version this build is compatible
	// with, compared against compat.min_palyra_version / max_palyra_version.
	RuntimeVersion = "0.1.0"
)

var (
	// ErrParse: skill.toml is not valid TOML, has an unknown key or a value of the wrong type.
	ErrParse = errcode.New("manifest_parse", "manifest: parse error")
	// ErrValidation: skill.toml parses but breaks a rule.
	ErrValidation = errcode.New("manifest_validation", "manifest: validation failed")
	// ErrUnsupportedProtocolMajor: compat.required_protocol_major is above ProtocolMajor.
	ErrUnsupportedProtocolMajor = errcode.New("unsupported_protocol_major", "manifest: unsupported protocol major")
	// ErrUnsupportedRuntimeVersion: compat.min_palyra_version is above RuntimeVersion.
	ErrUnsupportedRuntimeVersion = errcode.New("unsupported_runtime_version", "manifest: unsupported runtime version")
	// ErrRuntimeVersionAboveMaximum: RuntimeVersion is above compat.max_palyra_version.
	ErrRuntimeVersionAboveMaximum = errcode.New("runtime_version_above_supported_maximum", "manifest: runtime version above the supported maximum")
)

// Warning is a manifest finding that does not block (facts §1.8).
type Warning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// CapabilityGrants are the grants a manifest asks for (facts §3.6).
type CapabilityGrants struct {
	HTTPHosts       []string `json:"http_hosts"`
	SecretKeys      []string `json:"secret_keys"`
	StoragePrefixes []string `json:"storage_prefixes"`
	Channels        []string `json:"channels"`
}

// PolicyBinding is one approval requirement derived from the manifest (facts §3.6).
type PolicyBinding struct {
	Action           string `json:"action"`
	Resource         string `json:"resource"`
	RequiresApproval bool   `json:"requires_approval"`
}

// Parse decodes skill.toml and validates it. It does not check compat
// against this build; see CheckCompat.
func Parse(data []byte) (*Manifest, error) {
	var m Manifest
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Marshal encodes m as skill.toml text with the current key names.
func Marshal(m *Manifest) ([]byte, error) { return toml.Marshal(m) }

// CheckCompat checks m.Compat against ProtocolMajor and RuntimeVersion.
func CheckCompat(m *Manifest) error { return nil }

// Warnings returns the manifest's warnings, in a stable order.
func (m *Manifest) Warnings() []Warning { return nil }

// CapabilityGrants returns the grants the manifest asks for.
func (m *Manifest) CapabilityGrants() CapabilityGrants { return CapabilityGrants{} }

// PolicyBindings returns the approval bindings derived from the manifest.
func (m *Manifest) PolicyBindings() []PolicyBinding { return nil }
