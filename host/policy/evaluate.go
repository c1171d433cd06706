package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/internal/skillpath"
	"github.com/palyra-go/palyra/host/manifest"
)

// Decision is the outcome of evaluating a manifest against a profile: what
// the skill is granted, the limits of each invocation, and every request
// that falls outside the profile. A Decision with violations is not allowed
// to run; the installer quarantines the skill with Reasons.
type Decision struct {
	// Grants are the manifest's requests that the profile allows.
	Grants Grants `json:"grants"`
	// Limits are the per-invocation limits: min(manifest quota, profile cap).
	Limits Limits `json:"limits"`
	// Violations are the requests outside the profile, in manifest order
	// (capabilities.filesystem, http_egress_allowlist, secrets,
	// device_capabilities, node_capabilities, capabilities.channels, quotas,
	// wildcard_opt_in; list entries by index). Never nil.
	Violations []Violation `json:"violations"`
	// Ignored are manifest entries that grant nothing at run time and are
	// not violations: a read root that is also a write root (the write
	// grant covers it). Never nil.
	Ignored []Ignored `json:"ignored"`
}

// Grants are the capabilities of a skill. Each list is canonical (trimmed,
// no empties, sorted byte-wise, no repeats): position i of a list is handle
// base+i of ABI §2.1 (http 10000, secrets 20000, storage 30000, channels
// 40000). No slice is nil.
type Grants struct {
	// HTTPHosts are hosts ("api.example.com") and, with
	// capabilities.allow_wildcards, host patterns ("*.example.com", "*"),
	// lower-cased and without trailing dots.
	HTTPHosts []string `json:"http_hosts"`
	// SecretKeys are "<scope>/<key>" ("skill:acme.echo_http/api_token");
	// with capabilities.allow_wildcards the key may hold '*'.
	SecretKeys []string `json:"secret_keys"`
	// StoragePrefixes are the manifest's write roots and read roots,
	// normalized by the artifact path rule; each is a view of the skill's
	// own key space (there is no file system access).
	StoragePrefixes []string `json:"storage_prefixes"`
	// StorageReadOnly are the prefixes of StoragePrefixes that come from
	// read roots only: the broker refuses put and delete through them.
	StorageReadOnly []string `json:"storage_read_only"`
	// SecretRead is secrets.allow_read: the guest may read secret values,
	// not only have them injected into HTTP requests.
	SecretRead bool `json:"secret_read"`
	// Channels are channel names.
	Channels []string `json:"channels"`
	// DeviceCapabilities and NodeCapabilities are granted when the profile
	// allows them. They have no handles in ABI v1; they are kept so that an
	// upgrade that adds one is seen by Diff.
	DeviceCapabilities []string `json:"device_capabilities"`
	NodeCapabilities   []string `json:"node_capabilities"`
	// HTTP are the rules the broker applies to every HTTP request.
	HTTP HTTPRules `json:"http"`
}

// HTTPRules are the profile's HTTP rules, as the broker applies them.
type HTTPRules struct {
	// Schemes are "http" and/or "https", sorted.
	Schemes []string `json:"schemes"`
	// Ports are the allowed destination ports, sorted.
	Ports []int `json:"ports"`
	// AllowPrivate lets requests reach loopback, private, link-local, CGNAT
	// and metadata addresses.
	AllowPrivate bool `json:"allow_private"`
	// MaxRedirects is how many redirects are followed, each checked again.
	MaxRedirects int64 `json:"max_redirects"`
	// PrivateNetworks are non-public networks requests may reach even
	// without AllowPrivate (http.allowed_private_networks).
	PrivateNetworks []netip.Prefix `json:"private_networks"`
	// MaxRequestBytes and MaxResponseBytes bound the bodies.
	MaxRequestBytes  int64 `json:"max_request_bytes"`
	MaxResponseBytes int64 `json:"max_response_bytes"`
	// RequestTimeout bounds one request, redirects included.
	RequestTimeout time.Duration `json:"request_timeout_ns"`
	// MaxRequestsPerInvocation and MaxBytesPerInvocation are the egress
	// budget of one tool call (redirect hops count as requests; bytes are
	// bodies sent plus received).
	MaxRequestsPerInvocation int64 `json:"max_requests_per_invocation"`
	MaxBytesPerInvocation    int64 `json:"max_bytes_per_invocation"`
}

