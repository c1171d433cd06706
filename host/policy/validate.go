package policy

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// rules is a validated profile in the form Evaluate uses: every pattern
// normalized, schemes lower-cased and ports sorted, without repeats.
type rules struct {
	hosts    []string
	secrets  []secretPattern
	prefixes []string
	channels []string
	schemes  []string
	ports    []int
	// privateNets are http.allowed_private_networks, masked.
	privateNets []netip.Prefix
}

// Validate checks every value of the profile: host patterns are "*",
// "*.<host>" or a host (the manifest's host rule: a-z, 0-9, '.', '-');
// schemes are "http" or "https" and at least one is listed; ports are
// 1..65535 and at least one is listed; secret patterns are
// "<scope>/<key>" with a scope of global, principal:<id>, channel:<id>,
// skill:<id> or "*" and '*' allowed in id and key; storage prefixes pass
// the artifact path rule or are "*"; channels are [a-z0-9._-]+ or "*";
// max_redirects is at least 0 and every other number at least 1, with
// max_memory_bytes at least MinMemoryBytes and max_capability_calls at most
// MaxCapabilityCallsLimit. The error is a *ProfileError naming the first
// key at fault.
func (p *Profile) Validate() error {
	_, err := p.compile()
	return err
}

// compile validates p and returns its rules.
func (p *Profile) compile() (*rules, error) {
	r := &rules{}
	bad := func(path, format string, args ...any) (*rules, error) {
		return nil, &ProfileError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	at := func(key string, i int) string { return key + "[" + strconv.Itoa(i) + "]" }

	for i, h := range p.HTTP.AllowedHosts {
		t := normHost(h)
		if reason := hostPatternReason(t); reason != "" {
			return bad(at("http.allowed_hosts", i), "%q: %s", h, reason)
		}
		r.hosts = append(r.hosts, t)
	}
	if len(p.HTTP.AllowedSchemes) == 0 {
		return bad("http.allowed_schemes", `must list "https", "http" or both`)
	}
	for i, s := range p.HTTP.AllowedSchemes {
		t := asciiLower(strings.TrimSpace(s))
		if t != "https" && t != "http" {
			return bad(at("http.allowed_schemes", i), `%q: must be "https" or "http"`, s)
		}
		r.schemes = append(r.schemes, t)
	}
	r.schemes = canonical(r.schemes)
	if len(p.HTTP.AllowedPorts) == 0 {
		return bad("http.allowed_ports", "must list at least one port")
	}
	for i, port := range p.HTTP.AllowedPorts {
		if port < 1 || port > 65535 {
			return bad(at("http.allowed_ports", i), "port %d: must be 1..65535", port)
		}
		r.ports = append(r.ports, port)
	}
	for i, s := range p.HTTP.AllowedPrivateNetworks {
		pfx, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return bad(at("http.allowed_private_networks", i), "%q: not a CIDR prefix such as \"127.0.0.1/32\" or \"fd00::/8\"", s)
		}
		if pfx.Addr().Zone() != "" {
			return bad(at("http.allowed_private_networks", i), "%q: a zone is not allowed", s)
		}
		r.privateNets = append(r.privateNets, pfx.Masked())
	}
	slices.Sort(r.ports)
	r.ports = slices.Compact(r.ports)
	if p.HTTP.MaxRedirects < 0 {
		return bad("http.max_redirects", "must be at least 0, found %d", p.HTTP.MaxRedirects)
	}
	for _, n := range []struct {
		key      string
		v, least int64
		most     int64
	}{
		{"http.max_request_bytes", p.HTTP.MaxRequestBytes, 1, 0},
		{"http.max_response_bytes", p.HTTP.MaxResponseBytes, 1, 0},
		{"http.request_timeout_ms", p.HTTP.RequestTimeoutMS, 1, maxMillis},
		{"http.max_requests_per_invocation", p.HTTP.MaxRequestsPerInvocation, 1, 0},
		{"http.max_bytes_per_invocation", p.HTTP.MaxBytesPerInvocation, 1, 0},
		{"storage.max_bytes_per_skill", p.Storage.MaxBytesPerSkill, 1, 0},
		{"storage.max_keys_per_skill", p.Storage.MaxKeysPerSkill, 1, 0},
		{"quotas.max_fuel", p.Quotas.MaxFuel, 1, 0},
		{"quotas.max_memory_bytes", p.Quotas.MaxMemoryBytes, MinMemoryBytes, 0},
		{"quotas.max_wall_clock_ms", p.Quotas.MaxWallClockMS, 1, maxMillis},
		{"quotas.max_table_elements", p.Quotas.MaxTableElements, 1, 0},
		{"quotas.max_instances", p.Quotas.MaxInstances, 1, 0},
		{"quotas.max_capability_calls", p.Quotas.MaxCapabilityCalls, 1, MaxCapabilityCallsLimit},
	} {
		if n.v < n.least {
			return bad(n.key, "must be at least %d, found %d", n.least, n.v)
		}
		if n.most > 0 && n.v > n.most {
			return bad(n.key, "must be at most %d, found %d", n.most, n.v)
		}
	}

	for i, s := range p.Secrets.Allowed {
		t := strings.TrimSpace(s)
		scope, key, ok := splitSecret(t)
		if !ok {
			return bad(at("secrets.allowed", i), `%q: must be "<scope>/<key>" with exactly one '/'`, s)
		}
		if reason := scopeReason(scope, true); reason != "" {
			return bad(at("secrets.allowed", i), "%q: %s", s, reason)
		}
		if reason := globReason("key", key, true); reason != "" {
			return bad(at("secrets.allowed", i), "%q: %s", s, reason)
		}
		r.secrets = append(r.secrets, secretPattern{scope: scope, key: key})
	}
	for i, s := range p.Storage.AllowedPrefixes {
		t, reason := prefixReason(s)
		if reason != "" {
			return bad(at("storage.allowed_prefixes", i), "%q: %s", s, reason)
		}
		r.prefixes = append(r.prefixes, t)
	}
	for i, s := range p.Channels.Allowed {
		t := strings.TrimSpace(s)
		if reason := channelReason(t, true); reason != "" {
			return bad(at("channels.allowed", i), "%q: %s", s, reason)
		}
		r.channels = append(r.channels, t)
	}
	for i, c := range p.Capabilities.RequireApproval {
		t := asciiLower(strings.TrimSpace(c))
		if !slices.Contains(ApprovalClasses, t) {
			return bad(at("capabilities.require_approval", i), "%q: must be one of %s", c, strings.Join(ApprovalClasses, ", "))
		}
	}
	return r, nil
}

// canonical sorts s byte-wise and removes empty strings and repeats: the
// order of ABI §2.1 in which grant position i is handle base+i. It returns
// a new, non-nil slice.
func canonical(s []string) []string {
	out := make([]string, 0, len(s))
	for _, e := range s {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
