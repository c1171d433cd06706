package policy

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Escalation is what a new version of a skill is granted beyond the
// installed version: every list holds the new entries that no old entry
// covers (so "api.example.com" is no escalation over "*.example.com", nor
// "skills/cache/x" over "skills/cache"), and Raised holds the limits and
// HTTP bounds that grew. The zero Escalation is empty.
type Escalation struct {
	HTTPHosts       []string `json:"http_hosts,omitempty"`
	SecretKeys      []string `json:"secret_keys,omitempty"`
	StoragePrefixes []string `json:"storage_prefixes,omitempty"`
	// StorageWritable are prefixes the old version could only read (read
	// roots) and the new one may write; new prefixes are in StoragePrefixes.
	StorageWritable    []string `json:"storage_writable,omitempty"`
	Channels           []string `json:"channels,omitempty"`
	DeviceCapabilities []string `json:"device_capabilities,omitempty"`
	NodeCapabilities   []string `json:"node_capabilities,omitempty"`
	// HTTPSchemes and HTTPPorts are schemes and ports newly allowed.
	HTTPSchemes []string `json:"http_schemes,omitempty"`
	HTTPPorts   []int    `json:"http_ports,omitempty"`
	// AllowPrivate is true when private addresses are newly reachable.
	AllowPrivate bool `json:"allow_private,omitempty"`
	// Raised are the numeric bounds that grew, in a fixed order.
	Raised []Raise `json:"raised,omitempty"`
}

// Raise is one numeric bound that grew. Durations are in milliseconds.
type Raise struct {
	// Name is the bound: fuel, max_memory_bytes, wall_clock_ms,
	// max_table_elements, max_instances, max_capability_calls,
	// max_storage_bytes, http_max_redirects, http_max_request_bytes,
	// http_max_response_bytes or http_request_timeout_ms.
	Name string `json:"name"`
	Old  uint64 `json:"old"`
	New  uint64 `json:"new"`
}

// Diff returns what next is granted beyond prev, typically the decisions
// of the installed and the new version of a skill under the same profile.
// A nil prev stands for a skill granted nothing, with zero limits; a nil
// next escalates nothing. Only growth counts: what next drops is not
// listed.
func Diff(prev, next *Decision) Escalation {
	var esc Escalation
	if next == nil {
		return esc
	}
	if prev == nil {
		prev = &Decision{}
	}
	o, n := &prev.Grants, &next.Grants
	esc.HTTPHosts = uncovered(o.HTTPHosts, n.HTTPHosts, hostCovers)
	esc.SecretKeys = uncovered(o.SecretKeys, n.SecretKeys, secretGrantCovers)
	esc.StoragePrefixes = uncovered(o.StoragePrefixes, n.StoragePrefixes, prefixGrantCovers)
	for _, v := range uncovered(writable(o), writable(n), prefixGrantCovers) {
		if !slices.Contains(esc.StoragePrefixes, v) { // new prefixes are listed once
			esc.StorageWritable = append(esc.StorageWritable, v)
		}
	}
	esc.Channels = uncovered(o.Channels, n.Channels, exactCovers)
	esc.DeviceCapabilities = uncovered(o.DeviceCapabilities, n.DeviceCapabilities, exactCovers)
	esc.NodeCapabilities = uncovered(o.NodeCapabilities, n.NodeCapabilities, exactCovers)
	esc.HTTPSchemes = uncovered(o.HTTP.Schemes, n.HTTP.Schemes, func(a, b string) bool { return a == b })
	for _, port := range n.HTTP.Ports {
		if !slices.Contains(o.HTTP.Ports, port) {
			esc.HTTPPorts = append(esc.HTTPPorts, port)
		}
	}
	esc.AllowPrivate = n.HTTP.AllowPrivate && !o.HTTP.AllowPrivate

	ms := func(d time.Duration) uint64 { return uint64(d / time.Millisecond) }
	for _, b := range []struct {
		name     string
		old, new uint64
	}{
		{"fuel", prev.Limits.Fuel, next.Limits.Fuel},
		{"max_memory_bytes", prev.Limits.MaxMemoryBytes, next.Limits.MaxMemoryBytes},
		{"wall_clock_ms", ms(prev.Limits.WallClock), ms(next.Limits.WallClock)},
		{"max_table_elements", uint64(prev.Limits.MaxTableElements), uint64(next.Limits.MaxTableElements)},
		{"max_instances", uint64(prev.Limits.MaxInstances), uint64(next.Limits.MaxInstances)},
		{"max_capability_calls", uint64(prev.Limits.MaxCapabilityCalls), uint64(next.Limits.MaxCapabilityCalls)},
		{"max_storage_bytes", uint64(prev.Limits.MaxStorageBytes), uint64(next.Limits.MaxStorageBytes)},
		{"http_max_redirects", uint64(o.HTTP.MaxRedirects), uint64(n.HTTP.MaxRedirects)},
		{"http_max_request_bytes", uint64(o.HTTP.MaxRequestBytes), uint64(n.HTTP.MaxRequestBytes)},
		{"http_max_response_bytes", uint64(o.HTTP.MaxResponseBytes), uint64(n.HTTP.MaxResponseBytes)},
		{"http_request_timeout_ms", ms(o.HTTP.RequestTimeout), ms(n.HTTP.RequestTimeout)},
	} {
		if b.new > b.old {
			esc.Raised = append(esc.Raised, Raise{Name: b.name, Old: b.old, New: b.new})
		}
	}
	return esc
}