// Limits bound one invocation of the skill.
type Limits struct {
	// Fuel, MaxMemoryBytes and WallClock are min(manifest quota, profile
	// cap). A manifest quota of 0 counts as the manifest default.
	Fuel           uint64        `json:"fuel"`
	MaxMemoryBytes uint64        `json:"max_memory_bytes"`
	WallClock      time.Duration `json:"wall_clock_ns"`
	// The manifest cannot set these; they are the profile's caps.
	MaxTableElements   int64 `json:"max_table_elements"`
	MaxInstances       int64 `json:"max_instances"`
	MaxCapabilityCalls int64 `json:"max_capability_calls"`
	// MaxStorageBytes bounds the total size of the skill's stored keys and
	// values (storage.max_bytes_per_skill); MaxStorageKeys their number
	// (storage.max_keys_per_skill).
	MaxStorageBytes int64 `json:"max_storage_bytes"`
	MaxStorageKeys  int64 `json:"max_storage_keys"`
}

// Violation is one manifest request outside the profile.
type Violation struct {
	// Capability is the manifest field at fault, with its index:
	// "capabilities.http_egress_allowlist[1]",
	// "capabilities.secrets[0].key_names[2]", "capabilities.quotas.fuel_budget".
	Capability string `json:"capability"`
	// Value is the value requested, as the grant would be named (a secret
	// as "<scope>/<key>", a quota as a decimal number).
	Value string `json:"value"`
	// Reason says why it is refused, naming the profile key that decides.
	Reason string `json:"reason"`
}

// String returns `<capability> "<value>": <reason>`.
func (v Violation) String() string {
	return v.Capability + " " + strconv.Quote(v.Value) + ": " + v.Reason
}

// Ignored is one manifest entry that grants nothing and is not refused.
type Ignored struct {
	Capability string `json:"capability"`
	Value      string `json:"value"`
	Reason     string `json:"reason"`
}

// String returns `<capability> "<value>": <reason>`.
func (i Ignored) String() string {
	return i.Capability + " " + strconv.Quote(i.Value) + ": " + i.Reason
}

// Allowed reports whether the decision has no violations.
func (d *Decision) Allowed() bool { return len(d.Violations) == 0 }

// Reasons returns one line per violation, in order:
//
//	policy_violation: capabilities.http_egress_allowlist[1] "evil.example.org": host not allowed by the operator profile (http.allowed_hosts)
//
// It returns an empty slice when the decision is allowed.
func (d *Decision) Reasons() []string {
	out := make([]string, len(d.Violations))
	for i, v := range d.Violations {
		out[i] = ErrViolation.Code() + ": " + v.String()
	}
	return out
}

// Err returns nil when the decision is allowed, else a *ViolationError
// (wrapping ErrViolation) with a copy of the violations.
func (d *Decision) Err() error {
	if d.Allowed() {
		return nil
	}
	return &ViolationError{Violations: append([]Violation(nil), d.Violations...)}
}

// errNilManifest is returned by Evaluate for a nil manifest: a programming
// error, not a policy outcome.
var errNilManifest = errors.New("policy: evaluate: nil manifest")

