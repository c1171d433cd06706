package audit

import (
	"fmt"

	"github.com/palyra-go/palyra/host/manifest"
)

// artifactChecks records what verification established (Palyra's four
// always-pass checks) and one warn check per manifest warning.
func (a *auditor) artifactChecks(warnings []manifest.Warning) {
	a.add(pass("signature_validity", "signature chain and payload hash verified", nil))
	a.add(pass("sbom_presence", "sbom.cdx.json is present and valid", nil))
	a.add(pass("provenance_presence", "provenance.json is present and valid", nil))
	a.add(pass("manifest_sanity", "manifest passed strict schema and wildcard validation", nil))
	for _, w := range warnings {
		a.add(warn("manifest_warning:"+w.Code, w.Message, map[string]any{
			"code":     w.Code,
			"severity": w.Severity,
		}))
	}
}

// capabilityChecks are Palyra's capability guardrails: three informational
// checks listing the declared scopes, then device and wildcard capabilities,
// which fail unless the policy allows them.
func (a *auditor) capabilityChecks() {
	c := &a.m.Capabilities
	readRoots, writeRoots := strs(c.Filesystem.ReadRoots), strs(c.Filesystem.WriteRoots)
	a.add(pass("manifest_filesystem_scopes",
		fmt.Sprintf("manifest declares %d filesystem read root(s) and %d write root(s)", len(readRoots), len(writeRoots)),
		map[string]any{"read_roots": readRoots, "write_roots": writeRoots}))
	hosts := strs(c.HTTPEgressAllowlist)
	a.add(pass("manifest_http_egress_scopes",
		fmt.Sprintf("manifest declares %d http egress host(s)", len(hosts)),
		map[string]any{"hosts": hosts}))
	scopes := make([]string, 0, len(c.Secrets))
	for _, s := range c.Secrets {
		scopes = append(scopes, s.Scope)
	}
	a.add(pass("manifest_secret_scopes",
		fmt.Sprintf("manifest declares %d secret scope(s)", len(scopes)),
		map[string]any{"scopes": scopes}))

	devices := strs(c.DeviceCapabilities)
	if len(devices) > 0 && !a.policy.AllowDeviceCapabilities {
		a.add(fail("forbidden_device_capabilities",
			"manifest declares device capabilities, which are not grantable by the sandboxed plugin runtime",
			map[string]any{"device_capabilities": devices}))
	} else {
		a.add(pass("forbidden_device_capabilities",
			"manifest does not declare forbidden device capabilities",
			map[string]any{"device_capabilities": devices, "allow_device_capabilities": a.policy.AllowDeviceCapabilities}))
	}

	optIns := wildcardOptIns(c.WildcardOptIn)
	if len(optIns) > 0 && !a.policy.AllowWildcardCapabilities {
		a.add(fail("forbidden_wildcard_capabilities",
			"manifest enables wildcard capabilities, which require an explicit audit policy override",
			map[string]any{"wildcard_opt_ins": optIns}))
	} else {
		a.add(pass("forbidden_wildcard_capabilities",
			"manifest wildcard capability posture is allowed by audit policy",
			map[string]any{"wildcard_opt_ins": optIns, "allow_wildcard_capabilities": a.policy.AllowWildcardCapabilities}))
	}
}

// wildcardOptIns names the wildcard_opt_in flags that are set, in Palyra's
// order.
func wildcardOptIns(w manifest.WildcardOptIn) []string {
	out := []string{}
	for _, f := range []struct {
		on   bool
		name string
	}{
		{w.Filesystem, "filesystem"},
		{w.HTTPEgress, "http_egress"},
		{w.Secrets, "secrets"},
		{w.Device, "device"},
		{w.Node, "node"},
	} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return out
}

// policyChecks turn the operator profile's decision into checks: one
// policy_compliance pass when the manifest stays inside the profile, else
// one failed check per violation, with id "policy:<capability>" and the
// violation's reason line as message, so every quarantine reason names the
// capability, its value and the profile key that refused it.
func (a *auditor) policyChecks() {
	d := a.decision
	if len(d.Violations) == 0 {
		ignored := make([]string, 0, len(d.Ignored))
		for _, ig := range d.Ignored {
			ignored = append(ignored, ig.String())
		}
		a.add(pass("policy_compliance", "manifest requests only capabilities and quotas the operator profile allows",
			map[string]any{
				"ignored":              ignored,
				"fuel":                 d.Limits.Fuel,
				"max_memory_bytes":     d.Limits.MaxMemoryBytes,
				"wall_clock_ms":        d.Limits.WallClock.Milliseconds(),
				"max_table_elements":   d.Limits.MaxTableElements,
				"max_instances":        d.Limits.MaxInstances,
				"max_capability_calls": d.Limits.MaxCapabilityCalls,
			}))
		return
	}
	reasons := d.Reasons()
	for i, v := range d.Violations {
		msg := v.String()
		if i < len(reasons) {
			msg = reasons[i]
		}
		a.add(fail("policy:"+v.Capability, msg, map[string]any{
			"capability": v.Capability,
			"value":      v.Value,
			"reason":     v.Reason,
		}))
	}
}

// strs returns a copy of s that is never nil, so details show [] rather
// than null and share nothing with the manifest.
func strs(s []string) []string {
	return append([]string{}, s...)
}
