package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits on untrusted input. A guest controls the URL, the headers and the
// body of a request, and the remote server everything in the response.
const (
	// MaxURLBytes bounds the URL of a request and every redirect Location.
	MaxURLBytes = 8 << 10
	// MaxRequestHeaderBytes bounds the guest's headers (names plus values,
	// all together).
	MaxRequestHeaderBytes = 64 << 10
	// MaxResponseHeaderBytes bounds the header section of every response.
	MaxResponseHeaderBytes = 64 << 10
	// MaxRedirectsLimit is the most redirects Do follows whatever the
	// Rules say: a larger Rules.MaxRedirects counts as this.
	MaxRedirectsLimit = 20
	// MaxDialAddrs is how many of a host's (all checked) addresses Do tries
	// to connect to, in the resolver's order.
	MaxDialAddrs = 8
	// MaxHostBytes is the longest host name accepted (RFC 1035).
	MaxHostBytes = 253
	// MaxLabelBytes is the longest label of a host name (RFC 1035).
	MaxLabelBytes = 63
)

// Rules are what one skill's request may do: the skill's HTTP grant
// intersected with the operator's policy (policy.HTTPRules). The zero Rules
// allow nothing. Rules are read, never changed, by this package.
type Rules struct {
	// Hosts are the granted host patterns: an exact host
	// ("api.example.com", an IP address "127.0.0.1" or "::1"), "*.d"
	// (strict subdomains of d, not d itself) or "*" (any host). Patterns are
	// compared ASCII-lower-cased without a trailing dot.
	Hosts []string
	// Schemes are "https" and/or "http".
	Schemes []string
	// Ports are the allowed destination ports (explicit or the scheme's
	// default: 80 for http, 443 for https).
	Ports []int
	// AllowPrivate allows every non-public unicast address (loopback,
	// RFC 1918, link-local and metadata, CGNAT, ULA, ...). Unspecified,
	// multicast and broadcast addresses stay refused.
	AllowPrivate bool
	// PrivateNetworks are non-public networks allowed even when
	// AllowPrivate is false (for example 127.0.0.1/32 for a local server).
	PrivateNetworks []netip.Prefix
	// MaxRedirects is how many redirects are followed, each re-checked
	// against all the rules; 0 follows none (a 3xx is then the response).
	// A value over MaxRedirectsLimit counts as MaxRedirectsLimit.
	MaxRedirects int
	// MaxRequestBytes bounds the request body; 0 allows only an empty body.
	MaxRequestBytes int64
	// MaxResponseBytes bounds the response body; 0 allows only an empty
	// body.
	MaxResponseBytes int64
	// RequestTimeout bounds the whole request: resolution, dial, TLS,
	// redirects and body read. It must be positive.
	RequestTimeout time.Duration
}

// validate refuses Rules that a broker bug produced.
func (r *Rules) validate() error {
	switch {
	case r.RequestTimeout <= 0:
		return fmt.Errorf("%w: RequestTimeout must be positive, found %s", ErrInvalidRules, r.RequestTimeout)
	case r.MaxRedirects < 0:
		return fmt.Errorf("%w: MaxRedirects must be at least 0, found %d", ErrInvalidRules, r.MaxRedirects)
	case r.MaxRequestBytes < 0:
		return fmt.Errorf("%w: MaxRequestBytes must be at least 0, found %d", ErrInvalidRules, r.MaxRequestBytes)
	case r.MaxResponseBytes < 0:
		return fmt.Errorf("%w: MaxResponseBytes must be at least 0, found %d", ErrInvalidRules, r.MaxResponseBytes)
	}
	for _, p := range r.PrivateNetworks {
		if !p.IsValid() {
			return fmt.Errorf("%w: PrivateNetworks holds an invalid prefix", ErrInvalidRules)
		}
	}
	return nil
}

func (r *Rules) maxRedirects() int {
	return min(r.MaxRedirects, MaxRedirectsLimit)
}

