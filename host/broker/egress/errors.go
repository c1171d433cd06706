package egress

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
)

// The sentinels of the package. Every error Do and CheckURL return wraps
// exactly one of them (a cancelled context's error is wrapped as well), so
// callers branch with errors.Is and report errcode.Of(err).
var (
	// ErrDenied: the rules refused the request (scheme, host, port, private
	// address, redirect, header, method, URL). The error is a *DenyError.
	ErrDenied = errcode.New("egress_denied", "request denied by the HTTP egress rules")
	// ErrRequestTooLarge: the request body or the guest's headers are over
	// their limit. Nothing was sent.
	ErrRequestTooLarge = errcode.New("egress_request_too_large", "egress request is over its size limit")
	// ErrResponseTooLarge: the response body is over Rules.MaxResponseBytes.
	ErrResponseTooLarge = errcode.New("egress_response_too_large", "egress response body is over its size limit")
	// ErrTimeout: the request's deadline (Rules.RequestTimeout,
	// Request.Timeout or the context's deadline) passed. The error also
	// wraps context.DeadlineExceeded.
	ErrTimeout = errcode.New("egress_timeout", "egress request timed out")
	// ErrUpstream: the remote end failed: connection refused or reset, TLS
	// failure, malformed response. The error is an *UpstreamError. An HTTP
	// error status (4xx, 5xx) is not this: it is a normal Response.
	ErrUpstream = errcode.New("egress_upstream_failure", "egress upstream failure")
	// ErrInvalidRequest: the Request built by the broker is malformed (an
	// Injection with neither or both of Header and Query, a value with a
	// control character). This is a caller bug, not a guest's choice.
	ErrInvalidRequest = errcode.New("egress_invalid_request", "invalid egress request")
	// ErrInvalidRules: the Rules are unusable (a timeout that is not
	// positive, a negative limit). Nothing is sent.
	ErrInvalidRules = errcode.New("egress_invalid_rules", "invalid egress rules")
)

// The stable reasons of a DenyError.
const (
	// ReasonSchemeNotAllowed: the URL scheme is not http/https or not granted.
	ReasonSchemeNotAllowed = "scheme_not_allowed"
	// ReasonHostNotAllowed: the URL host matches no granted host pattern.
	ReasonHostNotAllowed = "host_not_allowed"
	// ReasonPortNotAllowed: the destination port is not an allowed port.
	ReasonPortNotAllowed = "port_not_allowed"
	// ReasonPrivateAddress: the host is, or resolves to (any of its
	// addresses), a non-public address the rules do not allow.
	ReasonPrivateAddress = "private_address"
	// ReasonRedirectLimit: the response is a redirect past Rules.MaxRedirects.
	ReasonRedirectLimit = "redirect_limit"
	// ReasonRedirectDenied: a redirect hop failed a rule; Detail starts
	// with the hop's own reason.
	ReasonRedirectDenied = "redirect_denied"
	// ReasonHeaderNotAllowed: the guest set a framing, hop-by-hop or
	// injected header, an invalid header, or the same header twice.
	ReasonHeaderNotAllowed = "header_not_allowed"
	// ReasonQueryNotAllowed: the guest's URL sets a query parameter that
	// an Injection sets.
	ReasonQueryNotAllowed = "query_not_allowed"
	// ReasonMethodNotAllowed: the method is not one a skill may use.
	ReasonMethodNotAllowed = "method_not_allowed"
	// ReasonInvalidURL: the URL is malformed (not absolute, userinfo, IP
	// zone, bad or empty host, bad port, too long).
	ReasonInvalidURL = "invalid_url"
	// ReasonResolveFailed: the host name did not resolve.
	ReasonResolveFailed = "resolve_failed"
	// ReasonAddressMismatch: the established connection's remote address is
	// not the address that was checked and pinned.
	ReasonAddressMismatch = "address_mismatch"
	// ReasonSecretInRedirect: a redirect to another origin carries the
	// value of an injected secret (in its URL); it is not followed. Used in
	// the Detail of a redirect_denied error.
	ReasonSecretInRedirect = "secret_in_redirect"
)

// DenyError is the error of a request the rules refuse. It wraps ErrDenied.
type DenyError struct {
	// Reason is one of the Reason* constants.
	Reason string
	// Host is the URL host the request (or the redirect hop) was for, as
	// normalized; "" when the URL has none.
	Host string
	// Addr is the IP address at fault for private_address and
	// address_mismatch, else "".
	Addr string
	// Rule is the rule the request failed against, in words: the granted
	// hosts, schemes or ports, the redirect limit.
	Rule string
	// Detail says more: for redirect_denied the Reason of the refused hop
	// followed by its description; for invalid_url what is wrong.
	Detail string
}

