package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/palyra-go/palyra/host/statedir"
)

// MaxProfileBytes is the largest profile Parse and Load read. A profile is
// a few hundred bytes of patterns and numbers; the bound keeps a hostile or
// mistaken file (a log, a binary) cheap to reject.
const MaxProfileBytes = 256 << 10

// Defaults of the profile, used for every key a profile file leaves out and
// by Default. See the package documentation for the reasoning behind each.
const (
	DefaultMaxRedirects     = 5
	DefaultMaxRequestBytes  = 1 << 20 // ABI §5: a capability request document is at most 1 MiB
	DefaultMaxResponseBytes = 4 << 20 // ABI §5: a capability response is at most 4 MiB
	DefaultRequestTimeoutMS = 10_000
	// DefaultMaxRequestsPerInvocation and DefaultMaxBytesPerInvocation are
	// the egress budget of one tool call: requests (redirect hops count)
	// and body bytes sent plus received.
	DefaultMaxRequestsPerInvocation = 32
	DefaultMaxBytesPerInvocation    = 16 << 20

	DefaultMaxStorageBytes = 64 << 20
	DefaultMaxStorageKeys  = 10_000

	DefaultMaxFuel            = 100_000_000
	DefaultMaxMemoryBytes     = 256 << 20
	DefaultMaxWallClockMS     = 60_000
	DefaultMaxTableElements   = 100_000
	DefaultMaxInstances       = 16
	DefaultMaxCapabilityCalls = 256
)

// Bounds Validate enforces beyond "positive".
const (
	// MinMemoryBytes is the smallest quotas.max_memory_bytes: one wasm page.
	MinMemoryBytes = 64 << 10
	// MaxCapabilityCallsLimit is the ABI's ceiling on capability calls per
	// invocation (ABI §5); the profile may only lower it.
	MaxCapabilityCallsLimit = 256
	// maxMillis keeps every *_ms value convertible to a time.Duration.
	maxMillis = (1<<63 - 1) / 1_000_000
)

// Wildcard is the pattern that covers every entry of its kind in
// allowed_hosts, secrets.allowed (as "*/*"), allowed_prefixes and
// channels.allowed: every exact entry a manifest declares and, only when
// capabilities.allow_wildcards is true, its wildcard entries too.
const Wildcard = "*"

// Profile is an operator's capability profile: the bound on what any skill
// may be granted. The zero Profile is not valid (it lists no scheme and no
// port and has zero caps); start from Default or Parse and change fields.
//
// String values are kept as written; Validate and Evaluate judge trimmed
// copies (hosts also lower-cased, trailing dots removed). A Profile is a
// plain value: it is safe for concurrent use as long as no one modifies it.
type Profile struct {
	HTTP         HTTP         `toml:"http"`
	Secrets      Secrets      `toml:"secrets"`
	Storage      Storage      `toml:"storage"`
	Channels     Channels     `toml:"channels"`
	Quotas       Quotas       `toml:"quotas" comment:"caps on the quotas a manifest may request, and the limits it cannot set"`
	Capabilities Capabilities `toml:"capabilities"`
	Dev          Dev          `toml:"dev" comment:"author tools; keep allow_inline off on a production host"`
}