// asciiLower lower-cases ASCII letters only, so that no Unicode case
// mapping (the Kelvin sign folds to 'k') can turn one name into another.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// normPattern returns the form a host pattern is compared in.
func normPattern(p string) string {
	p = strings.TrimSuffix(asciiLower(strings.TrimSpace(p)), ".")
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(p, "["), "]")); err == nil {
		return a.String()
	}
	return p
}

// hostAllowed reports whether the normalized host h (a name, or an IP
// address in its canonical text form) matches a granted pattern.
func (r *Rules) hostAllowed(h string, isIP bool) bool {
	for _, raw := range r.Hosts {
		p := normPattern(raw)
		switch {
		case p == "*":
			return true
		case p == h:
			return true
		case !isIP && strings.HasPrefix(p, "*.") && len(p) > 2:
			if d := p[1:]; strings.HasSuffix(h, d) && len(h) > len(d) {
				return true
			}
		}
	}
	return false
}

// schemeAllowed reports whether s (lower-case) is http or https and one of
// the granted schemes.
func (r *Rules) schemeAllowed(s string) bool {
	if s != "http" && s != "https" {
		return false
	}
	return slices.ContainsFunc(r.Schemes, func(x string) bool { return asciiLower(strings.TrimSpace(x)) == s })
}

func (r *Rules) portAllowed(p int) bool { return slices.Contains(r.Ports, p) }

// listRule renders a rule list for an error message, shortened when long.
func listRule[T any](xs []T) string {
	if len(xs) == 0 {
		return "none granted"
	}
	const show = 8
	parts := make([]string, 0, show+1)
	for i, x := range xs {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(xs)-show))
			break
		}
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, ", ")
}

// target is a parsed, checked URL.
type target struct {
	u      *url.URL   // normalized: host lower-case, no trailing dot, no fragment
	host   string     // normalized host; an IP address in canonical form, without brackets
	ip     netip.Addr // the host when it is an IP literal, else invalid
	port   int        // explicit or scheme default
	origin string     // scheme://host:port
}

func defaultPort(scheme string) int {
	switch scheme {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}

func invalidURL(host, format string, args ...any) *DenyError {
	return &DenyError{Reason: ReasonInvalidURL, Host: host, Rule: "absolute http(s) URL with a host name or IP address and no userinfo", Detail: fmt.Sprintf(format, args...)}
}

// parseTarget parses rawURL and normalizes it. It checks the URL's form
// only, not the rules.
func parseTarget(rawURL string) (*target, error) {
	if len(rawURL) > MaxURLBytes {
		return nil, invalidURL("", "URL is %d bytes, over the %d-byte limit", len(rawURL), MaxURLBytes)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL; keep only what is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, invalidURL("", "not a valid URL: %v", err)
	}
	if !u.IsAbs() || u.Opaque != "" {
		return nil, invalidURL("", "URL must be absolute, as scheme://host/path")
	}
	if u.Host == "" {
		return nil, invalidURL("", "URL host is empty")
	}
	hostname := u.Hostname()
	if u.User != nil {
		return nil, invalidURL(asciiLower(hostname), "userinfo (user:password@) is not allowed in the URL")
	}
	t := &target{}
	switch {
	case strings.Contains(hostname, "%"):
		return nil, invalidURL("", "IP zone ids are not allowed in the URL host")
	case hostname == "":
		return nil, invalidURL("", "URL host is empty")
	case strings.HasPrefix(u.Host, "["):
		a, err := netip.ParseAddr(hostname)
		if err != nil || !a.Is6() {
			return nil, invalidURL("", "bracketed URL host is not an IPv6 address")
		}
		t.ip, t.host = a, a.String()
	default:
		if a, err := netip.ParseAddr(hostname); err == nil && a.Is4() {
			t.ip, t.host = a, a.String()
			break
		}
		h, reason := normHostName(hostname)
		if reason != "" {
			return nil, invalidURL(h, "%s", reason)
		}
		t.host = h
	}
	t.port = defaultPort(u.Scheme)
	explicit := false
	if ps := u.Port(); ps != "" {
		p, err := strconv.Atoi(ps)
		if err != nil || p < 1 || p > 65535 {
			return nil, invalidURL(t.host, "port %q is not in 1..65535", ps)
		}
		t.port, explicit = p, p != t.port
	}
	hostPart := t.host
	if t.ip.Is6() {
		hostPart = "[" + t.host + "]"
	}
	if explicit {
		hostPart += ":" + strconv.Itoa(t.port)
	}
	nu := *u
	nu.Host = hostPart
	nu.Fragment, nu.RawFragment = "", ""
	t.u = &nu
	t.origin = u.Scheme + "://" + t.host + ":" + strconv.Itoa(t.port)
	return t, nil
}

// normHostName lower-cases a host name, removes one trailing dot and
// checks it: ASCII letters, digits, '-' and '.', labels of 1..63 bytes not
// starting or ending with '-', at most MaxHostBytes, and a last label that
// is not numeric (so "127.1" or "0x7f.1" is never taken for a name that
// some resolver reads as an address). Non-ASCII (IDN) hosts are refused:
// the guest sends the punycode ("xn--") form, which is matched as is. It
// returns the normalized host and "" or a reason.
func normHostName(h string) (string, string) {
	h = strings.TrimSuffix(asciiLower(h), ".")
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			return h, "non-ASCII (IDN) host: use its punycode (xn--) form"
		}
	}
	if h == "" {
		return "", "URL host is empty"
	}
	if len(h) > MaxHostBytes {
		return "", fmt.Sprintf("host is %d bytes, over the %d-byte limit", len(h), MaxHostBytes)
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" {
			return h, "host has an empty label"
		}
		if len(l) > MaxLabelBytes {
			return h, fmt.Sprintf("host label is %d bytes, over the %d-byte limit", len(l), MaxLabelBytes)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return h, "host label starts or ends with '-'"
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return h, fmt.Sprintf("host has the character %q; only a-z, 0-9, '-' and '.' are allowed", c)
			}
		}
	}
	if numericLabel(labels[len(labels)-1]) {
		return h, "host looks numeric but is not an IP address in dotted-decimal form"
	}
	return h, ""
}

