package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// RootCAs are trusted for registry servers besides the system pool;
	// nil means the system pool only.
	RootCAs *x509.CertPool
	// CACertPEM is a PEM bundle trusted besides (Palyra's
	// --registry-ca-cert); it must hold at least one certificate when set.
	CACertPEM []byte
	// Timeout bounds each request, body included (Timeout when zero).
	Timeout time.Duration
}

// Client reads served indexes and downloads artifacts, over HTTPS only. It
// keeps no connection open between requests, so it needs no closing.
type Client struct {
	http    *http.Client
	timeout time.Duration
}

// NewClient returns a Client with cfg. The server's certificate must
// chain to the system pool, to RootCAs or to CACertPEM.
func NewClient(cfg ClientConfig) (*Client, error) {
	var pools []*x509.CertPool
	sys, err := x509.SystemCertPool()
	if err != nil || sys == nil {
		sys = x509.NewCertPool()
	}
	pools = append(pools, sys)
	if cfg.RootCAs != nil {
		pools = append(pools, cfg.RootCAs)
	}
	if len(cfg.CACertPEM) > 0 {
		extra := x509.NewCertPool()
		if !extra.AppendCertsFromPEM(cfg.CACertPEM) {
			return nil, fmt.Errorf("registry: the registry CA certificate holds no PEM certificate: %w", ErrFetch)
		}
		pools = append(pools, extra)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = Timeout
	}
	tr := &http.Transport{
		Proxy: nil, // library code reads no environment
		// No dial or handshake timeout of its own: the request's context
		// (the client's timeout) bounds every phase, so a slow handshake
		// fails with context.DeadlineExceeded like a slow answer does.
		DisableKeepAlives: true,
		ForceAttemptHTTP2: false,
		TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			// The chain is verified below against each pool in turn
			// (x509 pools cannot be merged); the hostname is checked too.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				return verifyChain(cs, pools)
			},
		},
	}
	hc := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return fmt.Errorf("registry: %s: more than 10 redirects: %w", via[0].URL.Redacted(), ErrFetch)
			}
			if origin(req.URL) != origin(via[0].URL) {
				return fmt.Errorf("registry: %s redirects to %s, off its origin: %w", via[0].URL.Redacted(), req.URL.Redacted(), ErrCrossOrigin)
			}
			return nil
		},
	}
	return &Client{http: hc, timeout: timeout}, nil
}

// verifyChain checks the server's chain against each pool and its name.
func verifyChain(cs tls.ConnectionState, pools []*x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("registry: the server sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	var firstErr error
	for _, p := range pools {
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{DNSName: cs.ServerName, Roots: p, Intermediates: inter})
		if err == nil {
			return nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// origin is a URL's scheme, host and port (the default port made explicit),
// lower-cased.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// httpsURL parses raw and requires https with a host.
func httpsURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("registry: URL %q: %w: %w", raw, ErrInsecureURL, err)
	}
	if !strings.EqualFold(u.Scheme, "https") || u.Host == "" {
		return nil, fmt.Errorf("registry: URL %s: scheme %q refused, only https is allowed: %w", u.Redacted(), u.Scheme, ErrInsecureURL)
	}
	return u, nil
}

// Index reads the index at indexURL (https only) page by page following
// next_page, each page parsed, verified and its key judged by trust; every
// page must be signed by the first page's key. next_page must stay on the
// index's origin; at most MaxPages pages, a page is read once (a loop is an
// error), at most MaxEntries entries in all, no duplicate across pages.
func (c *Client) Index(ctx context.Context, indexURL string, trust TrustFunc, allowTOFU bool) (*Catalog, error) {
	u, err := httpsURL(indexURL)
	if err != nil {
		return nil, err
	}
	u.Fragment = ""
	home := origin(u)
	visited := map[string]bool{}
	seen := map[[2]string]bool{}
	var cat *Catalog
	for page := 1; ; page++ {
		key := u.String()
		if visited[key] {
			return nil, fmt.Errorf("registry: index %s: page %d is %s, already read: %w", indexURL, page, key, ErrPageLoop)
		}
		if page > MaxPages {
			return nil, fmt.Errorf("registry: index %s has more than %d pages (page %d is %s), over the limit MaxPages = %d: %w", indexURL, MaxPages, page, key, MaxPages, ErrTooManyPages)
		}
		visited[key] = true
		data, err := c.get(ctx, u, MaxIndexPageBytes, ErrPageTooLarge, "MaxIndexPageBytes")
		if err != nil {
			return nil, err
		}
		doc, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("registry: index page %s: %w", key, err)
		}
		v, err := Verify(ctx, doc, trust, allowTOFU)
		if err != nil {
			return nil, fmt.Errorf("registry: index page %s: %w", key, err)
		}
		if cat == nil {
			cat = catalogOf(u.String(), false, v)
		} else if !cat.PublicKey.Equal(v.PublicKey) || cat.Publisher != doc.Signature.Publisher {
			return nil, fmt.Errorf("registry: index page %s is signed by %s (%s), page 1 by %s (%s): %w", key, doc.Signature.KeyID, doc.Signature.Publisher, cat.KeyID, cat.Publisher, ErrSignatureInvalid)
		}
		if n := len(cat.Entries) + len(doc.Index.Entries); n > MaxEntries {
			return nil, fmt.Errorf("registry: index %s has %d entries after page %d, over the limit MaxEntries = %d: %w", indexURL, n, page, MaxEntries, ErrTooManyEntries)
		}
		for _, e := range doc.Index.Entries {
			k := entryKey(&e)
			if seen[k] {
				return nil, fmt.Errorf("registry: index %s: %s %s listed twice (again on page %d): %w", indexURL, e.SkillID, e.Version, page, ErrDuplicateEntry)
			}
			seen[k] = true
			cat.Entries = append(cat.Entries, Located{Entry: e, Page: key})
		}
		if doc.Index.NextPage == nil {
			return cat, nil
		}
		next, err := resolve(u, *doc.Index.NextPage, home, "next_page")
		if err != nil {
			return nil, err
		}
		u = next
	}
}

