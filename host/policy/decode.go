package policy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

// decoder turns the generic TOML tree into a Profile. It checks key names
// and value types; Validate checks the values. It keeps the first problem.
type decoder struct {
	err *ProfileError
}

func (d *decoder) fail(path, format string, args ...any) {
	if d.err == nil {
		d.err = &ProfileError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
}

// decode fills a Default profile with the keys given in root.
func decode(root map[string]any) (*Profile, error) {
	d := &decoder{}
	p := Default()
	t := d.table("", root, "http", "secrets", "storage", "channels", "quotas", "capabilities", "dev")

	if h := d.subtable(t, "http", "allowed_hosts", "allowed_schemes", "allowed_ports", "allow_private",
		"max_redirects", "max_request_bytes", "max_response_bytes", "request_timeout_ms",
		"allowed_private_networks", "max_requests_per_invocation", "max_bytes_per_invocation"); h != nil {
		d.strings(h, "allowed_hosts", &p.HTTP.AllowedHosts)
		d.strings(h, "allowed_schemes", &p.HTTP.AllowedSchemes)
		if !d.ints(h, "allowed_ports", &p.HTTP.AllowedPorts) {
			p.HTTP.AllowedPorts = defaultPorts(p.HTTP.AllowedSchemes)
		}
		d.boolean(h, "allow_private", &p.HTTP.AllowPrivate)
		d.integer(h, "max_redirects", &p.HTTP.MaxRedirects)
		d.integer(h, "max_request_bytes", &p.HTTP.MaxRequestBytes)
		d.integer(h, "max_response_bytes", &p.HTTP.MaxResponseBytes)
		d.integer(h, "request_timeout_ms", &p.HTTP.RequestTimeoutMS)
		d.strings(h, "allowed_private_networks", &p.HTTP.AllowedPrivateNetworks)
		d.integer(h, "max_requests_per_invocation", &p.HTTP.MaxRequestsPerInvocation)
		d.integer(h, "max_bytes_per_invocation", &p.HTTP.MaxBytesPerInvocation)
	}
	if s := d.subtable(t, "secrets", "allowed", "allow_read"); s != nil {
		d.strings(s, "allowed", &p.Secrets.Allowed)
		d.boolean(s, "allow_read", &p.Secrets.AllowRead)
	}
	if s := d.subtable(t, "storage", "allowed_prefixes", "max_bytes_per_skill", "max_keys_per_skill"); s != nil {
		d.strings(s, "allowed_prefixes", &p.Storage.AllowedPrefixes)
		d.integer(s, "max_bytes_per_skill", &p.Storage.MaxBytesPerSkill)
		d.integer(s, "max_keys_per_skill", &p.Storage.MaxKeysPerSkill)
	}
	if c := d.subtable(t, "channels", "allowed"); c != nil {
		d.strings(c, "allowed", &p.Channels.Allowed)
	}
	if q := d.subtable(t, "quotas", "max_fuel", "max_memory_bytes", "max_wall_clock_ms",
		"max_table_elements", "max_instances", "max_capability_calls"); q != nil {
		d.integer(q, "max_fuel", &p.Quotas.MaxFuel)
		d.integer(q, "max_memory_bytes", &p.Quotas.MaxMemoryBytes)
		d.integer(q, "max_wall_clock_ms", &p.Quotas.MaxWallClockMS)
		d.integer(q, "max_table_elements", &p.Quotas.MaxTableElements)
		d.integer(q, "max_instances", &p.Quotas.MaxInstances)
		d.integer(q, "max_capability_calls", &p.Quotas.MaxCapabilityCalls)
	}
	if c := d.subtable(t, "capabilities", "allow_device", "allow_node", "allow_wildcards", "require_approval"); c != nil {
		d.boolean(c, "allow_device", &p.Capabilities.AllowDevice)
		d.boolean(c, "allow_node", &p.Capabilities.AllowNode)
		d.boolean(c, "allow_wildcards", &p.Capabilities.AllowWildcards)
		d.strings(c, "require_approval", &p.Capabilities.RequireApproval)
	}
	if v := d.subtable(t, "dev", "allow_inline"); v != nil {
		d.boolean(v, "allow_inline", &p.Dev.AllowInline)
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}

// clampInt keeps an int64 within int (for 32-bit platforms); Validate
// then judges the value.
func clampInt(v int64) int {
	if int64(int(v)) != v {
		if v < 0 {
			return math.MinInt
		}
		return math.MaxInt
	}
	return int(v)
}

// table is one TOML table with the path it was found at.
type table struct {
	path string
	m    map[string]any
}

func (t *table) key(k string) string {
	if t.path == "" {
		return k
	}
	return t.path + "." + k
}

// table checks that m has only the known keys. Unknown keys are reported in
// sorted order, so the error is the same on every run.
func (d *decoder) table(path string, m map[string]any, known ...string) *table {
	unknown := []string{}
	for k := range m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	t := &table{path: path, m: m}
	for _, k := range unknown {
		d.fail(t.key(quoteKey(k)), "unknown key")
	}
	return t
}

// subtable returns the table under key k of t, or nil when it is absent or
// not a table.
func (d *decoder) subtable(t *table, k string, known ...string) *table {
	v, ok := t.m[k]
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(t.key(k), "must be a table, found %s", tomlType(v))
		return nil
	}
	return d.table(t.key(k), m, known...)
}

func (d *decoder) strings(t *table, k string, dst *[]string) {
	v, ok := t.m[k]
	if !ok {
		return
	}
	arr, ok := v.([]any)
	if !ok {
		d.fail(t.key(k), "must be an array of strings, found %s", tomlType(v))
		return
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			d.fail(t.key(k)+"["+strconv.Itoa(i)+"]", "must be a string, found %s", tomlType(e))
			return
		}
		out = append(out, s)
	}
	*dst = out
}

// ints reports whether the key was present.
func (d *decoder) ints(t *table, k string, dst *[]int) bool {
	v, ok := t.m[k]
	if !ok {
		return false
	}
	arr, ok := v.([]any)
	if !ok {
		d.fail(t.key(k), "must be an array of integers, found %s", tomlType(v))
		return true
	}
	out := make([]int, 0, len(arr))
	for i, e := range arr {
		n, ok := e.(int64)
		if !ok {
			d.fail(t.key(k)+"["+strconv.Itoa(i)+"]", "must be an integer, found %s", tomlType(e))
			return true
		}
		out = append(out, clampInt(n))
	}
	*dst = out
	return true
}

func (d *decoder) integer(t *table, k string, dst *int64) {
	v, ok := t.m[k]
	if !ok {
		return
	}
	n, ok := v.(int64)
	if !ok {
		d.fail(t.key(k), "must be an integer, found %s", tomlType(v))
		return
	}
	*dst = n
}

func (d *decoder) boolean(t *table, k string, dst *bool) {
	v, ok := t.m[k]
	if !ok {
		return
	}
	b, ok := v.(bool)
	if !ok {
		d.fail(t.key(k), "must be a boolean, found %s", tomlType(v))
		return
	}
	*dst = b
}

// tomlType names the TOML type of a decoded value.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "a date-time"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

// quoteKey quotes a key that is not a bare TOML key, so that an error path
// names exactly one key.
func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return strconv.Quote(k)
		}
	}
	return k
}
