package broker

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/broker/egress"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/sdk/abi"
)

// maxResponseHeaderBytes bounds the headers copied into a response
// document; maxDocBody is the largest body whose base64 still fits a
// response document (abi.MaxResponseBytes) next to the headers.
const (
	maxResponseHeaderBytes = 64 << 10
	maxDocBody             = (abi.MaxResponseBytes - maxResponseHeaderBytes - 1024) / 4 * 3
	// maxInjections bounds secret_headers + secret_query of one request.
	maxInjections = 8
	// secretPlaceholder is replaced by the secret value in a format.
	secretPlaceholder = "{secret}"
)

type httpRequestDoc struct {
	Method        string            `json:"method"`
	URL           string            `json:"url"`
	Headers       map[string]string `json:"headers"`
	Body          *string           `json:"body"`
	BodyBase64    []byte            `json:"body_base64"`
	SecretHeaders []secretUseDoc    `json:"secret_headers"`
	SecretQuery   []secretUseDoc    `json:"secret_query"`
	TimeoutMS     int64             `json:"timeout_ms"`
}

type secretUseDoc struct {
	Name         string `json:"name"`
	SecretHandle int32  `json:"secret_handle"`
	Format       string `json:"format"`
}

type httpResponseDoc struct {
	Status     int               `json:"status"`
	Headers    map[string]string `json:"headers"`
	BodyBase64 []byte            `json:"body_base64"`
}

// EgressRules returns the egress rules of the policy's HTTP rules h with
// the given host patterns.
func EgressRules(h policy.HTTPRules, hosts []string) egress.Rules {
	return egress.Rules{
		Hosts:            hosts,
		Schemes:          h.Schemes,
		Ports:            h.Ports,
		AllowPrivate:     h.AllowPrivate,
		PrivateNetworks:  h.PrivateNetworks,
		MaxRedirects:     int(h.MaxRedirects),
		MaxRequestBytes:  h.MaxRequestBytes,
		MaxResponseBytes: h.MaxResponseBytes,
		RequestTimeout:   h.RequestTimeout,
	}
}

func (op *operation) http(ctx context.Context, grant string) ([]byte, error) {
	if op.b.cfg.Egress == nil {
		return nil, refuse(abi.CodeUnavailable, "unavailable", "HTTP egress is not configured on this host")
	}
	var doc httpRequestDoc
	if err := decodeStrict(op.req.Request, &doc); err != nil {
		return nil, err
	}
	if doc.Body != nil && doc.BodyBase64 != nil {
		return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "set at most one of body and body_base64")
	}
	if doc.TimeoutMS < 0 {
		return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "timeout_ms must not be negative")
	}
	if n := len(doc.SecretHeaders) + len(doc.SecretQuery); n > maxInjections {
		return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "%d secret injections, over the limit of %d per request", n, maxInjections)
	}
	in := op.in
	g := in.Grants.HTTP
	// The URL must be the handle's host or under its pattern; redirects
	// may then go to any granted host, each hop checked again. Only when
	// the host is refused is the whole grant consulted, for the message.
	if _, err := egress.CheckURL(EgressRules(g, []string{grant}), doc.URL); err != nil {
		var de *egress.DenyError
		if !errors.As(err, &de) || de.Reason != "host_not_allowed" {
			return nil, op.egressFailure(err)
		}
		if _, aerr := egress.CheckURL(EgressRules(g, in.Grants.HTTPHosts), doc.URL); aerr != nil {
			return nil, op.egressFailure(aerr) // names the host and the whole grant
		}
		return nil, deny("host_not_allowed", "host %q is granted, but not through handle %d (%s): use the handle of its grant", de.Host, op.req.Handle, grant)
	}
	req := egress.Request{Method: doc.Method, URL: doc.URL, Header: doc.Headers}
	if req.Method == "" {
		req.Method = "GET"
	}
	switch {
	case doc.Body != nil:
		req.Body = []byte(*doc.Body)
	case doc.BodyBase64 != nil:
		req.Body = doc.BodyBase64
	}
	if doc.TimeoutMS > 0 {
		req.Timeout = time.Duration(min(doc.TimeoutMS, int64(24*time.Hour/time.Millisecond))) * time.Millisecond
	}
	for _, use := range doc.SecretHeaders {
		inj, err := op.injection(ctx, use, "secret_headers")
		if err != nil {
			return nil, err
		}
		inj.Header = use.Name
		req.Inject = append(req.Inject, inj)
	}
	for _, use := range doc.SecretQuery {
		inj, err := op.injection(ctx, use, "secret_query")
		if err != nil {
			return nil, err
		}
		inj.Query = use.Name
		req.Inject = append(req.Inject, inj)
	}

	// The invocation's budget: requests (hops count) and body bytes.
	rules := EgressRules(g, in.Grants.HTTPHosts)
	in.mu.Lock()
	reqLeft := in.Grants.HTTP.MaxRequestsPerInvocation - in.usage.HTTPRequests
	bytesLeft := in.Grants.HTTP.MaxBytesPerInvocation - in.usage.EgressBytesIn - in.usage.EgressBytesOut
	in.mu.Unlock()
	if reqLeft <= 0 {
		return nil, refuse(abi.CodeQuotaExceeded, "http_request_budget", "the invocation's budget of %d HTTP requests is spent", in.Grants.HTTP.MaxRequestsPerInvocation)
	}
	if int64(len(req.Body)) > bytesLeft {
		return nil, refuse(abi.CodeQuotaExceeded, "http_byte_budget", "request body of %d bytes is over the %d bytes left of the invocation's HTTP byte budget (%d)", len(req.Body), max(bytesLeft, 0), in.Grants.HTTP.MaxBytesPerInvocation)
	}
	budgetRedirects := false
	if int64(rules.MaxRedirects) > reqLeft-1 {
		rules.MaxRedirects, budgetRedirects = int(reqLeft-1), true
	}
	budgetBody := false
	respCap := min(rules.MaxResponseBytes, int64(maxDocBody))
	if left := bytesLeft - int64(len(req.Body)); left < respCap {
		respCap, budgetBody = max(left, 0), true
	}
	rules.MaxResponseBytes = respCap

	resp, err := op.b.cfg.Egress.Do(ctx, rules, req)
	if resp != nil || err == nil {
		op.account(resp, len(req.Inject))
	}
	if err != nil {
		var de *egress.DenyError
		switch {
		case budgetRedirects && errors.As(err, &de) && de.Reason == "redirect_limit":
			return nil, refuse(abi.CodeQuotaExceeded, "http_request_budget", "the redirect would pass the invocation's budget of %d HTTP requests", in.Grants.HTTP.MaxRequestsPerInvocation)
		case budgetBody && errors.Is(err, egress.ErrResponseTooLarge):
			return nil, refuse(abi.CodeQuotaExceeded, "http_byte_budget", "the response would pass the invocation's HTTP byte budget of %d bytes", in.Grants.HTTP.MaxBytesPerInvocation)
		}
		return nil, op.egressFailure(err)
	}
	out := httpResponseDoc{Status: resp.Status, Headers: map[string]string{}, BodyBase64: resp.Body}
	if out.BodyBase64 == nil {
		out.BodyBase64 = []byte{}
	}
	size := 0
	for k, v := range resp.Header {
		if size += len(k) + len(v); size > maxResponseHeaderBytes {
			break
		}
		out.Headers[k] = strings.ToValidUTF8(v, "\uFFFD")
	}
	op.log.Debug("http request", "status", resp.Status, "redirects", resp.Redirects, "bytes_in", resp.BytesReceived)
	return mustJSON(out), nil
}