// Evaluate decides what m is granted under p: each capability the manifest
// requests is granted when the profile covers it, and is a violation
// otherwise; limits are min(manifest quota, profile cap), and a quota above
// its cap is also a violation. The returned Decision is never nil when err
// is nil. err is non-nil only when p is invalid (a *ProfileError) or m is
// nil; violations are not errors, see Decision.Err.
//
// The rules, per manifest field:
//   - filesystem.write_roots: storage prefixes, covered by
//     storage.allowed_prefixes.
//   - filesystem.read_roots: read-only storage prefixes, covered the same
//     way (one that is also a write root is Ignored).
//   - capabilities.channels: covered by channels.allowed.
//   - http_egress_allowlist: covered by http.allowed_hosts.
//   - secrets: each "<scope>/<key>" covered by secrets.allowed.
//   - device_capabilities, node_capabilities: need capabilities.allow_device
//     or allow_node.
//   - any '*' in the above, and any wildcard_opt_in flag set, needs
//     capabilities.allow_wildcards; a wildcard entry must still be covered
//     by a pattern (an exact profile entry never covers a wildcard).
//   - quotas: each at most its cap in [quotas].
//
// Evaluate does not modify p or m and is safe for concurrent use.
func (p *Profile) Evaluate(m *manifest.Manifest) (*Decision, error) {
	if m == nil {
		return nil, errNilManifest
	}
	r, err := p.compile()
	if err != nil {
		return nil, err
	}
	e := &evaluation{p: p, r: r, d: &Decision{Violations: []Violation{}, Ignored: []Ignored{}}}
	c := &m.Capabilities
	storage := e.writeRoots(c.Filesystem.WriteRoots)
	readOnly := e.readRoots(c.Filesystem.ReadRoots, storage)
	hosts := e.hosts(c.HTTPEgressAllowlist)
	secrets := e.secrets(strings.TrimSpace(m.SkillID), c.Secrets)
	device := e.flagged("capabilities.device_capabilities", c.DeviceCapabilities, p.Capabilities.AllowDevice, "device capability", "capabilities.allow_device")
	node := e.flagged("capabilities.node_capabilities", c.NodeCapabilities, p.Capabilities.AllowNode, "node capability", "capabilities.allow_node")
	channels := e.channels(m.CapabilityGrants().Channels)
	e.d.Limits = e.limits(&c.Quotas)
	e.optIns(&c.WildcardOptIn)

	hr := r.httpRules(p)
	e.d.Grants = Grants{
		HTTPHosts:          canonical(hosts),
		SecretKeys:         canonical(secrets),
		StoragePrefixes:    canonical(append(storage, readOnly...)),
		StorageReadOnly:    canonical(readOnly),
		SecretRead:         p.Secrets.AllowRead,
		Channels:           canonical(channels),
		DeviceCapabilities: canonical(device),
		NodeCapabilities:   canonical(node),
		HTTP:               hr,
	}
	return e.d, nil
}

// HTTPRules returns the HTTP rules the broker applies under p (the same as
// every Decision's Grants.HTTP), for requests the host makes itself, such
// as webhook channels. It fails only for an invalid profile.
func (p *Profile) HTTPRules() (HTTPRules, error) {
	r, err := p.compile()
	if err != nil {
		return HTTPRules{}, err
	}
	return r.httpRules(p), nil
}

func (r *rules) httpRules(p *Profile) HTTPRules {
	return HTTPRules{
		Schemes:          append([]string{}, r.schemes...),
		Ports:            append([]int{}, r.ports...),
		AllowPrivate:     p.HTTP.AllowPrivate,
		PrivateNetworks:  append([]netip.Prefix{}, r.privateNets...),
		MaxRedirects:     p.HTTP.MaxRedirects,
		MaxRequestBytes:  p.HTTP.MaxRequestBytes,
		MaxResponseBytes: p.HTTP.MaxResponseBytes,
		RequestTimeout:   time.Duration(p.HTTP.RequestTimeoutMS) * time.Millisecond,

		MaxRequestsPerInvocation: p.HTTP.MaxRequestsPerInvocation,
		MaxBytesPerInvocation:    p.HTTP.MaxBytesPerInvocation,
	}
}

// evaluation is the state of one Evaluate call.
type evaluation struct {
	p *Profile
	r *rules
	d *Decision
}

func (e *evaluation) violate(capability, value, format string, args ...any) {
	e.d.Violations = append(e.d.Violations, Violation{Capability: capability, Value: value, Reason: fmt.Sprintf(format, args...)})
}