// HTTP bounds HTTP egress: which hosts a manifest may name, and the rules
// the broker applies to every request.
type HTTP struct {
	// AllowedHosts are exact hosts ("api.example.com"), "*.<domain>"
	// patterns (covering every host below domain, and manifest wildcards
	// below it) and "*" (any host the manifest declares). Default ["*"].
	AllowedHosts []string `toml:"allowed_hosts" comment:"exact hosts, \"*.<domain>\" patterns, or \"*\" for any host the manifest declares"`
	// AllowedSchemes are "https" and/or "http". Default ["https"].
	AllowedSchemes []string `toml:"allowed_schemes"`
	// AllowedPorts are the destination ports, 1..65535. Default [443],
	// plus 80 when AllowedSchemes has "http".
	AllowedPorts []int `toml:"allowed_ports"`
	// AllowPrivate lets requests reach loopback, private, link-local, CGNAT
	// and cloud metadata addresses. Default false.
	AllowPrivate bool `toml:"allow_private"`
	// AllowedPrivateNetworks are CIDR prefixes ("127.0.0.1/32",
	// "10.20.0.0/16") of non-public addresses requests may reach even when
	// AllowPrivate is false: a narrow hole for one internal service instead
	// of all of them. Default none.
	AllowedPrivateNetworks []string `toml:"allowed_private_networks" comment:"CIDR prefixes of non-public addresses that may be reached even with allow_private = false"`
	// MaxRedirects is how many redirects the broker follows, each checked
	// again against these rules; 0 follows none. Default 5.
	MaxRedirects int64 `toml:"max_redirects"`
	// MaxRequestBytes bounds a request body. Default 1 MiB.
	MaxRequestBytes int64 `toml:"max_request_bytes"`
	// MaxResponseBytes bounds a response body. Default 4 MiB.
	MaxResponseBytes int64 `toml:"max_response_bytes"`
	// RequestTimeoutMS bounds one request, redirects included. Default 10 s.
	RequestTimeoutMS int64 `toml:"request_timeout_ms"`
	// MaxRequestsPerInvocation bounds the requests of one tool call, each
	// redirect hop counting as one. Default 32.
	MaxRequestsPerInvocation int64 `toml:"max_requests_per_invocation"`
	// MaxBytesPerInvocation bounds the body bytes one tool call sends and
	// receives over HTTP, all requests together. Default 16 MiB.
	MaxBytesPerInvocation int64 `toml:"max_bytes_per_invocation"`
}

// Secrets bounds the vault keys a manifest may name.
type Secrets struct {
	// Allowed are "<scope>/<key>" patterns. scope is "global",
	// "principal:<id>", "channel:<id>", "skill:<id>" or "*" (any scope);
	// a '*' in id or key matches any run of characters. Default ["*/*"].
	Allowed []string `toml:"allowed" comment:"\"<scope>/<key>\" patterns; '*' in a scope id or key matches any run of characters"`
	// AllowRead permits the secret "read" operation, which hands a
	// secret's value to the guest. Default false: skills use secrets by
	// injection (the broker puts the value into an HTTP request), so the
	// sidecar never holds one.
	AllowRead bool `toml:"allow_read" comment:"let skills read secret values (default false: secrets are only injected into HTTP requests)"`
}

// Storage bounds the storage prefixes (manifest write_roots) a manifest may
// name, and the space a skill may use.
type Storage struct {
	// AllowedPrefixes are key prefixes (a manifest prefix equal to one or
	// below it is covered) or "*" (any prefix the manifest declares).
	// Default ["*"]. Every prefix lives in the skill's own key space.
	AllowedPrefixes []string `toml:"allowed_prefixes" comment:"key prefixes (covering themselves and everything below), or \"*\" for any prefix the manifest declares"`
	// MaxBytesPerSkill bounds the total size of a skill's stored values.
	// Default 64 MiB.
	MaxBytesPerSkill int64 `toml:"max_bytes_per_skill"`
	// MaxKeysPerSkill bounds the number of a skill's stored keys. Default
	// 10000.
	MaxKeysPerSkill int64 `toml:"max_keys_per_skill"`
}

// Channels bounds the channels a skill may send to.
type Channels struct {
	// Allowed are channel names or "*" (any channel the manifest
	// declares). Default ["*"].
	Allowed []string `toml:"allowed"`
}

// Quotas caps the per-invocation limits. A manifest quota above a cap is a
// violation; the limit applied is min(manifest quota, cap). Values the
// manifest cannot set (tables, instances, capability calls) are the caps.
type Quotas struct {
	MaxFuel            int64 `toml:"max_fuel"`
	MaxMemoryBytes     int64 `toml:"max_memory_bytes"`
	MaxWallClockMS     int64 `toml:"max_wall_clock_ms"`
	MaxTableElements   int64 `toml:"max_table_elements"`
	MaxInstances       int64 `toml:"max_instances"`
	MaxCapabilityCalls int64 `toml:"max_capability_calls"`
}