// injection resolves one secret use of a request into the value to inject.
func (op *operation) injection(ctx context.Context, use secretUseDoc, field string) (egress.Injection, error) {
	if use.Name == "" {
		return egress.Injection{}, refuse(abi.CodeInvalidRequest, "invalid_request", "%s: name is empty", field)
	}
	format := use.Format
	if format == "" {
		format = secretPlaceholder
	}
	if strings.Count(format, secretPlaceholder) != 1 {
		return egress.Injection{}, refuse(abi.CodeInvalidRequest, "invalid_request", "%s %q: format must contain %s exactly once", field, use.Name, secretPlaceholder)
	}
	name, value, err := op.secretValue(ctx, use.SecretHandle)
	if err != nil {
		return egress.Injection{}, err
	}
	if !utf8.Valid(value) || strings.ContainsAny(string(value), "\r\n\x00") {
		return egress.Injection{}, refuse(abi.CodeInvalidRequest, "invalid_request", "the value of secret %s cannot be injected: it is not one line of UTF-8 text", name)
	}
	return egress.Injection{Value: strings.Replace(format, secretPlaceholder, string(value), 1)}, nil
}

// account adds what a request did to the invocation and the skill.
func (op *operation) account(resp *egress.Response, injected int) {
	var hops, out, in int64 = 1, 0, 0
	if resp != nil {
		hops, out, in = int64(resp.Redirects)+1, resp.BytesSent, resp.BytesReceived
	}
	op.in.mu.Lock()
	op.in.usage.HTTPRequests += hops
	op.in.usage.EgressBytesOut += out
	op.in.usage.EgressBytesIn += in
	op.in.usage.SecretInjections += int64(injected)
	op.in.mu.Unlock()
	op.in.st.add(func(s *Stats) {
		s.HTTPRequests += hops
		s.EgressBytesOut += out
		s.EgressBytesIn += in
		s.SecretInjections += int64(injected)
	})
}

// egressFailure maps an egress error to the guest's refusal.
func (op *operation) egressFailure(err error) error {
	var de *egress.DenyError
	switch {
	case errors.As(err, &de):
		return &failure{code: abi.CodeDenied, reason: de.Reason, msg: err.Error(), cause: err}
	case errors.Is(err, egress.ErrRequestTooLarge), errors.Is(err, egress.ErrResponseTooLarge):
		return &failure{code: abi.CodeTooLarge, reason: "too_large", msg: err.Error(), cause: err}
	case errors.Is(err, egress.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return &failure{code: abi.CodeTimeout, reason: "timeout", msg: err.Error(), cause: err}
	case errors.Is(err, egress.ErrUpstream):
		return &failure{code: abi.CodeUpstreamFailure, reason: "upstream_failure", msg: err.Error(), cause: err}
	case errors.Is(err, egress.ErrInvalidRequest):
		return &failure{code: abi.CodeInvalidRequest, reason: "invalid_request", msg: err.Error(), cause: err}
	case errors.Is(err, context.Canceled):
		return &failure{code: abi.CodeTimeout, reason: "timeout", msg: "the request was canceled", cause: err}
	}
	return err
}

// Poster returns a channels.Poster that POSTs through c under rules: a
// webhook channel obeys the same egress firewall as skills.
func Poster(c *egress.Client, rules egress.Rules) channels.Poster {
	return channels.PosterFunc(func(ctx context.Context, url, contentType string, body []byte) (int, error) {
		resp, err := c.Do(ctx, rules, egress.Request{Method: "POST", URL: url, Header: map[string]string{"content-type": contentType}, Body: body})
		if err != nil {
			return 0, err
		}
		return resp.Status, nil
	})
}