// resolve resolves ref against base and requires the result on origin home.
func resolve(base *url.URL, ref, home, what string) (*url.URL, error) {
	r, err := url.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("registry: %s %q of %s is not a URL: %w: %w", what, ref, base.Redacted(), ErrInvalidIndex, err)
	}
	u := base.ResolveReference(r)
	u.Fragment = ""
	if origin(u) != home {
		return nil, fmt.Errorf("registry: %s %s of %s is off the index origin %s: %w", what, u.Redacted(), base.Redacted(), home, ErrCrossOrigin)
	}
	return u, nil
}

// Artifact gets the artifact of e, an entry of cat: from the registry
// directory, or downloaded from the URL resolved against the page that
// listed it (which must stay on the index's origin). At most
// MaxArtifactDownloadBytes are read; the sha256 must be the entry's.
func (c *Client) Artifact(ctx context.Context, cat *Catalog, e *Located) ([]byte, error) {
	var data []byte
	if cat.Local {
		d, err := readLocal(cat.Location, e)
		if err != nil {
			return nil, err
		}
		data = d
	} else {
		idx, err := httpsURL(cat.Location)
		if err != nil {
			return nil, err
		}
		page, err := httpsURL(e.Page)
		if err != nil {
			return nil, err
		}
		u, err := resolve(page, e.Artifact, origin(idx), "artifact URL of "+e.SkillID+" "+e.Version)
		if err != nil {
			return nil, err
		}
		if data, err = c.get(ctx, u, MaxArtifactDownloadBytes, ErrArtifactTooLarge, "MaxArtifactDownloadBytes"); err != nil {
			return nil, err
		}
	}
	if err := checkSHA256(data, e); err != nil {
		return nil, err
	}
	return data, nil
}

// get reads u (status 200) within the client's timeout, refusing a body
// over limit without reading past it.
func (c *Client) get(ctx context.Context, u *url.URL, limit int64, tooLarge error, limitName string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("registry: GET %s: %w: %w", u.Redacted(), ErrFetch, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var code interface{ Code() string }
		if errors.As(err, &code) { // a redirect refused by CheckRedirect
			return nil, fmt.Errorf("registry: GET %s: %w", u.Redacted(), err)
		}
		return nil, fmt.Errorf("registry: GET %s: %w: %w", u.Redacted(), ErrFetch, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("registry: GET %s answered %s: %w", u.Redacted(), resp.Status, ErrFetch)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("registry: %s is %d bytes, over the limit %s = %d: %w", u.Redacted(), resp.ContentLength, limitName, limit, tooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("registry: GET %s: %w: %w", u.Redacted(), ErrFetch, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("registry: %s is more than %d bytes, over the limit %s = %d: %w", u.Redacted(), limit, limitName, limit, tooLarge)
	}
	return data, nil
}
