package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
)

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	if err := (&Profile{}).Validate(); !errors.Is(err, ErrInvalidProfile) {
		t.Fatalf("zero Profile: Validate() = %v, want ErrInvalidProfile", err)
	}
}

func TestParseEmptyIsDefault(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "\ufeff", "[http]\n[secrets]\n[storage]\n[channels]\n[quotas]\n[capabilities]\n"} {
		p, err := Parse([]byte(src))
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		if !reflect.DeepEqual(p, Default()) {
			t.Errorf("Parse(%q) = %+v, want Default()", src, p)
		}
	}
}

func TestParseExample(t *testing.T) {
	p, err := Load(filepath.FromSlash(exampleProfilePath))
	if err != nil {
		t.Fatal(err)
	}
	want := &Profile{
		HTTP: HTTP{
			AllowedHosts:     []string{"api.example.com", "*.githubusercontent.com"},
			AllowedSchemes:   []string{"https"},
			AllowedPorts:     []int{443},
			MaxRedirects:     5,
			MaxRequestBytes:  1048576,
			MaxResponseBytes: 4194304,
			RequestTimeoutMS: 10000,

			AllowedPrivateNetworks:   []string{},
			MaxRequestsPerInvocation: 32,
			MaxBytesPerInvocation:    16 << 20,
		},
		Secrets:  Secrets{Allowed: []string{"skill:*/api_token", "global/openai_api_key"}},
		Storage:  Storage{AllowedPrefixes: []string{"counters", "skills/cache", "skills/data"}, MaxBytesPerSkill: 67108864, MaxKeysPerSkill: 10000},
		Channels: Channels{Allowed: []string{"ops-alerts"}},
		Quotas: Quotas{
			MaxFuel: 100000000, MaxMemoryBytes: 268435456, MaxWallClockMS: 60000,
			MaxTableElements: 100000, MaxInstances: 16, MaxCapabilityCalls: 256,
		},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("example profile:\n got %+v\nwant %+v", p, want)
	}
}

