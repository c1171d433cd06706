// Package egress is the HTTP egress firewall of the capability broker.
//
// A skill never opens a socket: its sidecar sends each HTTP request
// document back to the supervisor, where host/broker parses it, checks the
// handle, resolves secret handles to values and calls Client.Do with the
// skill's Rules (its grant intersected with the operator's policy). This
// package performs the request on the trusted side and is the only place
// that does, so every check lives here:
//
//   - Form: an absolute http(s) URL without userinfo or IP zone; a host
//     name of ASCII letters, digits and '-' (non-ASCII IDN hosts are
//     refused: the guest sends the punycode form, so no Unicode mapping
//     can make one name match a grant for another); a method among GET,
//     HEAD, POST, PUT, PATCH, DELETE and OPTIONS; no framing or hop-by-hop
//     header from the guest.
//   - Grant: the scheme, the host (exact, "*.domain" for strict
//     subdomains, or "*") and the port (explicit or the scheme default).
//   - Address: the host is resolved once per hop and every address it
//     resolves to must be public (PublicAddr, a deny-by-default table of
//     special-purpose ranges that also looks inside IPv4-mapped, NAT64,
//     6to4 and Teredo addresses) unless the rules allow private networks.
//     Then only the checked addresses are dialled (resolve-then-pin: the
//     transport's own resolution is bypassed, which defeats DNS
//     rebinding), and the established connection's remote address is
//     checked again. TLS verifies the certificate for the URL host.
//   - Redirects are followed by the package, each Location checked by all
//     of the above. Injected secrets (headers and query parameters) go
//     only to the request's origin and never again once a redirect left
//     it; a redirect to another origin that carries a secret value is
//     refused.
//   - Limits: request body and headers, response headers and body, URL
//     length, redirects, and one deadline over the whole request.
//
// There is no ambient proxy, no cookie jar, no connection reuse and no
// transparent decompression: the guest sees the bytes that were sent.
//
// Errors wrap one sentinel each (ErrDenied with a *DenyError carrying a
// stable Reason, ErrRequestTooLarge, ErrResponseTooLarge, ErrTimeout,
// ErrUpstream with an *UpstreamError, ErrInvalidRequest, ErrInvalidRules),
// which the broker maps to the ABI's negative codes (sdk/ABI.md §7). No
// error text, and no Response field this package fills, contains an
// injected secret value: texts are built from the guest's URL host, and
// every error is scrubbed of the values before it is returned. (A server
// that echoes a secret in its response body or headers is outside this
// package's reach: that is the server's response.)
//
// CheckURL applies the rules that need no network to a URL, for callers
// such as a webhook channel that validate a destination ahead of time.
package egress
