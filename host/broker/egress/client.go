package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/palyra-go/palyra/internal/textutil"
)

// Defaults of Config.
const (
	// DefaultDialTimeout bounds one TCP connect when Config.DialTimeout is 0.
	DefaultDialTimeout = 10 * time.Second
	// DefaultUserAgent is sent when the guest sets no User-Agent and
	// Config.UserAgent is "".
	DefaultUserAgent = "palyra-go-egress/1"
)

// Resolver looks up the addresses of a host name. *net.Resolver is one.
type Resolver interface {
	// LookupNetIP returns the addresses of host; network is "ip".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Client. The zero Config is usable.
type Config struct {
	// Resolver resolves host names; nil means net.DefaultResolver. Each
	// host is resolved once per request hop and only the checked addresses
	// are dialled.
	Resolver Resolver
	// TLSConfig is the base TLS configuration (root CAs, minimum version);
	// nil means the system roots. It is cloned for every connection with
	// ServerName set to the URL host; InsecureSkipVerify is always turned
	// off, a MinVersion below TLS 1.2 raised to it, and only HTTP/1.1 is
	// offered by ALPN.
	TLSConfig *tls.Config
	// DialTimeout bounds one TCP connect; 0 means DefaultDialTimeout. The
	// request's own deadline applies as well.
	DialTimeout time.Duration
	// UserAgent is sent when the guest sets no User-Agent; "" means
	// DefaultUserAgent.
	UserAgent string
}

// Client performs HTTP requests for skills under Rules. It keeps no cookie
// jar, uses no proxy and no connection across requests. It is safe for
// concurrent use.
type Client struct {
	resolver    Resolver
	tlsBase     *tls.Config
	dialTimeout time.Duration
	userAgent   string
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	c := &Client{resolver: cfg.Resolver, dialTimeout: cfg.DialTimeout, userAgent: cfg.UserAgent}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	if cfg.TLSConfig != nil {
		c.tlsBase = cfg.TLSConfig.Clone()
	} else {
		c.tlsBase = &tls.Config{}
	}
	if c.dialTimeout <= 0 {
		c.dialTimeout = DefaultDialTimeout
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	return c
}

// Request is one HTTP request of a skill, as the broker built it from the
// guest's request document and the skill's secrets.
type Request struct {
	// Method is GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS; "" is GET.
	Method string
	// URL is the absolute http or https URL the guest asked for.
	URL string
	// Header holds the guest's plain headers. Hop-by-hop and framing
	// headers (Host, Content-Length, Transfer-Encoding, Connection,
	// Upgrade, Proxy-*, Keep-Alive, TE, Trailer, Expect) and headers an
	// Injection sets are refused.
	Header map[string]string
	// Body is the request body, at most Rules.MaxRequestBytes.
	Body []byte
	// Inject are the secret values the broker resolved for the request.
	Inject []Injection
	// Timeout is the guest's own timeout; when positive it can only
	// shorten Rules.RequestTimeout.
	Timeout time.Duration
}

// Injection puts one secret value into the request: exactly one of Header
// and Query names where. Injected values are sent only to the origin
// (scheme, host and port) of Request.URL; they never appear in an error,
// in Response.FinalURL, or anywhere else this package returns.
type Injection struct {
	// Header is the header to set, e.g. "authorization".
	Header string
	// Query is the query parameter to add, e.g. "api_key".
	Query string
	// Value is the secret value, already formatted ("Bearer ...").
	Value string
}

// Response is the final response of a request, after redirects.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header has lower-case names; repeated values are joined with ", ".
	Header map[string]string
	// Body is the response body, at most Rules.MaxResponseBytes.
	Body []byte
	// FinalURL is the URL of the last hop, without injected query
	// parameters.
	FinalURL string
	// Redirects is how many redirects were followed.
	Redirects int
	// Addr is the address the last hop was connected to.
	Addr netip.AddrPort
	// BytesSent is the request body bytes sent, over all hops.
	// BytesReceived is the response body bytes read.
	BytesSent, BytesReceived int64
}

// allowedMethods are the methods a skill may use.
var allowedMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// forbiddenHeaders are headers only the HTTP client itself may set.
var forbiddenHeaders = []string{"host", "content-length", "transfer-encoding", "connection", "upgrade", "keep-alive", "te", "trailer", "expect"}

// crossOriginDropped are guest headers not sent once a redirect leaves the
// request's origin.
var crossOriginDropped = []string{"authorization", "cookie"}

// contextErrs are kept in the chain of a scrubbed error.
var contextErrs = []error{context.Canceled, context.DeadlineExceeded}

// limitError is a size-limit error: its own message and a sentinel.
type limitError struct {
	sentinel error
	msg      string
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.sentinel }

// Do performs req under the rules: it checks the method, URL, headers and
// body, resolves the host once and refuses every non-public address the
// rules do not allow, dials exactly the checked addresses, follows
// redirects (each hop checked again the same way) and reads the response
// body under its cap, all within the request's deadline. The error wraps
// one of the package sentinels (or the context's error when ctx is
// cancelled) and never contains an injected value.
func (c *Client) Do(ctx context.Context, r Rules, req Request) (*Response, error) {
	var secrets []string
	for _, in := range req.Inject {
		secrets = append(secrets, in.Value)
	}
	forms := secretForms(secrets)
	resp, err := c.do(ctx, &r, &req, forms)
	if err != nil {
		return nil, scrub(err, forms)
	}
	return resp, nil
}

// prepared is a request that passed every check that needs no network.
type prepared struct {
	method       string
	target       *target
	header       http.Header
	body         []byte
	injectHeader http.Header
	injectQuery  []Injection
}

// prepare checks everything about req that needs no network.
func (c *Client) prepare(r *Rules, req *Request) (*prepared, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	t, err := parseTarget(req.URL)
	if err != nil {
		return nil, err
	}
	p := &prepared{method: req.Method, target: t, header: http.Header{}, injectHeader: http.Header{}}
	if p.method == "" {
		p.method = http.MethodGet
	}
	if !slices.Contains(allowedMethods, p.method) {
		m := p.method
		if len(m) > 32 {
			m = m[:32] + "..."
		}
		return nil, &DenyError{Reason: ReasonMethodNotAllowed, Host: t.host, Rule: strings.Join(allowedMethods, ", "), Detail: strconv.Quote(m)}
	}
	if err := r.check(t); err != nil {
		return nil, err
	}
	injected := map[string]bool{}
	for i, in := range req.Inject {
		switch {
		case (in.Header == "") == (in.Query == ""):
			return nil, fmt.Errorf("%w: injection %d must set exactly one of Header and Query", ErrInvalidRequest, i)
		case in.Header != "":
			name := asciiLower(in.Header)
			if !validHeaderName(name) {
				return nil, fmt.Errorf("%w: injection %d: header name %q is not a valid HTTP token", ErrInvalidRequest, i, in.Header)
			}
			if forbiddenHeader(name) {
				return nil, &DenyError{Reason: ReasonHeaderNotAllowed, Host: t.host, Rule: strconv.Quote(name), Detail: "a framing or hop-by-hop header cannot carry a secret"}
			}
			if injected[name] {
				return nil, fmt.Errorf("%w: injection %d: header %q is injected twice", ErrInvalidRequest, i, name)
			}
			if !validHeaderValue(in.Value) {
				return nil, fmt.Errorf("%w: injection %d: the value for header %q has a control character", ErrInvalidRequest, i, name)
			}
			injected[name] = true
			p.injectHeader.Set(name, in.Value)
		default:
			if slices.ContainsFunc(p.injectQuery, func(x Injection) bool { return x.Query == in.Query }) {
				return nil, fmt.Errorf("%w: injection %d: query parameter %q is injected twice", ErrInvalidRequest, i, in.Query)
			}
			if queryHas(t.u.RawQuery, in.Query) {
				return nil, &DenyError{Reason: ReasonQueryNotAllowed, Host: t.host, Rule: strconv.Quote(in.Query), Detail: "the parameter carries an injected secret"}
			}
			p.injectQuery = append(p.injectQuery, in)
		}
	}
	size := 0
	seen := map[string]bool{}
	for k, v := range req.Header {
		name := asciiLower(k)
		size += len(k) + len(v)
		switch {
		case !validHeaderName(name):
			return nil, &DenyError{Reason: ReasonHeaderNotAllowed, Host: t.host, Rule: strconv.Quote(textutil.Ellipsize(k, 64, "...")), Detail: "not a valid HTTP header name"}
		case forbiddenHeader(name):
			return nil, &DenyError{Reason: ReasonHeaderNotAllowed, Host: t.host, Rule: strconv.Quote(name), Detail: "framing and hop-by-hop headers are set by the host"}
		case injected[name]:
			return nil, &DenyError{Reason: ReasonHeaderNotAllowed, Host: t.host, Rule: strconv.Quote(name), Detail: "the header carries an injected secret"}
		case seen[name]:
			return nil, &DenyError{Reason: ReasonHeaderNotAllowed, Host: t.host, Rule: strconv.Quote(name), Detail: "the header is given twice, in different cases"}
		case !validHeaderValue(v):
			return nil, &DenyError{Reason: ReasonHeaderNotAllowed, Host: t.host, Rule: strconv.Quote(name), Detail: "the value has a control character"}
		}
		seen[name] = true
		p.header.Set(name, v)
	}
	if size > MaxRequestHeaderBytes {
		return nil, &limitError{ErrRequestTooLarge, fmt.Sprintf("egress: request headers for host %q are %d bytes, over the %d-byte limit", t.host, size, MaxRequestHeaderBytes)}
	}
	if p.header.Get("user-agent") == "" {
		p.header.Set("user-agent", c.userAgent)
	}
	if int64(len(req.Body)) > r.MaxRequestBytes {
		return nil, &limitError{ErrRequestTooLarge, fmt.Sprintf("egress: request body for host %q is %d bytes, over the %d-byte limit", t.host, len(req.Body), r.MaxRequestBytes)}
	}
	p.body = req.Body
	return p, nil
}

func forbiddenHeader(name string) bool {
	return slices.Contains(forbiddenHeaders, name) || strings.HasPrefix(name, "proxy-")
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// validHeaderValue reports whether s has no control character but HTAB.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// queryHas reports whether the raw query has a parameter named name.
func queryHas(rawQuery, name string) bool {
	for _, kv := range strings.Split(rawQuery, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == name || k == name {
			return true
		}
	}
	return false
}

// stripQuery removes the parameters named in inj from a raw query and
// keeps the rest as they were written.
func stripQuery(rawQuery string, inj []Injection) string {
	if rawQuery == "" || len(inj) == 0 {
		return rawQuery
	}
	var kept []string
	for _, kv := range strings.Split(rawQuery, "&") {
		k, _, _ := strings.Cut(kv, "=")
		uk, err := url.QueryUnescape(k)
		if slices.ContainsFunc(inj, func(in Injection) bool { return in.Query == k || err == nil && in.Query == uk }) {
			continue
		}
		kept = append(kept, kv)
	}
	return strings.Join(kept, "&")
}

// withQuery returns a copy of u whose query has the injected parameters
// (appended) instead of any of the same name.
func withQuery(u *url.URL, inj []Injection) *url.URL {
	nu := *u
	if len(inj) == 0 {
		return &nu
	}
	q := stripQuery(u.RawQuery, inj)
	for _, in := range inj {
		if q != "" {
			q += "&"
		}
		q += url.QueryEscape(in.Query) + "=" + url.QueryEscape(in.Value)
	}
	nu.RawQuery, nu.ForceQuery = q, false
	return &nu
}

// do is Do without the final scrubbing of error texts.
func (c *Client) do(parent context.Context, r *Rules, req *Request, forms []string) (*Response, error) {
	p, err := c.prepare(r, req)
	if err != nil {
		return nil, err
	}
	timeout := r.RequestTimeout
	if req.Timeout > 0 && req.Timeout < timeout {
		timeout = req.Timeout
	}
	if dl, ok := parent.Deadline(); ok {
		timeout = max(min(timeout, time.Until(dl)), 0)
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()

	cur := p.target
	method, body := p.method, p.body
	header := p.header
	leftOrigin := false
	out := &Response{}
	for redirects := 0; ; redirects++ {
		// Secrets go only to the request's origin, and never again once a
		// redirect has left it (a foreign server could send the chain back
		// to a path of its choosing).
		if cur.origin != p.target.origin {
			leftOrigin = true
		}
		secretsHere := !leftOrigin
		h := &hop{client: c, rules: r, target: cur, redirect: redirects > 0}
		if err := h.resolve(ctx); err != nil {
			return nil, c.ctxOr(parent, ctx, cur.host, timeout, err)
		}
		wire := cur.u
		hdr := header.Clone()
		if secretsHere {
			wire = withQuery(cur.u, p.injectQuery)
			for k, v := range p.injectHeader {
				hdr[k] = v
			}
		}
		resp, err := h.roundTrip(ctx, method, wire, hdr, body)
		if err != nil {
			return nil, c.ctxOr(parent, ctx, cur.host, timeout, err)
		}
		out.BytesSent += int64(len(body))
		loc := resp.Header.Get("Location")
		if isRedirect(resp.StatusCode) && loc != "" && r.maxRedirects() > 0 {
			resp.Body.Close()
			if redirects >= r.maxRedirects() {
				return nil, &DenyError{Reason: ReasonRedirectLimit, Host: cur.host, Rule: fmt.Sprintf("at most %d redirects", r.maxRedirects())}
			}
			next, err := c.nextHop(r, cur, loc, leftOrigin, p.target.origin, forms)
			if err != nil {
				return nil, err
			}
			if next.origin != p.target.origin || leftOrigin {
				header = dropHeaders(header, crossOriginDropped)
			}
			switch resp.StatusCode {
			case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
				if method != http.MethodHead {
					method = http.MethodGet
				}
				if body != nil {
					body = nil
					header = dropHeaders(header, []string{"content-type"})
				}
			}
			cur = next
			out.Redirects++
			continue
		}
		defer resp.Body.Close()
		data, err := h.readBody(resp, method)
		if err != nil {
			return nil, c.ctxOr(parent, ctx, cur.host, timeout, err)
		}
		out.Status = resp.StatusCode
		out.Header = make(map[string]string, len(resp.Header))
		for k, vs := range resp.Header {
			out.Header[asciiLower(k)] = strings.Join(vs, ", ")
		}
		out.Body = data
		out.BytesReceived = int64(len(data))
		fu := *cur.u
		fu.RawQuery = stripQuery(fu.RawQuery, p.injectQuery)
		out.FinalURL = redact(fu.String(), forms)
		out.Addr = h.connectedAddr()
		return out, nil
	}
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func dropHeaders(h http.Header, names []string) http.Header {
	h = h.Clone()
	for _, n := range names {
		h.Del(n)
	}
	return h
}

// nextHop resolves a redirect Location against the current URL and checks
// it with every rule that needs no network. A refused hop is a
// redirect_denied DenyError with the hop's reason in Detail.
func (c *Client) nextHop(r *Rules, cur *target, loc string, left bool, origin string, forms []string) (*target, error) {
	deny := func(host string, inner error) error {
		return &DenyError{Reason: ReasonRedirectDenied, Host: host, Rule: "every redirect hop is checked against all the rules", Detail: hopDetail(inner)}
	}
	if len(loc) > MaxURLBytes {
		return nil, deny(cur.host, invalidURL(cur.host, "Location is %d bytes, over the %d-byte limit", len(loc), MaxURLBytes))
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, deny(cur.host, invalidURL(cur.host, "Location is not a valid URL"))
	}
	next, err := parseTarget(cur.u.ResolveReference(ref).String())
	if err != nil {
		return nil, deny(cur.host, err)
	}
	if err := r.check(next); err != nil {
		return nil, deny(next.host, err)
	}
	if (left || next.origin != origin) && carriesSecret(next.u, forms) {
		return nil, deny(next.host, &DenyError{Reason: ReasonSecretInRedirect, Host: next.host})
	}
	return next, nil
}

// carriesSecret reports whether u holds a secret form anywhere, raw or
// after decoding its path and query.
func carriesSecret(u *url.URL, forms []string) bool {
	if len(forms) == 0 {
		return false
	}
	parts := []string{u.String(), u.Path}
	q, _ := url.ParseQuery(u.RawQuery) // what parsed, even past a bad escape
	for k, vs := range q {
		parts = append(parts, k)
		parts = append(parts, vs...)
	}
	for _, p := range parts {
		if containsAny(p, forms) {
			return true
		}
	}
	return false
}

// ctxOr maps an error that happened while ctx was done to a timeout or a
// cancellation error; other errors are returned as they are.
func (c *Client) ctxOr(parent, ctx context.Context, host string, timeout time.Duration, err error) error {
	var de *DenyError
	if errors.As(err, &de) {
		return err
	}
	if ctx.Err() == nil {
		return err
	}
	if perr := parent.Err(); errors.Is(perr, context.Canceled) {
		return fmt.Errorf("egress: request to host %q was cancelled: %w", host, perr)
	}
	return &timeoutError{host: host, timeout: timeout}
}

// timeoutError is the error of a request whose deadline passed.
type timeoutError struct {
	host    string
	timeout time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("egress: request to host %q did not finish within its %s timeout", e.host, e.timeout.Round(time.Millisecond))
}

func (e *timeoutError) Unwrap() []error { return []error{ErrTimeout, context.DeadlineExceeded} }

// hop is one request of a redirect chain: its resolved, checked addresses
// and what its connection did.
type hop struct {
	client   *Client
	rules    *Rules
	target   *target
	redirect bool
	addrs    []netip.Addr // checked, unmapped, deduplicated

	mu        sync.Mutex
	connected netip.AddrPort // the address the connection reached
	failure   error          // a deny or an upstream error from the dialer
}

// deny wraps a refusal of a redirect hop into redirect_denied.
func (h *hop) deny(de *DenyError) error {
	if !h.redirect {
		return de
	}
	return &DenyError{Reason: ReasonRedirectDenied, Host: de.Host, Addr: de.Addr, Rule: "every redirect hop is checked against all the rules", Detail: hopDetail(de)}
}

// hopDetail is the Detail of a redirect_denied error: the refused hop's
// reason, then its description.
func hopDetail(err error) string {
	var de *DenyError
	if errors.As(err, &de) {
		return de.Reason + ": " + strings.TrimPrefix(de.Error(), "egress denied: ")
	}
	return err.Error()
}

// resolve looks the host up once (an IP literal is not looked up) and
// refuses the hop when any address is not allowed.
func (h *hop) resolve(ctx context.Context) error {
	t := h.target
	var got []netip.Addr
	if t.ip.IsValid() {
		got = []netip.Addr{t.ip}
	} else {
		addrs, err := h.client.resolver.LookupNetIP(ctx, "ip", t.host)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			detail := err.Error()
			var dnsErr *net.DNSError
			if errors.As(err, &dnsErr) {
				detail = dnsErr.Err
				if dnsErr.IsNotFound {
					detail = "no such host"
				}
			}
			return h.deny(&DenyError{Reason: ReasonResolveFailed, Host: t.host, Rule: "the host must resolve", Detail: detail})
		}
		got = addrs
	}
	if len(got) == 0 {
		return h.deny(&DenyError{Reason: ReasonResolveFailed, Host: t.host, Rule: "the host must resolve", Detail: "no addresses"})
	}
	for _, a := range got {
		if !h.rules.addrAllowed(a) {
			return h.deny(&DenyError{Reason: ReasonPrivateAddress, Host: t.host, Addr: a.String(), Rule: h.rules.privateRule()})
		}
		if u := a.Unmap(); !slices.Contains(h.addrs, u) {
			h.addrs = append(h.addrs, u)
		}
	}
	return nil
}

// checkConn is the check of an established connection: it must have
// reached the pinned address, and that address must still pass the rules.
func checkConn(r *Rules, host string, pinned, remote netip.AddrPort) *DenyError {
	if remote.Addr().Unmap() != pinned.Addr().Unmap() || remote.Port() != pinned.Port() {
		return &DenyError{Reason: ReasonAddressMismatch, Host: host, Addr: remote.String(), Rule: "pinned " + pinned.String()}
	}
	if !r.addrAllowed(remote.Addr()) {
		return &DenyError{Reason: ReasonPrivateAddress, Host: host, Addr: remote.Addr().String(), Rule: r.privateRule()}
	}
	return nil
}

// dial connects to the checked addresses in order, ignoring the address
// http.Transport asks for.
func (h *hop) dial(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: h.client.dialTimeout}
	var lastErr error
	var lastAddr netip.AddrPort
	for _, a := range h.addrs[:min(len(h.addrs), MaxDialAddrs)] {
		pinned := netip.AddrPortFrom(a, uint16(h.target.port))
		conn, err := d.DialContext(ctx, "tcp", pinned.String())
		if err != nil {
			lastErr, lastAddr = err, pinned
			if ctx.Err() != nil {
				break
			}
			continue
		}
		var remote netip.AddrPort
		if ta, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
			remote = ta.AddrPort()
		}
		if de := checkConn(h.rules, h.target.host, pinned, remote); de != nil {
			conn.Close()
			h.fail(h.deny(de))
			return nil, de
		}
		h.mu.Lock()
		h.connected = pinned
		h.mu.Unlock()
		return conn, nil
	}
	ue := &UpstreamError{Host: h.target.host, Addr: lastAddr.String(), Op: "dial", Err: lastErr}
	h.fail(ue)
	return nil, ue
}

// dialTLS dials and completes a TLS handshake that verifies the server's
// certificate for the URL host.
func (h *hop) dialTLS(ctx context.Context) (net.Conn, error) {
	conn, err := h.dial(ctx)
	if err != nil {
		return nil, err
	}
	cfg := h.client.tlsBase.Clone()
	cfg.ServerName = h.target.host
	cfg.InsecureSkipVerify = false
	cfg.NextProtos = []string{"http/1.1"}
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		ue := &UpstreamError{Host: h.target.host, Addr: h.connectedAddr().String(), Op: "tls handshake", Err: err}
		h.fail(ue)
		return nil, ue
	}
	return tc, nil
}