// TestInlineNotAllowed checks that only [dev] allow_inline = true lets an
// inline module run, and that the refusal names the setting.
func TestInlineNotAllowed(t *testing.T) {
	for _, tt := range []struct {
		name  string
		p     *Profile
		allow bool
	}{
		{"nil profile", nil, false},
		{"default", Default(), false},
		{"allowed", profileWith(func(p *Profile) { p.Dev.AllowInline = true }), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.InlineNotAllowed()
			if tt.allow {
				if err != nil {
					t.Fatalf("InlineNotAllowed: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInlineNotAllowed) || errcode.Of(err) != "inline_not_allowed" {
				t.Fatalf("InlineNotAllowed: %v (code %s), want inline_not_allowed", err, errcode.Of(err))
			}
			if !strings.Contains(err.Error(), "[dev] allow_inline = true") {
				t.Fatalf("the refusal does not name the setting: %v", err)
			}
		})
	}
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(p *Profile) bool
	}{
		{"ports default to 443", `http.allowed_schemes = ["https"]`, func(p *Profile) bool { return reflect.DeepEqual(p.HTTP.AllowedPorts, []int{443}) }},
		{"http adds port 80", `http.allowed_schemes = ["https", "http"]`, func(p *Profile) bool { return reflect.DeepEqual(p.HTTP.AllowedPorts, []int{80, 443}) }},
		{"http only is port 80", `http.allowed_schemes = ["HTTP"]`, func(p *Profile) bool { return reflect.DeepEqual(p.HTTP.AllowedPorts, []int{80}) }},
		{"explicit ports replace the default", "[http]\nallowed_schemes = [\"http\"]\nallowed_ports = [8080, 8443]", func(p *Profile) bool {
			return reflect.DeepEqual(p.HTTP.AllowedPorts, []int{8080, 8443})
		}},
		{"empty host list means no hosts", `http.allowed_hosts = []`, func(p *Profile) bool { return p.HTTP.AllowedHosts != nil && len(p.HTTP.AllowedHosts) == 0 }},
		{"one key keeps the others' defaults", "[quotas]\nmax_fuel = 5", func(p *Profile) bool {
			return p.Quotas.MaxFuel == 5 && p.Quotas.MaxMemoryBytes == DefaultMaxMemoryBytes && p.HTTP.AllowedHosts[0] == "*"
		}},
		{"zero redirects", `http.max_redirects = 0`, func(p *Profile) bool { return p.HTTP.MaxRedirects == 0 }},
		{"flags", "[capabilities]\nallow_device = true\nallow_node = true\nallow_wildcards = true", func(p *Profile) bool {
			return reflect.DeepEqual(p.Capabilities, Capabilities{AllowDevice: true, AllowNode: true, AllowWildcards: true})
		}},
		{"inline modules are off by default", `quotas.max_fuel = 5`, func(p *Profile) bool { return !p.Dev.AllowInline }},
		{"dev allow_inline", "[dev]\nallow_inline = true", func(p *Profile) bool { return p.Dev.AllowInline }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(p) {
				t.Fatalf("unexpected profile %+v", p)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, path, reason string
	}{
		// Strict decoding: unknown keys at every level, with their path.
		{"unknown root key", `extra = 1`, "extra", "unknown key"},
		{"unknown root table", "[network]\nx = 1", "network", "unknown key"},
		{"unknown http key", `http.allowed_host = ["a.com"]`, "http.allowed_host", "unknown key"},
		{"unknown secrets key", `secrets.keys = []`, "secrets.keys", "unknown key"},
		{"unknown storage key", `storage.max_bytes = 1`, "storage.max_bytes", "unknown key"},
		{"unknown channels key", `channels.names = []`, "channels.names", "unknown key"},
		{"unknown quotas key", `quotas.max_stack = 1`, "quotas.max_stack", "unknown key"},
		{"unknown capabilities key", `capabilities.allow_fs = true`, "capabilities.allow_fs", "unknown key"},
		{"unknown dev key", `dev.allow_inline_modules = true`, "dev.allow_inline_modules", "unknown key"},
		{"dev allow_inline is a string", `dev.allow_inline = "yes"`, "dev.allow_inline", "must be a boolean, found a string"},
		{"unknown nested table", "[http.proxy]\nurl = \"x\"", "http.proxy", "unknown key"},
		{"unknown quoted key", `http."allowed hosts" = []`, `http."allowed hosts"`, "unknown key"},
		{"unknown keys sorted", "zzz = 1\naaa = 2", "aaa", "unknown key"},
		// Types.
		{"table is not a table", `http = 1`, "http", "must be a table, found an integer"},
		{"list is a string", `http.allowed_hosts = "a.com"`, "http.allowed_hosts", "must be an array of strings, found a string"},
		{"list item is an integer", `http.allowed_hosts = ["a.com", 1]`, "http.allowed_hosts[1]", "must be a string, found an integer"},
		{"port is a string", `http.allowed_ports = ["443"]`, "http.allowed_ports[0]", "must be an integer, found a string"},
		{"ports is a table", `http.allowed_ports = {a = 1}`, "http.allowed_ports", "must be an array of integers, found a table"},
		{"bool is a string", `http.allow_private = "no"`, "http.allow_private", "must be a boolean, found a string"},
		{"int is a float", `quotas.max_fuel = 1.5`, "quotas.max_fuel", "must be an integer, found a float"},
		{"int is a date", `quotas.max_fuel = 1979-05-27`, "quotas.max_fuel", "must be an integer, found a date-time"},
		// Values.
		{"host with scheme", `http.allowed_hosts = ["https://a.com"]`, "http.allowed_hosts[0]", "bare host name"},
		{"host with port", `http.allowed_hosts = ["a.com:443"]`, "http.allowed_hosts[0]", "bare host name"},
		{"host with space", `http.allowed_hosts = ["a b.com"]`, "http.allowed_hosts[0]", "bare host name"},
		{"host empty", `http.allowed_hosts = [" "]`, "http.allowed_hosts[0]", "must not be empty"},
		{"host empty label", `http.allowed_hosts = ["a..com"]`, "http.allowed_hosts[0]", "empty label"},
		{"host leading dash", `http.allowed_hosts = ["-a.com"]`, "http.allowed_hosts[0]", "must not start or end"},
		{"wildcard in the middle", `http.allowed_hosts = ["a.*.com"]`, "http.allowed_hosts[0]", `"*" or "*.<domain>"`},
		{"wildcard without dot", `http.allowed_hosts = ["*example.com"]`, "http.allowed_hosts[0]", `"*" or "*.<domain>"`},
		{"double wildcard", `http.allowed_hosts = ["*.*.com"]`, "http.allowed_hosts[0]", `"*" or "*.<domain>"`},
		{"wildcard empty domain", `http.allowed_hosts = ["*."]`, "http.allowed_hosts[0]", "wildcard domain"},
		{"no schemes", `http.allowed_schemes = []`, "http.allowed_schemes", "must list"},
		{"bad scheme", `http.allowed_schemes = ["ftp"]`, "http.allowed_schemes[0]", `must be "https" or "http"`},
		{"no ports", `http.allowed_ports = []`, "http.allowed_ports", "at least one port"},
		{"port 0", `http.allowed_ports = [443, 0]`, "http.allowed_ports[1]", "1..65535"},
		{"port too big", `http.allowed_ports = [65536]`, "http.allowed_ports[0]", "1..65535"},
		{"negative redirects", `http.max_redirects = -1`, "http.max_redirects", "at least 0"},
		{"zero request bytes", `http.max_request_bytes = 0`, "http.max_request_bytes", "at least 1"},
		{"zero response bytes", `http.max_response_bytes = 0`, "http.max_response_bytes", "at least 1"},
		{"negative timeout", `http.request_timeout_ms = -5`, "http.request_timeout_ms", "at least 1"},
		{"huge timeout", `http.request_timeout_ms = 9223372036854775807`, "http.request_timeout_ms", "at most"},
		{"secret without slash", `secrets.allowed = ["global"]`, "secrets.allowed[0]", "exactly one '/'"},
		{"secret with two slashes", `secrets.allowed = ["global/a/b"]`, "secrets.allowed[0]", "exactly one '/'"},
		{"secret bad scope", `secrets.allowed = ["vault/key"]`, "secrets.allowed[0]", "scope must be"},
		{"secret empty scope id", `secrets.allowed = ["skill:/key"]`, "secrets.allowed[0]", "scope id must not be empty"},
		{"secret upper-case scope id", `secrets.allowed = ["skill:Acme/key"]`, "secrets.allowed[0]", "scope id must contain only"},
		{"secret empty key", `secrets.allowed = ["global/"]`, "secrets.allowed[0]", "key must not be empty"},
		{"secret bad key", `secrets.allowed = ["global/api key"]`, "secrets.allowed[0]", "key must contain only"},
		{"storage absolute", `storage.allowed_prefixes = ["/etc"]`, "storage.allowed_prefixes[0]", "absolute path"},
		{"storage dotdot", `storage.allowed_prefixes = ["a/../b"]`, "storage.allowed_prefixes[0]", `".."`},
		{"storage colon", `storage.allowed_prefixes = ["c:temp"]`, "storage.allowed_prefixes[0]", "':'"},
		{"storage partial wildcard", `storage.allowed_prefixes = ["cache/*"]`, "storage.allowed_prefixes[0]", `"*" alone`},
		{"storage zero bytes", `storage.max_bytes_per_skill = 0`, "storage.max_bytes_per_skill", "at least 1"},
		{"storage zero keys", `storage.max_keys_per_skill = 0`, "storage.max_keys_per_skill", "at least 1"},
		{"private network not a CIDR", `http.allowed_private_networks = ["127.0.0.1"]`, "http.allowed_private_networks[0]", "not a CIDR prefix"},
		{"private network with zone", `http.allowed_private_networks = ["fe80::1%eth0/128"]`, "http.allowed_private_networks[0]", "not a CIDR"},
		{"zero requests per invocation", `http.max_requests_per_invocation = 0`, "http.max_requests_per_invocation", "at least 1"},
		{"zero bytes per invocation", `http.max_bytes_per_invocation = 0`, "http.max_bytes_per_invocation", "at least 1"},
		{"allow_read not a bool", `secrets.allow_read = "yes"`, "secrets.allow_read", "boolean"},
		{"channel upper-case", `channels.allowed = ["Ops"]`, "channels.allowed[0]", "channel must contain only"},
		{"channel empty", `channels.allowed = [""]`, "channels.allowed[0]", "must not be empty"},
		{"zero fuel", `quotas.max_fuel = 0`, "quotas.max_fuel", "at least 1"},
		{"memory below a page", `quotas.max_memory_bytes = 65535`, "quotas.max_memory_bytes", "at least 65536"},
		{"zero wall clock", `quotas.max_wall_clock_ms = 0`, "quotas.max_wall_clock_ms", "at least 1"},
		{"zero tables", `quotas.max_table_elements = 0`, "quotas.max_table_elements", "at least 1"},
		{"zero instances", `quotas.max_instances = 0`, "quotas.max_instances", "at least 1"},
		{"calls above the ABI", `quotas.max_capability_calls = 257`, "quotas.max_capability_calls", "at most 256"},
		// The whole document.
		{"syntax error", "[http]\nallowed_hosts = [", "", "invalid TOML at line 2"},
		{"duplicate key", "[quotas]\nmax_fuel = 1\nmax_fuel = 2", "", "invalid TOML"},
		{"not UTF-8", "# \xff\n", "", "not valid UTF-8"},
		{"too large", strings.Repeat("#", MaxProfileBytes+1), "", "profile is 262145 bytes, above the limit of 262144 (MaxProfileBytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", p)
			}
			if !errors.Is(err, ErrInvalidProfile) || errcode.Of(err) != "invalid_policy_profile" {
				t.Fatalf("error %v (code %s) does not wrap ErrInvalidProfile", err, errcode.Of(err))
			}
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ProfileError", err)
			}
			if pe.Path != tt.path {
				t.Errorf("Path = %q, want %q (%v)", pe.Path, tt.path, err)
			}
			if !strings.Contains(pe.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", pe.Reason, tt.reason)
			}
			if !strings.HasPrefix(err.Error(), "policy: ") {
				t.Errorf("error %q lacks the policy: prefix", err)
			}
		})
	}
}

