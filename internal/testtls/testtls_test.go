package testtls

import (
	"crypto/tls"
	"io"
	"net/http"
	"testing"
)

// TestServeVerifiesAgainstTheCA: a client trusting the CA reaches the
// server; one trusting another CA is refused.
func TestServeVerifiesAgainstTheCA(t *testing.T) {
	srv, ca := Serve(t, nil, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	for _, c := range []struct {
		name string
		ca   *CA
		ok   bool
	}{{"own CA", ca, true}, {"other CA", NewCA(t), false}} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: c.ca.Pool()}, DisableKeepAlives: true}
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != c.ok {
			t.Fatalf("%s: err = %v, want success %v", c.name, err, c.ok)
		}
	}
}
