// Package testtls makes a throwaway certificate authority and HTTPS test
// servers on 127.0.0.1 whose certificates it signed, so that tests of
// HTTPS clients verify a real chain against a CA that only they trust.
package testtls

import (
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
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// CA is a certificate authority for one test.
type CA struct {
	// Cert is the CA certificate; PEM is it PEM-encoded.
	Cert *x509.Certificate
	PEM  []byte
	key  *ecdsa.PrivateKey
}

// Pool returns a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

var serial atomic.Int64

func nextSerial() *big.Int {
	return big.NewInt(time.Now().UnixNano() + serial.Add(1))
}

// NewCA returns a new CA, failing tb on error.
func NewCA(tb testing.TB) *CA {
	tb.Helper()
	ca, err := GenerateCA()
	if err != nil {
		tb.Fatal(err)
	}
	return ca
}

// GenerateCA returns a new CA (NewCA for code without a testing.TB, such as
// a harness started with a context).
func GenerateCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: "palyra test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}, nil
}

// Leaf returns a server certificate signed by ca for 127.0.0.1 and
// localhost, failing tb on error.
func (ca *CA) Leaf(tb testing.TB) tls.Certificate {
	tb.Helper()
	c, err := ca.NewLeaf()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// NewLeaf returns a server certificate signed by ca for 127.0.0.1 and
// localhost.
func (ca *CA) NewLeaf() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// Serve starts an HTTPS server on 127.0.0.1 for h with a certificate of
// ca (a new CA when nil), closed when tb ends; it returns the server and
// the CA.
func Serve(tb testing.TB, ca *CA, h http.Handler) (*httptest.Server, *CA) {
	tb.Helper()
	if ca == nil {
		ca = NewCA(tb)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Leaf(tb)}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	tb.Cleanup(srv.Close)
	return srv, ca
}

// WriteLeaf writes a server certificate of ca for 127.0.0.1 and localhost
// and its key, PEM-encoded, into dir as server.crt and server.key (mode
// 0600), for servers configured by file.
func (ca *CA) WriteLeaf(dir string) (certFile, keyFile string, err error) {
	leaf, err := ca.NewLeaf()
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(leaf.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Certificate[0]}), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}