// writable returns the storage prefixes of g that are not read-only.
func writable(g *Grants) []string {
	var out []string
	for _, p := range g.StoragePrefixes {
		if !slices.Contains(g.StorageReadOnly, p) {
			out = append(out, p)
		}
	}
	return out
}

// uncovered returns the entries of next that no entry of prev covers.
func uncovered(prev, next []string, covers func(p, v string) bool) []string {
	var out []string
	for _, v := range next {
		if !anyCovers(prev, v, covers) {
			out = append(out, v)
		}
	}
	return out
}

// secretGrantCovers: a granted "<scope>/<key>" covers another when the
// scopes are equal and its key, as a glob, covers the other key.
func secretGrantCovers(p, v string) bool {
	ps, pk, ok1 := splitSecret(p)
	vs, vk, ok2 := splitSecret(v)
	return ok1 && ok2 && ps == vs && glob(pk, vk)
}

// prefixGrantCovers: a granted prefix covers itself and the prefixes below
// it; a granted wildcard prefix covers only itself, unless it is "*".
func prefixGrantCovers(p, v string) bool {
	if p != Wildcard && strings.Contains(p, "*") {
		return p == v
	}
	return prefixCovers(p, v)
}

// Empty reports whether next is granted nothing beyond prev.
func (e Escalation) Empty() bool { return len(e.Lines()) == 0 }

// Lines returns one line per escalation, for printing:
//
//   - http host api2.example.com
//   - secret skill:acme.echo_http/api_token
//   - storage prefix skills/cache
//   - storage writable skills/cache
//   - channel ops-alerts
//   - device capability camera
//   - node capability gpu
//   - http scheme http
//   - http port 8443
//   - http private addresses allowed
//   - fuel 10000000 -> 20000000
//
// It returns an empty slice when e is empty.
func (e Escalation) Lines() []string {
	out := []string{}
	add := func(what string, list []string) {
		for _, v := range list {
			out = append(out, "+ "+what+" "+v)
		}
	}
	add("http host", e.HTTPHosts)
	add("secret", e.SecretKeys)
	add("storage prefix", e.StoragePrefixes)
	add("storage writable", e.StorageWritable)
	add("channel", e.Channels)
	add("device capability", e.DeviceCapabilities)
	add("node capability", e.NodeCapabilities)
	add("http scheme", e.HTTPSchemes)
	for _, port := range e.HTTPPorts {
		out = append(out, "+ http port "+strconv.Itoa(port))
	}
	if e.AllowPrivate {
		out = append(out, "+ http private addresses allowed")
	}
	for _, r := range e.Raised {
		out = append(out, "+ "+r.Name+" "+strconv.FormatUint(r.Old, 10)+" -> "+strconv.FormatUint(r.New, 10))
	}
	return out
}

// Err returns nil when e is empty, else an *EscalationError wrapping
// ErrCapabilityEscalation.
func (e Escalation) Err() error {
	if e.Empty() {
		return nil
	}
	return &EscalationError{Escalation: e}
}