// Error names the host and the rule, never a secret or a full URL.
func (e *DenyError) Error() string {
	var b strings.Builder
	b.WriteString("egress denied: ")
	switch e.Reason {
	case ReasonSchemeNotAllowed:
		fmt.Fprintf(&b, "scheme %s of host %q is not in the skill's HTTP rules (%s)", e.Detail, e.Host, e.Rule)
	case ReasonHostNotAllowed:
		fmt.Fprintf(&b, "host %q is not in the skill's HTTP grant (%s)", e.Host, e.Rule)
	case ReasonPortNotAllowed:
		fmt.Fprintf(&b, "port %s of host %q is not in the skill's HTTP rules (%s)", e.Detail, e.Host, e.Rule)
	case ReasonPrivateAddress:
		fmt.Fprintf(&b, "host %q is or resolves to the non-public address %s, which the skill's HTTP rules do not allow (%s)", e.Host, e.Addr, e.Rule)
	case ReasonAddressMismatch:
		fmt.Fprintf(&b, "connection to host %q reached %s, not the checked address (%s)", e.Host, e.Addr, e.Rule)
	case ReasonRedirectLimit:
		fmt.Fprintf(&b, "request to host %q was redirected more often than the skill's HTTP rules allow (%s)", e.Host, e.Rule)
	case ReasonRedirectDenied:
		fmt.Fprintf(&b, "redirect to host %q refused: %s", e.Host, e.Detail)
	case ReasonSecretInRedirect:
		fmt.Fprintf(&b, "redirect to host %q carries the value of an injected secret, which is sent only to the request's origin", e.Host)
	case ReasonHeaderNotAllowed:
		fmt.Fprintf(&b, "header %s may not be set by the skill (request to host %q): %s", e.Rule, e.Host, e.Detail)
	case ReasonQueryNotAllowed:
		fmt.Fprintf(&b, "query parameter %s may not be set by the skill (request to host %q): %s", e.Rule, e.Host, e.Detail)
	case ReasonMethodNotAllowed:
		fmt.Fprintf(&b, "method %s is not allowed (request to host %q; allowed: %s)", e.Detail, e.Host, e.Rule)
	case ReasonInvalidURL:
		fmt.Fprintf(&b, "invalid URL (host %q): %s", e.Host, e.Detail)
	case ReasonResolveFailed:
		fmt.Fprintf(&b, "host %q could not be resolved: %s", e.Host, e.Detail)
	default:
		fmt.Fprintf(&b, "%s (host %q): %s", e.Reason, e.Host, e.Detail)
	}
	return b.String()
}

// Unwrap returns ErrDenied.
func (e *DenyError) Unwrap() error { return ErrDenied }

// UpstreamError is the error of a request the remote end failed. It wraps
// ErrUpstream and, when it is safe to keep, the underlying error.
type UpstreamError struct {
	// Host is the URL host of the failed hop.
	Host string
	// Addr is the address dialled ("ip:port"), "" before any dial.
	Addr string
	// Op is what failed: "dial", "tls handshake", "round trip", "read body".
	Op string
	// Err is the underlying error, with every injected secret removed from
	// its text. It may be nil.
	Err error
}

// Error names the operation, the host and the address.
func (e *UpstreamError) Error() string {
	msg := fmt.Sprintf("egress upstream failure: %s with host %q", e.Op, e.Host)
	if e.Addr != "" {
		msg += " (" + e.Addr + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrUpstream and the underlying error.
func (e *UpstreamError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrUpstream}
	}
	return []error{ErrUpstream, e.Err}
}

// redactedText is what replaces a secret in an error text.
const redactedText = "[redacted]"

// secretForms returns the spellings of a secret value that may appear in
// an error text: as is and URL-escaped.
func secretForms(secrets []string) []string {
	var forms []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		forms = append(forms, s)
		for _, f := range []string{url.QueryEscape(s), url.PathEscape(s)} {
			if f != s {
				forms = append(forms, f)
			}
		}
	}
	return forms
}

// containsAny reports whether text contains one of forms.
func containsAny(text string, forms []string) bool {
	for _, f := range forms {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// redact replaces every form in text.
func redact(text string, forms []string) string {
	for _, f := range forms {
		text = strings.ReplaceAll(text, f, redactedText)
	}
	return text
}

// redactedError keeps the sentinel chain of an error whose text contained a
// secret, but not the error itself: its text is the redacted text.
type redactedError struct {
	msg   string
	chain []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.chain }

// scrub returns err unchanged when its text holds no secret; otherwise an
// error with the secret replaced that still matches the package sentinels
// (and context errors) with errors.Is. A DenyError is copied field by field
// so that errors.As keeps working.
func scrub(err error, forms []string) error {
	if err == nil || len(forms) == 0 || !containsAny(err.Error(), forms) {
		return err
	}
	var de *DenyError
	if errors.As(err, &de) {
		c := *de
		c.Host, c.Addr, c.Rule, c.Detail = redact(c.Host, forms), redact(c.Addr, forms), redact(c.Rule, forms), redact(c.Detail, forms)
		return &c
	}
	var ue *UpstreamError
	if errors.As(err, &ue) {
		c := *ue
		c.Host, c.Addr = redact(c.Host, forms), redact(c.Addr, forms)
		if c.Err != nil && containsAny(c.Err.Error(), forms) {
			c.Err = errors.New(redact(c.Err.Error(), forms))
		}
		return &c
	}
	var chain []error
	for _, s := range []error{ErrRequestTooLarge, ErrResponseTooLarge, ErrTimeout, ErrInvalidRequest, ErrInvalidRules, ErrDenied, ErrUpstream} {
		if errors.Is(err, s) {
			chain = append(chain, s)
		}
	}
	for _, s := range contextErrs {
		if errors.Is(err, s) {
			chain = append(chain, s)
		}
	}
	return &redactedError{msg: redact(err.Error(), forms), chain: chain}
}