func TestProfileErrorFormat(t *testing.T) {
	_, err := Parse([]byte(`http.allowed_hosts = ["a b"]`))
	want := `policy: http.allowed_hosts[0]: "a b": must be a bare host name (a-z, 0-9, '.' and '-'; no scheme, port or path), found ' '`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
	_, err = Parse([]byte("a = ["))
	var pe *ProfileError
	if !errors.As(err, &pe) || pe.Line != 1 || pe.Cause == nil {
		t.Fatalf("syntax error %#v: want line 1 and a cause", pe)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing file", func(t *testing.T) {
		_, err := Load(filepath.Join(dir, "absent.toml"))
		if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrInvalidProfile) {
			t.Fatalf("Load(absent) = %v, want fs.ErrNotExist only", err)
		}
	})
	t.Run("invalid file names the file", func(t *testing.T) {
		path := filepath.Join(dir, "bad.toml")
		if err := os.WriteFile(path, []byte("[quotas]\nmax_fuel = 0\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		var pe *ProfileError
		if !errors.As(err, &pe) || pe.File != path || pe.Path != "quotas.max_fuel" {
			t.Fatalf("Load(bad) = %v", err)
		}
		if want := "policy: " + path + ": quotas.max_fuel: must be at least 1, found 0"; err.Error() != want {
			t.Fatalf("error = %q, want %q", err, want)
		}
	})
	t.Run("too large file", func(t *testing.T) {
		path := filepath.Join(dir, "big.toml")
		if err := os.WriteFile(path, []byte(strings.Repeat("\n", 2*MaxProfileBytes)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if !errors.Is(err, ErrInvalidProfile) || err.Error() != "policy: "+path+": profile is more than 262144 bytes (MaxProfileBytes)" {
			t.Fatalf("Load(big) = %v", err)
		}
	})
}

func TestMarshalRoundTrip(t *testing.T) {
	example, err := Load(filepath.FromSlash(exampleProfilePath))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		p    *Profile
	}{
		{"default", Default()},
		{"example", example},
		{"everything changed", profileWith(func(p *Profile) {
			p.HTTP = HTTP{
				AllowedHosts:   []string{" API.Example.com. ", "*.example.org", "*"},
				AllowedSchemes: []string{"http", "https"}, AllowedPorts: []int{8080, 80, 443},
				AllowPrivate: true, MaxRedirects: 0, MaxRequestBytes: 1, MaxResponseBytes: 2, RequestTimeoutMS: 3,
				AllowedPrivateNetworks: []string{"127.0.0.1/32", "fd00::/8"}, MaxRequestsPerInvocation: 4, MaxBytesPerInvocation: 5,
			}
			p.Secrets.Allowed = []string{"principal:*/k*", "*/*"}
			p.Secrets.AllowRead = true
			p.Storage = Storage{AllowedPrefixes: []string{`a\b`, "*"}, MaxBytesPerSkill: 9, MaxKeysPerSkill: 8}
			p.Channels.Allowed = []string{"ops", "*"}
			p.Quotas = Quotas{MaxFuel: 1, MaxMemoryBytes: MinMemoryBytes, MaxWallClockMS: 1, MaxTableElements: 1, MaxInstances: 1, MaxCapabilityCalls: 1}
			p.Capabilities = Capabilities{AllowDevice: true, AllowNode: true, AllowWildcards: true}
			p.Dev.AllowInline = true
		})},
		{"empty lists stay empty", profileWith(func(p *Profile) {
			p.HTTP.AllowedHosts = []string{}
			p.Secrets.Allowed = []string{}
			p.Storage.AllowedPrefixes = []string{}
			p.Channels.Allowed = []string{}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := tt.p.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(Marshal(p)): %v\n%s", err, data)
			}
			if !reflect.DeepEqual(got, tt.p) {
				t.Fatalf("round trip:\n got %+v\nwant %+v\n%s", got, tt.p, data)
			}
		})
	}
}

func TestMarshalNilListsAreEmpty(t *testing.T) {
	p := profileWith(func(p *Profile) { p.HTTP.AllowedHosts = nil; p.Channels.Allowed = nil })
	data, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.HTTP.AllowedHosts) != 0 || len(got.Channels.Allowed) != 0 {
		t.Fatalf("nil lists came back as %v and %v, want empty (not the defaults)", got.HTTP.AllowedHosts, got.Channels.Allowed)
	}
}

func TestMarshalInvalid(t *testing.T) {
	p := profileWith(func(p *Profile) { p.HTTP.AllowedPorts = []int{70000} })
	if _, err := p.Marshal(); !errors.Is(err, ErrInvalidProfile) {
		t.Fatalf("Marshal(invalid) = %v, want ErrInvalidProfile", err)
	}
}

func TestRequireApproval(t *testing.T) {
	all := Grants{HTTPHosts: []string{"a.example"}, SecretKeys: []string{"global/k"}, StoragePrefixes: []string{"p"}, Channels: []string{"c"}}
	for _, tc := range []struct {
		name    string
		toml    string
		grants  Grants
		want    []string
		wantErr string
	}{
		{"none by default", "", all, nil, ""},
		{"http and storage granted", "[capabilities]\nrequire_approval = [\"http\", \" Storage \"]\n", all, []string{"http", "storage"}, ""},
		{"class not granted counts for nothing", "[capabilities]\nrequire_approval = [\"secrets\", \"device\"]\n", Grants{HTTPHosts: []string{"a.example"}}, nil, ""},
		{"order is the package's", "[capabilities]\nrequire_approval = [\"channels\", \"secrets\", \"http\"]\n", all, []string{"http", "secrets", "channels"}, ""},
		{"unknown class refused", "[capabilities]\nrequire_approval = [\"http\", \"files\"]\n", all, nil, "capabilities.require_approval[1]"},
		{"wrong type refused", "[capabilities]\nrequire_approval = \"http\"\n", all, nil, "capabilities.require_approval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(tc.toml))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse: err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.ApprovalClasses(tc.grants); !slices.Equal(got, tc.want) {
				t.Fatalf("ApprovalClasses = %v, want %v", got, tc.want)
			}
		})
	}
}
