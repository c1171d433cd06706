package daemon_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/daemon"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "palyra-host test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
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
