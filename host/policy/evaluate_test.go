package policy

import (
	"errors"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

func TestDefaultProfileOnEchoExample(t *testing.T) {
	d := evaluate(t, Default(), echoManifest(t))
	wantGrants := Grants{
		HTTPHosts:          []string{"api.example.com"},
		SecretKeys:         []string{"skill:acme.echo_http/api_token"},
		StoragePrefixes:    []string{"skills/cache", "skills/data"},
		StorageReadOnly:    []string{"skills/data"},
		Channels:           []string{},
		DeviceCapabilities: []string{},
		NodeCapabilities:   []string{},
		HTTP: HTTPRules{
			Schemes: []string{"https"}, Ports: []int{443}, AllowPrivate: false, MaxRedirects: 5,
			PrivateNetworks: []netip.Prefix{},
			MaxRequestBytes: 1 << 20, MaxResponseBytes: 4 << 20, RequestTimeout: 10 * time.Second,
			MaxRequestsPerInvocation: 32, MaxBytesPerInvocation: 16 << 20,
		},
	}
	if !reflect.DeepEqual(d.Grants, wantGrants) {
		t.Errorf("Grants:\n got %+v\nwant %+v", d.Grants, wantGrants)
	}
	wantLimits := Limits{
		Fuel: 5_000_000, MaxMemoryBytes: 33_554_432, WallClock: 2000 * time.Millisecond,
		MaxTableElements: 100_000, MaxInstances: 16, MaxCapabilityCalls: 256, MaxStorageBytes: 64 << 20, MaxStorageKeys: 10_000,
	}
	if d.Limits != wantLimits {
		t.Errorf("Limits:\n got %+v\nwant %+v", d.Limits, wantLimits)
	}
	if !d.Allowed() || len(d.Violations) != 0 || d.Err() != nil || len(d.Reasons()) != 0 {
		t.Errorf("violations: %v", d.Reasons())
	}
	if len(d.Ignored) != 0 {
		t.Errorf("Ignored = %+v", d.Ignored)
	}
}

// The example profile allows the echo skill through patterns: a scoped
// secret through "skill:*/api_token" (Palyra's runner rejects every scoped
// secret: its identifier rule has no ':') and its storage prefix exactly.
func TestExampleProfileOnEchoExample(t *testing.T) {
	p, err := Load(filepath.FromSlash(exampleProfilePath))
	if err != nil {
		t.Fatal(err)
	}
	d := evaluate(t, p, echoManifest(t))
	if !d.Allowed() {
		t.Fatalf("violations: %v", d.Reasons())
	}
	if got := d.Grants.SecretKeys; !slices.Equal(got, []string{"skill:acme.echo_http/api_token"}) {
		t.Errorf("SecretKeys = %v", got)
	}
	if got := d.Grants.HTTPHosts; !slices.Equal(got, []string{"api.example.com"}) {
		t.Errorf("HTTPHosts = %v", got)
	}
	if got := d.Grants.StoragePrefixes; !slices.Equal(got, []string{"skills/cache", "skills/data"}) {
		t.Errorf("StoragePrefixes = %v", got)
	}
	if got := d.Grants.StorageReadOnly; !slices.Equal(got, []string{"skills/data"}) {
		t.Errorf("StorageReadOnly = %v", got)
	}
}

func TestDefaultProfileGrantsExactlyTheManifest(t *testing.T) {
	m := withCaps(t, manifest.Capabilities{
		HTTPEgressAllowlist: []string{"b.example.com", "a.example.com", "b.example.com"},
		Secrets: []manifest.SecretScope{
			{Scope: "global", KeyNames: []string{"z", "a"}},
			{Scope: "principal:admin:ops", KeyNames: []string{"token"}},
			{Scope: "channel:ops", KeyNames: []string{"hook"}},
		},
		Filesystem: manifest.Filesystem{WriteRoots: []string{"z", `a\b`, "z"}},
	})
	d := evaluate(t, Default(), m)
	if !d.Allowed() {
		t.Fatalf("violations: %v", d.Reasons())
	}
	want := m.CapabilityGrants()
	if !slices.Equal(d.Grants.HTTPHosts, canonical(want.HTTPHosts)) ||
		!slices.Equal(d.Grants.SecretKeys, canonical(want.SecretKeys)) ||
		!slices.Equal(d.Grants.StoragePrefixes, canonical(want.StoragePrefixes)) ||
		!slices.Equal(d.Grants.Channels, canonical(want.Channels)) {
		t.Fatalf("Grants %+v differ from the manifest's %+v", d.Grants, want)
	}
	if !slices.Equal(d.Grants.StoragePrefixes, []string{"a/b", "z"}) {
		t.Fatalf("StoragePrefixes = %v", d.Grants.StoragePrefixes)
	}
}

func TestGrantsCanonical(t *testing.T) {
	m := withCaps(t, manifest.Capabilities{
		HTTPEgressAllowlist: []string{" API.Example.COM. ", "api.example.com", "b.example.com"},
		Secrets:             []manifest.SecretScope{{Scope: " global ", KeyNames: []string{" k ", "k"}}},
	})
	d := evaluate(t, Default(), m)
	if !slices.Equal(d.Grants.HTTPHosts, []string{"api.example.com", "b.example.com"}) {
		t.Errorf("HTTPHosts = %q", d.Grants.HTTPHosts)
	}
	if !slices.Equal(d.Grants.SecretKeys, []string{"global/k"}) {
		t.Errorf("SecretKeys = %q", d.Grants.SecretKeys)
	}
}

func TestViolations(t *testing.T) {
	allowAll := func(p *Profile) {
		p.Capabilities = Capabilities{AllowDevice: true, AllowNode: true, AllowWildcards: true}
	}
	tests := []struct {
		name    string
		profile func(p *Profile)
		caps    manifest.Capabilities
		want    []Violation
	}{
		{
			name:    "host not allowed",
			profile: func(p *Profile) { p.HTTP.AllowedHosts = []string{"api.example.com"} },
			caps:    manifest.Capabilities{HTTPEgressAllowlist: []string{"api.example.com", "evil.example.org"}},
			want:    []Violation{{"capabilities.http_egress_allowlist[1]", "evil.example.org", "host not allowed by the operator profile (http.allowed_hosts)"}},
		},
		{
			name: "wildcard host without allow_wildcards",
			caps: manifest.Capabilities{HTTPEgressAllowlist: []string{"*.example.com", "*"}},
			want: []Violation{
				{"capabilities.http_egress_allowlist[0]", "*.example.com", "wildcard host not allowed by the operator profile (capabilities.allow_wildcards = false)"},
				{"capabilities.http_egress_allowlist[1]", "*", "wildcard host not allowed by the operator profile (capabilities.allow_wildcards = false)"},
			},
		},
		{
			name:    "malformed wildcard host",
			profile: allowAll,
			caps:    manifest.Capabilities{HTTPEgressAllowlist: []string{"foo*.example.com"}},
			want:    []Violation{{"capabilities.http_egress_allowlist[0]", "foo*.example.com", `invalid host: a wildcard host must be "*" or "*.<domain>"`}},
		},
		{
			name: "invalid host in a hand-built manifest",
			caps: manifest.Capabilities{HTTPEgressAllowlist: []string{"https://a.com/x"}},
			want: []Violation{{"capabilities.http_egress_allowlist[0]", "https://a.com/x", "invalid host: must be a bare host name (a-z, 0-9, '.' and '-'; no scheme, port or path), found ':'"}},
		},
		{
			name:    "secret not allowed",
			profile: func(p *Profile) { p.Secrets.Allowed = []string{"skill:*/api_token"} },
			caps: manifest.Capabilities{Secrets: []manifest.SecretScope{
				{Scope: "skill:acme.echo_http", KeyNames: []string{"api_token", "db_password"}},
				{Scope: "global", KeyNames: []string{"api_token"}},
			}},
			want: []Violation{
				{"capabilities.secrets[0].key_names[1]", "skill:acme.echo_http/db_password", "secret not allowed by the operator profile (secrets.allowed)"},
				{"capabilities.secrets[1].key_names[0]", "global/api_token", "secret not allowed by the operator profile (secrets.allowed)"},
			},
		},
		{
			name: "another skill's secret scope under the default profile",
			caps: manifest.Capabilities{Secrets: []manifest.SecretScope{
				{Scope: "skill:acme.echo_http", KeyNames: []string{"api_token"}},
				{Scope: "skill:acme.billing", KeyNames: []string{"api_token"}},
			}},
			want: []Violation{{"capabilities.secrets[1].key_names[0]", "skill:acme.billing/api_token",
				`secret of another skill's scope: allowed only when the operator profile names scope "skill:acme.billing" explicitly (secrets.allowed)`}},
		},
		{
			name:    "another skill's secret scope named explicitly",
			profile: func(p *Profile) { p.Secrets.Allowed = []string{"skill:*/api_token", "skill:acme.billing/*"} },
			caps: manifest.Capabilities{Secrets: []manifest.SecretScope{
				{Scope: "skill:acme.billing", KeyNames: []string{"api_token"}},
			}},
			want: []Violation{},
		},
		{
			name: "wildcard secret key",
			caps: manifest.Capabilities{Secrets: []manifest.SecretScope{{Scope: "global", KeyNames: []string{"api_*"}}}},
			want: []Violation{{"capabilities.secrets[0].key_names[0]", "global/api_*", "wildcard secret key not allowed by the operator profile (capabilities.allow_wildcards = false)"}},
		},
		{
			name: "invalid secret scope",
			caps: manifest.Capabilities{Secrets: []manifest.SecretScope{{Scope: "vault", KeyNames: []string{"k"}}}},
			want: []Violation{{"capabilities.secrets[0].key_names[0]", "vault/k", `invalid secret: scope must be "global", "principal:<id>", "channel:<id>" or "skill:<id>"`}},
		},
		{
			name:    "storage prefix not allowed",
			profile: func(p *Profile) { p.Storage.AllowedPrefixes = []string{"skills"} },
			caps:    manifest.Capabilities{Filesystem: manifest.Filesystem{WriteRoots: []string{"skills/cache", "skillset", "other"}}},
			want: []Violation{
				{"capabilities.filesystem.write_roots[1]", "skillset", "storage prefix not allowed by the operator profile (storage.allowed_prefixes)"},
				{"capabilities.filesystem.write_roots[2]", "other", "storage prefix not allowed by the operator profile (storage.allowed_prefixes)"},
			},
		},
		{
			name: "wildcard write root",
			caps: manifest.Capabilities{Filesystem: manifest.Filesystem{WriteRoots: []string{"*"}}},
			want: []Violation{{"capabilities.filesystem.write_roots[0]", "*", "wildcard write root not allowed by the operator profile (capabilities.allow_wildcards = false)"}},
		},
		{
			name: "invalid write root",
			caps: manifest.Capabilities{Filesystem: manifest.Filesystem{WriteRoots: []string{"../etc"}}},
			want: []Violation{{"capabilities.filesystem.write_roots[0]", "../etc", `invalid storage prefix: path segment ".."`}},
		},
		{
			name: "device capability",
			caps: manifest.Capabilities{DeviceCapabilities: []string{"camera"}},
			want: []Violation{{"capabilities.device_capabilities[0]", "camera", "device capability not allowed by the operator profile (capabilities.allow_device = false)"}},
		},
		{
			name: "node capability",
			caps: manifest.Capabilities{NodeCapabilities: []string{"gpu"}},
			want: []Violation{{"capabilities.node_capabilities[0]", "gpu", "node capability not allowed by the operator profile (capabilities.allow_node = false)"}},
		},
		{
			name:    "wildcard device capability with allow_device only",
			profile: func(p *Profile) { p.Capabilities.AllowDevice = true },
			caps:    manifest.Capabilities{DeviceCapabilities: []string{"camera", "*"}},
			want:    []Violation{{"capabilities.device_capabilities[1]", "*", "wildcard device capability not allowed by the operator profile (capabilities.allow_wildcards = false)"}},
		},
		{
			name: "wildcard opt-ins, even unused",
			caps: manifest.Capabilities{WildcardOptIn: manifest.WildcardOptIn{Filesystem: true, HTTPEgress: true, Secrets: true, Device: true, Node: true}},
			want: []Violation{
				{"capabilities.wildcard_opt_in.filesystem", "true", "wildcard opt-in not allowed by the operator profile (capabilities.allow_wildcards = false)"},
				{"capabilities.wildcard_opt_in.http_egress", "true", "wildcard opt-in not allowed by the operator profile (capabilities.allow_wildcards = false)"},
				{"capabilities.wildcard_opt_in.secrets", "true", "wildcard opt-in not allowed by the operator profile (capabilities.allow_wildcards = false)"},
				{"capabilities.wildcard_opt_in.device", "true", "wildcard opt-in not allowed by the operator profile (capabilities.allow_wildcards = false)"},
				{"capabilities.wildcard_opt_in.node", "true", "wildcard opt-in not allowed by the operator profile (capabilities.allow_wildcards = false)"},
			},
		},
		{
			name:    "everything allowed",
			profile: allowAll,
			caps: manifest.Capabilities{
				HTTPEgressAllowlist: []string{"*"}, DeviceCapabilities: []string{"*"}, NodeCapabilities: []string{"n"},
				Secrets:       []manifest.SecretScope{{Scope: "global", KeyNames: []string{"*"}}},
				Filesystem:    manifest.Filesystem{WriteRoots: []string{"*"}},
				WildcardOptIn: manifest.WildcardOptIn{Filesystem: true, HTTPEgress: true, Secrets: true, Device: true, Node: true},
			},
			want: []Violation{},
		},
		{
			name: "quotas above the caps",
			caps: manifest.Capabilities{Quotas: manifest.Quotas{WallClockTimeoutMS: 60_001, FuelBudget: 100_000_001, MaxMemoryBytes: 256<<20 + 1}},
			want: []Violation{
				{"capabilities.quotas.wall_clock_timeout_ms", "60001", "above the operator profile's cap (quotas.max_wall_clock_ms = 60000)"},
				{"capabilities.quotas.fuel_budget", "100000001", "above the operator profile's cap (quotas.max_fuel = 100000000)"},
				{"capabilities.quotas.max_memory_bytes", "268435457", "above the operator profile's cap (quotas.max_memory_bytes = 268435456)"},
			},
		},
		{
			name: "order follows the manifest",
			caps: manifest.Capabilities{
				WildcardOptIn:       manifest.WildcardOptIn{Node: true},
				Quotas:              manifest.Quotas{WallClockTimeoutMS: 1, FuelBudget: 1 << 40, MaxMemoryBytes: 1 << 20},
				NodeCapabilities:    []string{"n"},
				DeviceCapabilities:  []string{"d"},
				Secrets:             []manifest.SecretScope{{Scope: "global", KeyNames: []string{"k*"}}},
				HTTPEgressAllowlist: []string{"*.x.com"},
				Filesystem:          manifest.Filesystem{ReadRoots: []string{"r"}, WriteRoots: []string{"*"}},
			},
			want: []Violation{
				{"capabilities.filesystem.write_roots[0]", "*", "wildcard write root not allowed by the operator profile (capabilities.allow_wildcards = false)"},
				{"capabilities.http_egress_allowlist[0]", "*.x.com", "wildcard host not allowed by the operator profile (capabilities.allow_wildcards = false)"},
				{"capabilities.secrets[0].key_names[0]", "global/k*", "wildcard secret key not allowed by the operator profile (capabilities.allow_wildcards = false)"},
				{"capabilities.device_capabilities[0]", "d", "device capability not allowed by the operator profile (capabilities.allow_device = false)"},
				{"capabilities.node_capabilities[0]", "n", "node capability not allowed by the operator profile (capabilities.allow_node = false)"},
				{"capabilities.quotas.fuel_budget", "1099511627776", "above the operator profile's cap (quotas.max_fuel = 100000000)"},
				{"capabilities.wildcard_opt_in.node", "true", "wildcard opt-in not allowed by the operator profile (capabilities.allow_wildcards = false)"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Default()
			if tt.profile != nil {
				tt.profile(p)
			}
			d := evaluate(t, p, withCaps(t, tt.caps))
			if !reflect.DeepEqual(d.Violations, tt.want) {
				t.Fatalf("Violations:\n got %q\nwant %q", d.Violations, tt.want)
			}
			if d.Allowed() != (len(tt.want) == 0) {
				t.Fatalf("Allowed() = %v with %d violations", d.Allowed(), len(tt.want))
			}
			// A refused entry is never granted.
			for _, v := range d.Violations {
				for _, list := range [][]string{d.Grants.HTTPHosts, d.Grants.SecretKeys, d.Grants.StoragePrefixes, d.Grants.DeviceCapabilities, d.Grants.NodeCapabilities} {
					if strings.HasPrefix(v.Capability, "capabilities.quotas") || strings.HasPrefix(v.Capability, "capabilities.wildcard_opt_in") {
						continue
					}
					if slices.Contains(list, v.Value) {
						t.Errorf("%s is both refused and granted", v.Value)
					}
				}
			}
		})
	}
}

func TestReasonsAndError(t *testing.T) {
	p := profileWith(func(p *Profile) { p.HTTP.AllowedHosts = []string{"api.example.com"} })
	m := withCaps(t, manifest.Capabilities{
		HTTPEgressAllowlist: []string{"api.example.com", "evil.example.org"},
		Quotas:              manifest.Quotas{WallClockTimeoutMS: 1000, FuelBudget: 200_000_000, MaxMemoryBytes: 1 << 20},
	})
	d := evaluate(t, p, m)
	want := []string{
		`policy_violation: capabilities.http_egress_allowlist[1] "evil.example.org": host not allowed by the operator profile (http.allowed_hosts)`,
		`policy_violation: capabilities.quotas.fuel_budget "200000000": above the operator profile's cap (quotas.max_fuel = 100000000)`,
	}
	if got := d.Reasons(); !slices.Equal(got, want) {
		t.Fatalf("Reasons:\n got %q\nwant %q", got, want)
	}
	err := d.Err()
	if !errors.Is(err, ErrViolation) || errcode.Of(err) != "policy_violation" {
		t.Fatalf("Err() = %v (code %s)", err, errcode.Of(err))
	}
	var ve *ViolationError
	if !errors.As(err, &ve) || !reflect.DeepEqual(ve.Violations, d.Violations) {
		t.Fatalf("Err() is not a *ViolationError with the violations: %#v", err)
	}
	wantMsg := `capability request outside the operator profile: capabilities.http_egress_allowlist[1] "evil.example.org": host not allowed by the operator profile (http.allowed_hosts); capabilities.quotas.fuel_budget "200000000": above the operator profile's cap (quotas.max_fuel = 100000000)`
	if err.Error() != wantMsg {
		t.Fatalf("Err().Error() =\n%s\nwant\n%s", err, wantMsg)
	}
	// The error owns its copy.
	ve.Violations[0].Value = "changed"
	if d.Violations[0].Value != "evil.example.org" {
		t.Fatal("Err() shares the decision's violations")
	}
}

func TestHostCoverage(t *testing.T) {
	tests := []struct {
		pattern, host string
		wildcards     bool // profile allow_wildcards
		want          bool
	}{
		{"*", "api.example.com", false, true},
		{"*", "*.example.com", false, false}, // refused as a wildcard
		{"*", "*.example.com", true, true},
		{"*", "*", true, true},
		{"api.example.com", "api.example.com", false, true},
		{"api.example.com", "API.EXAMPLE.COM.", false, true},
		{"API.Example.com.", "api.example.com", false, true},
		{"api.example.com", "example.com", false, false},
		{"api.example.com", "x.api.example.com", false, false},
		{"api.example.com", "*.example.com", true, false}, // exact never covers a wildcard
		{"api.example.com", "*.api.example.com", true, false},
		{"api.example.com", "*", true, false},
		{"*.example.com", "api.example.com", false, true},
		{"*.example.com", "a.b.example.com", false, true},
		{"*.example.com", "example.com", false, false},
		{"*.example.com", "badexample.com", false, false},
		{"*.example.com", "example.com.evil.org", false, false},
		{"*.example.com", "*.example.com", false, false}, // refused as a wildcard
		{"*.example.com", "*.example.com", true, true},
		{"*.example.com", "*.api.example.com", true, true},
		{"*.example.com", "*.badexample.com", true, false},
		{"*.example.com", "*.com", true, false},
		{"*.example.com", "*", true, false},
		{"*.api.example.com", "*.example.com", true, false},
	}
	for _, tt := range tests {
		p := profileWith(func(p *Profile) {
			p.HTTP.AllowedHosts = []string{tt.pattern}
			p.Capabilities.AllowWildcards = tt.wildcards
		})
		d := evaluate(t, p, withCaps(t, manifest.Capabilities{HTTPEgressAllowlist: []string{tt.host}}))
		if got := len(d.Grants.HTTPHosts) == 1; got != tt.want || d.Allowed() != tt.want {
			t.Errorf("profile %q (wildcards %v), manifest %q: granted %v, violations %v; want granted %v",
				tt.pattern, tt.wildcards, tt.host, d.Grants.HTTPHosts, d.Reasons(), tt.want)
		}
	}
}

func TestSecretCoverage(t *testing.T) {
	tests := []struct {
		pattern, scope, key string
		wildcards           bool
		want                bool
	}{
		{"*/*", "skill:acme.echo_http", "api_token", false, true},
		{"*/*", "principal:admin:ops", "k", false, true},
		{"skill:acme.echo_http/api_token", "skill:acme.echo_http", "api_token", false, true},
		{"skill:*/api_token", "skill:acme.echo_http", "api_token", false, true},
		{"skill:*/api_token", "skill:acme.echo_http", "api_tokens", false, false},
		{"skill:*/api_token", "global", "api_token", false, false},
		{"skill:*/api_token", "principal:skill", "api_token", false, false},
		{"skill:acme.*/*", "skill:acme.echo_http", "x", false, true},
		{"skill:acme.*/*", "skill:acmex", "x", false, false},
		{"global/*_key", "global", "openai_api_key", false, true},
		{"global/*_key", "global", "openai_api_key2", false, false},
		{"global/openai_api_key", "global", "openai_api_key", false, true},
		{"*/api_*", "channel:ops", "api_token", false, true},
		// Manifest wildcard keys: covered only by a pattern covering every match.
		{"global/*", "global", "*", true, true},
		{"global/*", "global", "api_*", true, true},
		{"global/api_*", "global", "api_*", true, true},
		{"global/api_*", "global", "api_*_x", true, true},
		{"global/api_*", "global", "*", true, false},
		{"global/api_*", "global", "ap*", true, false},
		{"global/api_token", "global", "api_*", true, false},
		{"global/*", "global", "*", false, false}, // refused as a wildcard
	}
	for _, tt := range tests {
		p := profileWith(func(p *Profile) {
			p.Secrets.Allowed = []string{tt.pattern}
			p.Capabilities.AllowWildcards = tt.wildcards
		})
		m := withCaps(t, manifest.Capabilities{Secrets: []manifest.SecretScope{{Scope: tt.scope, KeyNames: []string{tt.key}}}})
		d := evaluate(t, p, m)
		if got := slices.Equal(d.Grants.SecretKeys, []string{tt.scope + "/" + tt.key}); got != tt.want || d.Allowed() != tt.want {
			t.Errorf("profile %q (wildcards %v), manifest %s/%s: granted %v, violations %v; want granted %v",
				tt.pattern, tt.wildcards, tt.scope, tt.key, d.Grants.SecretKeys, d.Reasons(), tt.want)
		}
	}
}

func TestStorageCoverage(t *testing.T) {
	tests := []struct {
		pattern, root string
		wildcards     bool
		want          bool
	}{
		{"*", "skills/cache", false, true},
		{"*", "*", false, false},
		{"*", "*", true, true},
		{"*", "cache/*", true, true},
		{"skills", "skills", false, true},
		{"skills", "skills/cache", false, true},
		{"skills", `skills\cache`, false, true},
		{"skills", "skillset", false, false},
		{"skills/cache", "skills", false, false},
		{"skills", "skills/*", true, true},
		{"skills", "*", true, false},
		{"Skills", "skills", false, false}, // storage keys are case-sensitive
	}
	for _, tt := range tests {
		p := profileWith(func(p *Profile) {
			p.Storage.AllowedPrefixes = []string{tt.pattern}
			p.Capabilities.AllowWildcards = tt.wildcards
		})
		m := withCaps(t, manifest.Capabilities{Filesystem: manifest.Filesystem{WriteRoots: []string{tt.root}}})
		d := evaluate(t, p, m)
		if got := len(d.Grants.StoragePrefixes) == 1; got != tt.want || d.Allowed() != tt.want {
			t.Errorf("profile %q (wildcards %v), manifest %q: granted %v, violations %v; want granted %v",
				tt.pattern, tt.wildcards, tt.root, d.Grants.StoragePrefixes, d.Reasons(), tt.want)
		}
	}
}

func TestChannels(t *testing.T) {
	// Palyra's echo example requests no channel: nothing is granted.
	d := evaluate(t, Default(), echoManifest(t))
	if len(d.Grants.Channels) != 0 {
		t.Fatalf("Channels = %v", d.Grants.Channels)
	}
	// capabilities.channels (a Palyra-Go extension) under the default
	// profile: every named channel.
	m := withCaps(t, manifest.Capabilities{Channels: []string{"ops-alerts", "audit"}})
	if d := evaluate(t, Default(), m); !slices.Equal(d.Grants.Channels, []string{"audit", "ops-alerts"}) || !d.Allowed() {
		t.Fatalf("default profile: Channels = %v, violations %v", d.Grants.Channels, d.Reasons())
	}
	e := &evaluation{p: Default(), r: &rules{channels: []string{"ops-alerts"}}, d: &Decision{}}
	if got := e.channels([]string{"ops-alerts", "other", "*"}); !slices.Equal(got, []string{"ops-alerts"}) {
		t.Fatalf("channels granted %v", got)
	}
	want := []Violation{
		{"capabilities.channels[1]", "other", "channel not allowed by the operator profile (channels.allowed)"},
		{"capabilities.channels[2]", "*", "wildcard channel not allowed by the operator profile (capabilities.allow_wildcards = false)"},
	}
	if !reflect.DeepEqual(e.d.Violations, want) {
		t.Fatalf("channel violations %q", e.d.Violations)
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name       string
		quotas     manifest.Quotas
		caps       Quotas
		want       Limits
		violations int
	}{
		{
			name:   "manifest below the caps",
			quotas: manifest.Quotas{WallClockTimeoutMS: 2000, FuelBudget: 5_000_000, MaxMemoryBytes: 32 << 20},
			caps:   Default().Quotas,
			want:   Limits{Fuel: 5_000_000, MaxMemoryBytes: 32 << 20, WallClock: 2 * time.Second},
		},
		{
			name:   "manifest defaults fit the default caps",
			quotas: manifest.Quotas{WallClockTimeoutMS: manifest.DefaultWallClockTimeoutMS, FuelBudget: manifest.DefaultFuelBudget, MaxMemoryBytes: manifest.DefaultMaxMemoryBytes},
			caps:   Default().Quotas,
			want:   Limits{Fuel: 10_000_000, MaxMemoryBytes: 64 << 20, WallClock: 30 * time.Second},
		},
		{
			name:       "manifest above the caps is capped and refused",
			quotas:     manifest.Quotas{WallClockTimeoutMS: 1 << 62, FuelBudget: 1<<64 - 1, MaxMemoryBytes: 1 << 40},
			caps:       Quotas{MaxFuel: 7, MaxMemoryBytes: 1 << 16, MaxWallClockMS: 9, MaxTableElements: 1, MaxInstances: 2, MaxCapabilityCalls: 3},
			want:       Limits{Fuel: 7, MaxMemoryBytes: 1 << 16, WallClock: 9 * time.Millisecond},
			violations: 3,
		},
		{
			name:   "equal to the caps",
			quotas: manifest.Quotas{WallClockTimeoutMS: 9, FuelBudget: 7, MaxMemoryBytes: 1 << 16},
			caps:   Quotas{MaxFuel: 7, MaxMemoryBytes: 1 << 16, MaxWallClockMS: 9, MaxTableElements: 1, MaxInstances: 2, MaxCapabilityCalls: 3},
			want:   Limits{Fuel: 7, MaxMemoryBytes: 1 << 16, WallClock: 9 * time.Millisecond},
		},
		{
			name:   "unset quotas count as the manifest defaults",
			quotas: manifest.Quotas{},
			caps:   Default().Quotas,
			want:   Limits{Fuel: 10_000_000, MaxMemoryBytes: 64 << 20, WallClock: 30 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := profileWith(func(p *Profile) { p.Quotas = tt.caps })
			m := echoManifest(t)
			m.Capabilities.Quotas = tt.quotas
			d := evaluate(t, p, m)
			tt.want.MaxTableElements, tt.want.MaxInstances, tt.want.MaxCapabilityCalls = tt.caps.MaxTableElements, tt.caps.MaxInstances, tt.caps.MaxCapabilityCalls
			tt.want.MaxStorageBytes, tt.want.MaxStorageKeys = DefaultMaxStorageBytes, DefaultMaxStorageKeys
			if d.Limits != tt.want {
				t.Errorf("Limits:\n got %+v\nwant %+v", d.Limits, tt.want)
			}
			if len(d.Violations) != tt.violations {
				t.Errorf("violations %v, want %d", d.Reasons(), tt.violations)
			}
		})
	}
}

func TestHTTPRules(t *testing.T) {
	p := profileWith(func(p *Profile) {
		p.HTTP.AllowedSchemes = []string{"HTTPS", "http", "https"}
		p.HTTP.AllowedPorts = []int{8443, 80, 443, 80}
		p.HTTP.AllowPrivate = true
		p.HTTP.MaxRedirects = 0
		p.HTTP.RequestTimeoutMS = 1500
		p.HTTP.AllowedPrivateNetworks = []string{"127.0.0.1/32", " 10.1.2.3/16 "}
		p.HTTP.MaxRequestsPerInvocation = 3
		p.HTTP.MaxBytesPerInvocation = 1000
	})
	d := evaluate(t, p, echoManifest(t))
	want := HTTPRules{
		Schemes: []string{"http", "https"}, Ports: []int{80, 443, 8443}, AllowPrivate: true, MaxRedirects: 0,
		PrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.1.0.0/16")},
		MaxRequestBytes: DefaultMaxRequestBytes, MaxResponseBytes: DefaultMaxResponseBytes, RequestTimeout: 1500 * time.Millisecond,
		MaxRequestsPerInvocation: 3, MaxBytesPerInvocation: 1000,
	}
	if !reflect.DeepEqual(d.Grants.HTTP, want) {
		t.Fatalf("HTTP rules:\n got %+v\nwant %+v", d.Grants.HTTP, want)
	}
}

func TestEvaluateErrors(t *testing.T) {
	if _, err := Default().Evaluate(nil); err == nil {
		t.Fatal("Evaluate(nil) succeeded")
	}
	bad := profileWith(func(p *Profile) { p.Secrets.Allowed = []string{"nope"} })
	_, err := bad.Evaluate(echoManifest(t))
	var pe *ProfileError
	if !errors.As(err, &pe) || pe.Path != "secrets.allowed[0]" {
		t.Fatalf("Evaluate with an invalid profile = %v", err)
	}
}

func TestEvaluateDoesNotModifyInputs(t *testing.T) {
	p := Default()
	m := withCaps(t, manifest.Capabilities{HTTPEgressAllowlist: []string{"B.example.com", "a.example.com"}})
	before := append([]string(nil), m.Capabilities.HTTPEgressAllowlist...)
	d1 := evaluate(t, p, m)
	d2 := evaluate(t, p, m)
	if !reflect.DeepEqual(d1, d2) {
		t.Fatal("two evaluations differ")
	}
	if !slices.Equal(before, m.Capabilities.HTTPEgressAllowlist) || !reflect.DeepEqual(p, Default()) {
		t.Fatal("Evaluate modified its inputs")
	}
}
