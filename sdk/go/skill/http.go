package skill

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// HTTP returns the client for the call's HTTP grants. Each request goes to
// the handle whose granted host matches the URL's host (the same name, or a
// "*.domain" pattern); the host's broker then checks scheme, address,
// redirects and the operator's policy.
func (c *Context) HTTP() *HTTPClient { return &HTTPClient{c: c} }

// HTTPClient sends HTTP requests through the HTTP capability (sdk/ABI.md
// §5.1). It holds no connection and no authority of its own.
type HTTPClient struct {
	c *Context
}

// HTTPRequest is one outgoing request.
type HTTPRequest struct {
	// Method defaults to GET.
	Method string
	// URL is absolute; its host selects the grant.
	URL string
	// Header holds plain headers; the host may refuse some.
	Header map[string]string
	// Body is sent as "body" when it is valid UTF-8, else as "body_base64".
	Body []byte
	// SecretHeaders ask the host to inject secrets the guest never sees.
	SecretHeaders []SecretHeader
	// SecretQuery ask the host to add query parameters holding secrets
	// (for APIs that take a key in the URL); Name is the parameter name.
	SecretQuery []SecretHeader
	// Timeout, when positive, is sent as timeout_ms (rounded up).
	Timeout time.Duration
}

// SecretHeader asks the host to set header Name to Format with "{secret}"
// replaced by the value of a granted secret.
type SecretHeader struct {
	// Name is the header name, e.g. "authorization".
	Name string
	// Secret names the secret as Context.Secret does: a full key
	// ("skill:acme.echo_http/api_token"), a bare key name ("api_token") or a
	// decimal handle ("20000").
	Secret string
	// Format is the header value with "{secret}" in it; empty means
	// "{secret}", e.g. "Bearer {secret}".
	Format string
}

// HTTPResponse is the host's answer. Header names are lower-case, repeated
// headers joined with ", ". A 4xx or 5xx status is a response, not an error.
type HTTPResponse struct {
	Status int               `json:"status"`
	Header map[string]string `json:"headers"`
	Body   []byte            `json:"body_base64"`
}

type httpRequestWire struct {
	Method        string             `json:"method"`
	URL           string             `json:"url"`
	Headers       map[string]string  `json:"headers,omitempty"`
	Body          string             `json:"body,omitempty"`
	BodyBase64    []byte             `json:"body_base64,omitempty"`
	SecretHeaders []secretHeaderWire `json:"secret_headers,omitempty"`
	SecretQuery   []secretHeaderWire `json:"secret_query,omitempty"`
	TimeoutMS     int64              `json:"timeout_ms,omitempty"`
}

type secretHeaderWire struct {
	Name         string `json:"name"`
	SecretHandle int32  `json:"secret_handle"`
	Format       string `json:"format,omitempty"`
}

// Get sends a GET request for rawURL with optional secret headers.
func (hc *HTTPClient) Get(rawURL string, secrets ...SecretHeader) (*HTTPResponse, error) {
	return hc.Do(&HTTPRequest{Method: "GET", URL: rawURL, SecretHeaders: secrets})
}

// Do sends req and returns the response. Errors are *CapabilityError with
// the host's code (ErrDenied, ErrTimeout, ...) and detail. A URL whose host
// matches no grant still goes to the host, through the first HTTP handle,
// so that the host's broker refuses it (ErrDenied, naming the host), logs
// it and counts it against the skill; with no HTTP grant at all it is
// ErrNotGranted before anything is sent.
func (hc *HTTPClient) Do(req *HTTPRequest) (*HTTPResponse, error) {
	method := strings.ToUpper(strings.TrimSpace(req.Method))
	if method == "" {
		method = "GET"
	}
	u, err := url.Parse(req.URL)
	if err != nil || u.Host == "" {
		return nil, &CapabilityError{Kind: abi.KindHTTP, Op: method, Code: abi.CodeInvalidRequest,
			Message: fmt.Sprintf("url %q is not an absolute URL", req.URL)}
	}
	grants := hc.c.doc.Grants
	handle, ok := grants.httpHandle(u.Hostname())
	if !ok {
		if len(grants.HTTP) == 0 {
			return nil, notGranted(abi.KindHTTP, method, "no http grant matches host %q", u.Hostname())
		}
		handle = grants.HTTP[0].Handle
	}
	w := httpRequestWire{Method: method, URL: req.URL, Headers: req.Header}
	if len(req.Body) > 0 {
		if utf8.Valid(req.Body) {
			w.Body = string(req.Body)
		} else {
			w.BodyBase64 = req.Body
		}
	}
	for _, sh := range req.SecretHeaders {
		sv, err := grants.secretHandle(sh.Secret)
		if err != nil {
			return nil, err
		}
		w.SecretHeaders = append(w.SecretHeaders, secretHeaderWire{Name: sh.Name, SecretHandle: sv, Format: sh.Format})
	}
	for _, sq := range req.SecretQuery {
		sv, err := grants.secretHandle(sq.Secret)
		if err != nil {
			return nil, err
		}
		w.SecretQuery = append(w.SecretQuery, secretHeaderWire{Name: sq.Name, SecretHandle: sv, Format: sq.Format})
	}
	if req.Timeout > 0 {
		w.TimeoutMS = int64((req.Timeout + time.Millisecond - 1) / time.Millisecond)
	}
	var resp HTTPResponse
	if err := hc.c.callJSON(abi.KindHTTP, method, handle, w, &resp); err != nil {
		return nil, err
	}
	if resp.Body == nil {
		resp.Body = []byte{}
	}
	return &resp, nil
}