// Capabilities gates the capability kinds that carry no pattern list.
type Capabilities struct {
	// AllowDevice permits manifest device_capabilities. Default false.
	AllowDevice bool `toml:"allow_device"`
	// AllowNode permits manifest node_capabilities. Default false.
	AllowNode bool `toml:"allow_node"`
	// AllowWildcards permits manifest wildcards: any wildcard_opt_in flag
	// and any '*' in a host, secret key, write root, device or node
	// capability. Even then a wildcard entry must be covered by a pattern
	// of the profile. Default false.
	AllowWildcards bool `toml:"allow_wildcards"`
	// RequireApproval names capability classes whose skills' calls need a
	// human's approval first: "http", "secrets", "storage", "channels",
	// "device", "node". A class counts for a skill when the policy grants
	// the skill something of that class (a host, a secret key, a storage
	// prefix, a channel, a device or node capability): a call of any of
	// its tools then becomes a pending approval (host.Service.Call), as a
	// tool with requires_approval does. Default none.
	RequireApproval []string `toml:"require_approval,omitempty" comment:"capability classes (http, secrets, storage, channels, device, node) whose skills' calls need a human's approval"`
}

// Capability classes that Capabilities.RequireApproval may name.
const (
	ClassHTTP     = "http"
	ClassSecrets  = "secrets"
	ClassStorage  = "storage"
	ClassChannels = "channels"
	ClassDevice   = "device"
	ClassNode     = "node"
)

// ApprovalClasses are the names Capabilities.RequireApproval accepts, in
// the order Decision.ApprovalClasses reports them.
var ApprovalClasses = []string{ClassHTTP, ClassSecrets, ClassStorage, ClassChannels, ClassDevice, ClassNode}

// Dev gates the author tools that run code no publisher signed.
type Dev struct {
	// AllowInline lets an operator run inline modules: unpackaged,
	// unsigned WebAssembly modules given with the call (palyra dev run,
	// host.Service.RunInline), under the same grants, limits and schema
	// checks as an installed skill but with no signature, no trust store
	// and no audit behind them. Default false; a hardened deployment
	// requires it false. Without it an inline run fails with
	// ErrInlineNotAllowed.
	AllowInline bool `toml:"allow_inline" comment:"let palyra dev run execute unsigned inline modules (default false)"`
}

// Default returns the profile used when the operator has none: every
// exact host, secret, storage prefix and channel the manifest declares,
// over https on port 443 only, no private addresses, no wildcards, no
// device or node capabilities, and the Default* caps.
func Default() *Profile {
	return &Profile{
		HTTP: HTTP{
			AllowedHosts:     []string{Wildcard},
			AllowedSchemes:   []string{"https"},
			AllowedPorts:     []int{443},
			MaxRedirects:     DefaultMaxRedirects,
			MaxRequestBytes:  DefaultMaxRequestBytes,
			MaxResponseBytes: DefaultMaxResponseBytes,
			RequestTimeoutMS: DefaultRequestTimeoutMS,

			AllowedPrivateNetworks:   []string{},
			MaxRequestsPerInvocation: DefaultMaxRequestsPerInvocation,
			MaxBytesPerInvocation:    DefaultMaxBytesPerInvocation,
		},
		Secrets:  Secrets{Allowed: []string{Wildcard + "/" + Wildcard}},
		Storage:  Storage{AllowedPrefixes: []string{Wildcard}, MaxBytesPerSkill: DefaultMaxStorageBytes, MaxKeysPerSkill: DefaultMaxStorageKeys},
		Channels: Channels{Allowed: []string{Wildcard}},
		Quotas: Quotas{
			MaxFuel:            DefaultMaxFuel,
			MaxMemoryBytes:     DefaultMaxMemoryBytes,
			MaxWallClockMS:     DefaultMaxWallClockMS,
			MaxTableElements:   DefaultMaxTableElements,
			MaxInstances:       DefaultMaxInstances,
			MaxCapabilityCalls: DefaultMaxCapabilityCalls,
		},
	}
}