func index(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// wildcardRefused records a violation and returns true when value holds a
// '*' and the profile does not allow wildcards.
func (e *evaluation) wildcardRefused(path, value, kind string) bool {
	if !strings.Contains(value, "*") || e.p.Capabilities.AllowWildcards {
		return false
	}
	e.violate(path, value, "wildcard %s not allowed by the operator profile (capabilities.allow_wildcards = false)", kind)
	return true
}

// readRoots grants the read roots the profile covers as read-only storage
// prefixes. A read root that is also a granted write root adds nothing
// (the write grant reads too) and is recorded as Ignored.
func (e *evaluation) readRoots(roots, writable []string) []string {
	granted := e.storageRoots("capabilities.filesystem.read_roots", roots, "read root")
	var readOnly []string
	for i, v := range granted {
		if slices.Contains(writable, v) {
			e.d.Ignored = append(e.d.Ignored, Ignored{
				Capability: index("capabilities.filesystem.read_roots", i),
				Value:      v,
				Reason:     "also a write root: the write grant reads and writes",
			})
			continue
		}
		readOnly = append(readOnly, v)
	}
	return readOnly
}

func (e *evaluation) writeRoots(roots []string) []string {
	return e.storageRoots("capabilities.filesystem.write_roots", roots, "write root")
}

// storageRoots grants the roots (storage prefixes) the profile covers.
func (e *evaluation) storageRoots(field string, roots []string, kind string) []string {
	var granted []string
	for i, raw := range roots {
		path := index(field, i)
		v, err := skillpath.Normalize(raw)
		if err != nil {
			e.violate(path, strings.TrimSpace(raw), "invalid storage prefix: %s", pathReason(err))
			continue
		}
		if e.wildcardRefused(path, v, kind) {
			continue
		}
		if !anyCovers(e.r.prefixes, v, prefixCovers) {
			e.violate(path, v, "storage prefix not allowed by the operator profile (storage.allowed_prefixes)")
			continue
		}
		granted = append(granted, v)
	}
	return granted
}

func (e *evaluation) hosts(hosts []string) []string {
	var granted []string
	for i, raw := range hosts {
		path := index("capabilities.http_egress_allowlist", i)
		v := normHost(raw)
		if e.wildcardRefused(path, v, "host") {
			continue
		}
		if reason := hostPatternReason(v); reason != "" {
			e.violate(path, v, "invalid host: %s", reason)
			continue
		}
		if !anyCovers(e.r.hosts, v, hostCovers) {
			e.violate(path, v, "host not allowed by the operator profile (http.allowed_hosts)")
			continue
		}
		granted = append(granted, v)
	}
	return granted
}

// secrets grants the manifest's secret keys that the profile covers. A key in
// another skill's scope (skill:<other id>) is covered only by a pattern that
// names that scope without a '*': a broad pattern such as the default "*/*"
// or "skill:*/api_token" lets a skill use secrets of its own scope, never a
// neighbour's.
func (e *evaluation) secrets(skillID string, scopes []manifest.SecretScope) []string {
	var granted []string
	for i, s := range scopes {
		scope := strings.TrimSpace(s.Scope)
		for j, k := range s.KeyNames {
			path := index(index("capabilities.secrets", i)+".key_names", j)
			key := strings.TrimSpace(k)
			v := scope + "/" + key
			if e.wildcardRefused(path, v, "secret key") {
				continue
			}
			if reason := scopeReason(scope, false); reason != "" {
				e.violate(path, v, "invalid secret: %s", reason)
				continue
			}
			if reason := globReason("key", key, true); reason != "" {
				e.violate(path, v, "invalid secret: %s", reason)
				continue
			}
			other, foreign := strings.CutPrefix(scope, "skill:")
			foreign = foreign && other != skillID
			covered := false
			for _, pat := range e.r.secrets {
				if pat.covers(scope, key) && (!foreign || !strings.Contains(pat.scope, "*")) {
					covered = true
					break
				}
			}
			if !covered && foreign {
				e.violate(path, v, "secret of another skill's scope: allowed only when the operator profile names scope %q explicitly (secrets.allowed)", scope)
				continue
			}
			if !covered {
				e.violate(path, v, "secret not allowed by the operator profile (secrets.allowed)")
				continue
			}
			granted = append(granted, v)
		}
	}
	return granted
}

// flagged handles device and node capabilities: allowed only with the
// profile flag, and a '*' only with allow_wildcards.
func (e *evaluation) flagged(field string, list []string, allowed bool, kind, flag string) []string {
	var granted []string
	for i, raw := range list {
		path := index(field, i)
		v := strings.TrimSpace(raw)
		if !allowed {
			e.violate(path, v, "%s not allowed by the operator profile (%s = false)", kind, flag)
			continue
		}
		if e.wildcardRefused(path, v, kind) {
			continue
		}
		granted = append(granted, v)
	}
	return granted
}

// channels evaluates capabilities.channels (a Palyra-Go extension: Palyra's
// manifest has no channel field and derives no channel grant).
func (e *evaluation) channels(requested []string) []string {
	var granted []string
	for i, raw := range requested {
		path := index("capabilities.channels", i)
		v := strings.TrimSpace(raw)
		if e.wildcardRefused(path, v, "channel") {
			continue
		}
		if !anyCovers(e.r.channels, v, exactCovers) {
			e.violate(path, v, "channel not allowed by the operator profile (channels.allowed)")
			continue
		}
		granted = append(granted, v)
	}
	return granted
}

func anyCovers(patterns []string, v string, covers func(p, v string) bool) bool {
	for _, p := range patterns {
		if covers(p, v) {
			return true
		}
	}
	return false
}

func (e *evaluation) limits(q *manifest.Quotas) Limits {
	capped := func(field string, requested, manifestDefault uint64, capKey string, limit int64) uint64 {
		if requested == 0 {
			requested = manifestDefault
		}
		if c := uint64(limit); requested > c {
			e.violate("capabilities.quotas."+field, strconv.FormatUint(requested, 10),
				"above the operator profile's cap (%s = %d)", capKey, c)
			return c
		}
		return requested
	}
	pq := &e.p.Quotas
	wallMS := capped("wall_clock_timeout_ms", q.WallClockTimeoutMS, manifest.DefaultWallClockTimeoutMS, "quotas.max_wall_clock_ms", pq.MaxWallClockMS)
	fuel := capped("fuel_budget", q.FuelBudget, manifest.DefaultFuelBudget, "quotas.max_fuel", pq.MaxFuel)
	mem := capped("max_memory_bytes", q.MaxMemoryBytes, manifest.DefaultMaxMemoryBytes, "quotas.max_memory_bytes", pq.MaxMemoryBytes)
	return Limits{
		Fuel:               fuel,
		MaxMemoryBytes:     mem,
		WallClock:          time.Duration(wallMS) * time.Millisecond,
		MaxTableElements:   pq.MaxTableElements,
		MaxInstances:       pq.MaxInstances,
		MaxCapabilityCalls: pq.MaxCapabilityCalls,
		MaxStorageBytes:    e.p.Storage.MaxBytesPerSkill,
		MaxStorageKeys:     e.p.Storage.MaxKeysPerSkill,
	}
}

func (e *evaluation) optIns(o *manifest.WildcardOptIn) {
	if e.p.Capabilities.AllowWildcards {
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"filesystem", o.Filesystem},
		{"http_egress", o.HTTPEgress},
		{"secrets", o.Secrets},
		{"device", o.Device},
		{"node", o.Node},
	} {
		if f.set {
			e.violate("capabilities.wildcard_opt_in."+f.name, "true",
				"wildcard opt-in not allowed by the operator profile (capabilities.allow_wildcards = false)")
		}
	}
}

// ApprovalClasses returns the capability classes of Capabilities.
// RequireApproval that g holds something of (a class counts when the skill
// is granted at least one host, secret key, storage prefix, channel,
// device or node capability), in the order of the package's
// ApprovalClasses. A skill with any is one whose calls need a human's
// approval. Names are judged trimmed and lower-cased; unknown ones (which
// Validate refuses) count for nothing.
func (p *Profile) ApprovalClasses(g Grants) []string {
	if p == nil || len(p.Capabilities.RequireApproval) == 0 {
		return nil
	}
	held := map[string]bool{
		ClassHTTP:     len(g.HTTPHosts) > 0,
		ClassSecrets:  len(g.SecretKeys) > 0,
		ClassStorage:  len(g.StoragePrefixes) > 0,
		ClassChannels: len(g.Channels) > 0,
		ClassDevice:   len(g.DeviceCapabilities) > 0,
		ClassNode:     len(g.NodeCapabilities) > 0,
	}
	var out []string
	for _, c := range ApprovalClasses {
		if held[c] && slices.ContainsFunc(p.Capabilities.RequireApproval, func(s string) bool { return asciiLower(strings.TrimSpace(s)) == c }) {
			out = append(out, c)
		}
	}
	return out
}
