package daemon_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/testtls"

	"github.com/palyra-go/palyra/host/daemon"
)

// selfSigned writes a certificate for 127.0.0.1 (signed by a test CA) and
// its key into dir, and returns a pool holding the CA.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	ca := testtls.NewCA(t)
	certFile, keyFile, err := ca.WriteLeaf(dir)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, ca.Pool()
}

// TestTLS serves in-process with a certificate: https works, HTTP/2 by
// ALPN, with the same auth.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	cfg, err := daemon.ParseConfig([]byte("listen = \"127.0.0.1:0\"\nreaudit_interval = \"0\"\n[tls]\ncert_file = \"" + certFile + "\"\nkey_file = \"" + keyFile + "\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	state := t.TempDir()
	d, err := daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: filepath.Join(bin, "palyra-sidecar")})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := d.Listen()
	if err != nil {
		d.Close(ctx)
		t.Fatal(err)
	}
	url := d.URL(ln)
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("URL %s", url)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln) }()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var resp *http.Response
	for i := 0; i < 100; i++ {
		if resp, err = c.Get(url + "/readyz"); err == nil && resp.StatusCode == http.StatusOK {
			break
		}
		if resp != nil {
			resp.Body.Close()
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("https readyz: %v", err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2 over TLS", resp.Proto)
	}
	tok, _ := daemon.ReadToken(daemon.TokenPath(state))
	req, _ := http.NewRequest(http.MethodGet, url+"/v1/skills", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if resp, err = c.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("https list: %v", err)
	}
	resp.Body.Close()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
