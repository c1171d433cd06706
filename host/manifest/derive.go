package manifest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/palyra-go/palyra/host/internal/skillpath"
)

// Warning is a manifest finding that does not block, with Palyra's codes and
// shape ({code, severity: "warning", message}); inspect, verify and audit
// report it.
type Warning struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// Warning codes, as Palyra reports them.
const (
	WarnLegacyManifestVersion       = "legacy_manifest_version"
	WarnMissingOperatorMetadata     = "missing_operator_metadata"
	WarnMissingOperatorDisplayName  = "missing_operator_display_name"
	WarnEmptyOperatorConfigContract = "empty_operator_config_contract"
	WarnConfigRedactionRecommended  = "operator_config_redaction_recommended"
	warningSeverity                 = "warning"
)

// secretHints are the property-name fragments that suggest a secret.
var secretHints = []string{"secret", "token", "password", "api_key", "client_key"}

// Warnings returns the manifest's warnings, as Palyra computes them, in a
// stable order:
// legacy_manifest_version, then missing_operator_metadata or
// missing_operator_display_name, then empty_operator_config_contract, then
// one operator_config_redaction_recommended per property, by property name.
// The result is never nil.
func (m *Manifest) Warnings() []Warning {
	ws := []Warning{}
	add := func(code, format string, args ...any) {
		ws = append(ws, Warning{Code: code, Severity: warningSeverity, Message: fmt.Sprintf(format, args...)})
	}
	if m.ManifestVersion == legacyManifestVersion {
		add(WarnLegacyManifestVersion, "manifest_version 1 is legacy; use manifest_version 2")
	}
	o := &m.Operator
	if o.IsEmpty() {
		add(WarnMissingOperatorMetadata, "the manifest has no operator metadata")
	} else if strings.TrimSpace(o.DisplayName) == "" {
		add(WarnMissingOperatorDisplayName, "operator metadata has no display_name")
	}
	if o.Config != nil {
		if len(o.Config.Properties) == 0 {
			add(WarnEmptyOperatorConfigContract, "operator.config declares no properties")
		}
		keys := make([]string, 0, len(o.Config.Properties))
		for k := range o.Config.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if o.Config.Properties[k].Redacted {
				continue
			}
			lower := strings.ToLower(k)
			for _, hint := range secretHints {
				if strings.Contains(lower, hint) {
					add(WarnConfigRedactionRecommended, "operator config property %q looks like a secret; set redacted = true", k)
					break
				}
			}
		}
	}
	return ws
}

// CapabilityGrants are the grants a manifest asks for, derived as Palyra's
// verify report derives them.
type CapabilityGrants struct {
	HTTPHosts       []string `json:"http_hosts"`
	SecretKeys      []string `json:"secret_keys"`
	StoragePrefixes []string `json:"storage_prefixes"`
	Channels        []string `json:"channels"`
}

// CapabilityGrants returns the grants the manifest asks for, as Palyra
// derives them: http_hosts is the egress allowlist trimmed, sorted and
// de-duplicated (case kept); secret_keys is "<scope>/<key>" for every secret
// key, sorted and de-duplicated; storage_prefixes is the write roots
// (normalized by the path rule, in manifest order, without repeats);
// channels is capabilities.channels (a Palyra-Go extension; always empty
// for Palyra's manifests), sorted and de-duplicated. Read roots, device and node capabilities are
// not grants. No slice is nil, so JSON shows [] rather than null.
func (m *Manifest) CapabilityGrants() CapabilityGrants {
	c := &m.Capabilities
	g := CapabilityGrants{
		HTTPHosts:       []string{},
		SecretKeys:      []string{},
		StoragePrefixes: []string{},
		Channels:        []string{},
	}
	for _, h := range c.HTTPEgressAllowlist {
		g.HTTPHosts = append(g.HTTPHosts, strings.TrimSpace(h))
	}
	g.HTTPHosts = sortedUnique(g.HTTPHosts)
	for _, s := range c.Secrets {
		scope := strings.TrimSpace(s.Scope)
		for _, k := range s.KeyNames {
			g.SecretKeys = append(g.SecretKeys, scope+"/"+strings.TrimSpace(k))
		}
	}
	g.SecretKeys = sortedUnique(g.SecretKeys)
	seen := map[string]bool{}
	for _, r := range c.Filesystem.WriteRoots {
		p, err := skillpath.Normalize(r)
		if err != nil {
			p = strings.TrimSpace(r) // only for a manifest that was not parsed
		}
		if !seen[p] {
			seen[p] = true
			g.StoragePrefixes = append(g.StoragePrefixes, p)
		}
	}
	for _, ch := range c.Channels {
		g.Channels = append(g.Channels, strings.TrimSpace(ch))
	}
	g.Channels = sortedUnique(g.Channels)
	return g
}

func sortedUnique(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, e := range s {
		if i == 0 || e != s[i-1] {
			out = append(out, e)
		}
	}
	return out
}

// PolicyBinding is one approval requirement derived from the manifest, as
// in Palyra's verify report.
type PolicyBinding struct {
	Action           string `json:"action"`
	Resource         string `json:"resource"`
	RequiresApproval bool   `json:"requires_approval"`
}

// Policy binding actions.
const (
	ActionToolExecute     = "tool.execute"
	ActionHTTPEgress      = "skill.capability.http.egress"
	ActionFilesystemWrite = "skill.capability.filesystem.write"
	ActionVaultRead       = "skill.capability.vault.read"
	ActionDeviceUse       = "skill.capability.device.use"
)

// PolicyBindings returns the approval bindings derived from the manifest:
// one tool.execute on "tool:<id>" per tool, needing approval when the tool
// is default_sensitive or requires_approval; and on "skill:<skill_id>",
// always needing approval, skill.capability.http.egress when any host is
// allowed, .filesystem.write when any write root is declared, .vault.read
// when any secret is, and .device.use when any device or node capability
// is. The list is de-duplicated and sorted by action, resource, then
// requires_approval (false first). It is never nil.
func (m *Manifest) PolicyBindings() []PolicyBinding {
	var bs []PolicyBinding
	for _, tl := range m.Entrypoints.Tools {
		bs = append(bs, PolicyBinding{
			Action:           ActionToolExecute,
			Resource:         "tool:" + strings.TrimSpace(tl.ID),
			RequiresApproval: tl.Risk.DefaultSensitive || tl.Risk.RequiresApproval,
		})
	}
	c := &m.Capabilities
	skill := "skill:" + strings.TrimSpace(m.SkillID)
	capability := func(action string, requested bool) {
		if requested {
			bs = append(bs, PolicyBinding{Action: action, Resource: skill, RequiresApproval: true})
		}
	}
	capability(ActionHTTPEgress, len(c.HTTPEgressAllowlist) > 0)
	capability(ActionFilesystemWrite, len(c.Filesystem.WriteRoots) > 0)
	capability(ActionVaultRead, len(c.Secrets) > 0)
	capability(ActionDeviceUse, len(c.DeviceCapabilities) > 0 || len(c.NodeCapabilities) > 0)
	sort.Slice(bs, func(i, j int) bool {
		a, b := bs[i], bs[j]
		if a.Action != b.Action {
			return a.Action < b.Action
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return !a.RequiresApproval && b.RequiresApproval
	})
	out := []PolicyBinding{}
	for i, b := range bs {
		if i == 0 || b != bs[i-1] {
			out = append(out, b)
		}
	}
	return out
}
