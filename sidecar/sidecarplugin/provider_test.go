package sidecarplugin

import (
	"bytes"
	"crypto/ed25519"
	"crypto/tls"
	"io"
	"strings"
	"testing"
)

// TestTLSProvider checks a sidecar's TLSProvider: none without a
// supervisor key; a malformed key refuses to serve before anything is
// written; a good one announces the sidecar's own key first on stdout and
// pins the supervisor's.
func TestTLSProvider(t *testing.T) {
	var out bytes.Buffer
	if TLSProvider("", &out) != nil {
		t.Fatal("a provider without a supervisor key")
	}
	pinnedTLS := func(key string, w io.Writer) (*tls.Config, error) { return TLSProvider(key, w)() }
	for _, bad := range []string{"not-a-key", EncodeKey(make([]byte, 31))} {
		if cfg, err := pinnedTLS(bad, &out); err == nil || cfg != nil || !strings.Contains(err.Error(), ClientKeyEnv) {
			t.Errorf("client key %q: config %v, error %v; want an error naming %s", bad, cfg != nil, err, ClientKeyEnv)
		}
	}
	if out.Len() != 0 {
		t.Fatalf("wrote %q for a refused client key", out.String())
	}

	sup, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pinnedTLS(EncodeKey(sup.PublicKey), &out)
	if err != nil {
		t.Fatal(err)
	}
	r := NewKeyLineReader(io.NopCloser(&out))
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
		t.Fatalf("stdout after the key line: %q, %v", rest, err)
	}
	announced, err := r.Key()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Certificates) != 1 {
		t.Fatalf("%d certificates", len(cfg.Certificates))
	}
	if priv, ok := cfg.Certificates[0].PrivateKey.(ed25519.PrivateKey); !ok || !priv.Public().(ed25519.PublicKey).Equal(announced) {
		t.Fatal("the certificate's key is not the one announced on stdout")
	}
}