// defaultPorts is the port list for schemes when allowed_ports is left out:
// 80 when "http" is allowed, 443 when "https" is.
func defaultPorts(schemes []string) []int {
	var ports []int
	if containsFold(schemes, "http") {
		ports = append(ports, 80)
	}
	if containsFold(schemes, "https") {
		ports = append(ports, 443)
	}
	return ports
}

func containsFold(list []string, s string) bool {
	for _, e := range list {
		if strings.EqualFold(strings.TrimSpace(e), s) {
			return true
		}
	}
	return false
}

// Load reads and parses the profile file at path (see Parse). It reads at
// most MaxProfileBytes+1 bytes. A *ProfileError from Parse gets File set; an
// I/O error is returned wrapped, with no code of its own.
func Load(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("policy: load profile: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("policy: load profile %s: %w", path, err)
	}
	if len(data) > MaxProfileBytes {
		return nil, &ProfileError{File: path, Reason: fmt.Sprintf("profile is more than %d bytes (MaxProfileBytes)", MaxProfileBytes)}
	}
	p, err := Parse(data)
	if err != nil {
		var pe *ProfileError
		if errors.As(err, &pe) {
			pe.File = path
		}
		return nil, err
	}
	return p, nil
}

// Parse decodes a profile and validates it. Decoding is strict: an unknown
// key at any level or a value of the wrong type is an error naming the key
// path. Keys left out get their defaults (see Default; allowed_ports
// defaults from allowed_schemes). The result always holds non-nil slices.
// Every error is a *ProfileError wrapping ErrInvalidProfile.
func Parse(data []byte) (*Profile, error) {
	if len(data) > MaxProfileBytes {
		return nil, &ProfileError{Reason: fmt.Sprintf("profile is %d bytes, above the limit of %d (MaxProfileBytes)", len(data), MaxProfileBytes)}
	}
	if !utf8.Valid(data) {
		return nil, &ProfileError{Reason: "profile is not valid UTF-8"}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var root map[string]any
	if err := toml.Unmarshal(data, &root); err != nil {
		pe := &ProfileError{Cause: err, Reason: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			pe.Line, pe.Column = de.Position()
			pe.Reason = fmt.Sprintf("invalid TOML at line %d, column %d: %s", pe.Line, pe.Column, strings.TrimPrefix(de.Error(), "toml: "))
		}
		return nil, pe
	}
	p, err := decode(root)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Marshal encodes the profile as TOML with every key written out, so that
// Parse(Marshal(p)) equals p (with nil slices read back as empty ones). An
// invalid profile is not encoded: the error is Validate's.
func (p *Profile) Marshal() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := *p
	// An absent list means "default" to Parse; write empty lists out.
	for _, s := range []*[]string{&c.HTTP.AllowedHosts, &c.Secrets.Allowed, &c.Storage.AllowedPrefixes, &c.Channels.Allowed} {
		if *s == nil {
			*s = []string{}
		}
	}
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.SetIndentTables(false)
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("policy: marshal profile: %w", err)
	}
	return buf.Bytes(), nil
}

// Resolve returns the operator profile of a state directory: the file
// given, else <state>/policy.toml (statedir.Layout.Policy) when it exists,
// else Default(). source says which: the file's path or "default". The
// CLI, the daemon and host.Open all choose the profile this way. It only
// reads.
func Resolve(stateDir, file string) (prof *Profile, source string, err error) {
	if file == "" {
		p := statedir.At(stateDir).Policy()
		if _, err := os.Stat(p); err == nil {
			file = p
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("policy: %w", err)
		}
	}
	if file == "" {
		return Default(), "default", nil
	}
	prof, err = Load(file)
	if err != nil {
		return nil, "", err
	}
	return prof, file, nil
}