func (h *hop) fail(err error) {
	h.mu.Lock()
	if h.failure == nil {
		h.failure = err
	}
	h.mu.Unlock()
}

func (h *hop) failed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failure
}

func (h *hop) connectedAddr() netip.AddrPort {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.connected
}

// roundTrip sends one request over a fresh connection to the pinned
// addresses: no proxy, no keep-alive, no compression, HTTP/1.1.
func (h *hop) roundTrip(ctx context.Context, method string, u *url.URL, hdr http.Header, body []byte) (*http.Response, error) {
	tr := &http.Transport{
		Proxy: nil,
		// The dialers ignore the address the transport asks for and the
		// transport's dial context (detached from the request so that a
		// connection can be reused, which never happens here): they dial
		// the pinned addresses under the request's own context.
		DialContext:            func(context.Context, string, string) (net.Conn, error) { return h.dial(ctx) },
		DialTLSContext:         func(context.Context, string, string) (net.Conn, error) { return h.dialTLS(ctx) },
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
	}
	hreq := &http.Request{
		Method:     method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     hdr,
		Host:       u.Host,
	}
	if len(body) > 0 {
		hreq.Body = io.NopCloser(bytes.NewReader(body))
		hreq.ContentLength = int64(len(body))
	}
	resp, err := tr.RoundTrip(hreq.WithContext(ctx))
	if err != nil {
		tr.CloseIdleConnections()
		if f := h.failed(); f != nil {
			return nil, f
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UpstreamError{Host: h.target.host, Addr: h.connectedAddr().String(), Op: "round trip", Err: transportErr(err)}
	}
	resp.Body = &closeTransport{ReadCloser: resp.Body, tr: tr}
	return resp, nil
}

// transportErr strips the URL a *url.Error repeats (it may hold an
// injected query value).
func transportErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// closeTransport closes the hop's transport with the body.
type closeTransport struct {
	io.ReadCloser
	tr *http.Transport
}

func (c *closeTransport) Close() error {
	err := c.ReadCloser.Close()
	c.tr.CloseIdleConnections()
	return err
}

// readBody reads the body under the response cap.
func (h *hop) readBody(resp *http.Response, method string) ([]byte, error) {
	limit := h.rules.MaxResponseBytes
	// A HEAD response declares the length of a body it does not send.
	if method != http.MethodHead && resp.ContentLength > limit {
		return nil, &limitError{ErrResponseTooLarge, fmt.Sprintf("egress: response body is over the %d-byte limit (host %q declared %d bytes)", limit, h.target.host, resp.ContentLength)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if int64(len(data)) > limit {
		return nil, &limitError{ErrResponseTooLarge, fmt.Sprintf("egress: response body is over the %d-byte limit (host %q sent more than %d bytes)", limit, h.target.host, limit)}
	}
	if err != nil {
		return nil, &UpstreamError{Host: h.target.host, Addr: h.connectedAddr().String(), Op: "read body", Err: transportErr(err)}
	}
	return data, nil
}