// numericLabel reports whether l is decimal digits or a 0x hex number.
func numericLabel(l string) bool {
	digits := l
	hex := false
	if strings.HasPrefix(l, "0x") {
		digits, hex = l[2:], true
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c >= '0' && c <= '9' || hex && c >= 'a' && c <= 'f' {
			continue
		}
		return false
	}
	return true
}

// check applies the rules that need no network: scheme, host grant, port,
// and the address policy for an IP-literal host.
func (r *Rules) check(t *target) error {
	if !r.schemeAllowed(t.u.Scheme) {
		return &DenyError{Reason: ReasonSchemeNotAllowed, Host: t.host, Rule: listRule(r.Schemes), Detail: strconv.Quote(t.u.Scheme)}
	}
	if !r.hostAllowed(t.host, t.ip.IsValid()) {
		return &DenyError{Reason: ReasonHostNotAllowed, Host: t.host, Rule: listRule(r.Hosts)}
	}
	if !r.portAllowed(t.port) {
		return &DenyError{Reason: ReasonPortNotAllowed, Host: t.host, Rule: listRule(r.Ports), Detail: strconv.Itoa(t.port)}
	}
	if t.ip.IsValid() && !r.addrAllowed(t.ip) {
		return &DenyError{Reason: ReasonPrivateAddress, Host: t.host, Addr: t.ip.String(), Rule: r.privateRule()}
	}
	return nil
}

// CheckURL validates rawURL against the rules without any network access:
// its form (absolute, no userinfo, no zone, a valid host and port), its
// scheme, its host against the grant, its port, and, for an IP-literal
// host, the address policy. A host name's addresses are checked only by Do,
// which resolves it. CheckURL returns the URL normalized (host lower-case,
// without a trailing dot, no fragment, a default port left out), or a
// *DenyError.
func CheckURL(r Rules, rawURL string) (*url.URL, error) {
	t, err := parseTarget(rawURL)
	if err != nil {
		return nil, err
	}
	if err := r.check(t); err != nil {
		return nil, err
	}
	return t.u, nil
}
