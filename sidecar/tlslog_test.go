package sidecar

import (
	"bytes"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestLogRefusedPeers(t *testing.T) {
	if logRefusedPeers(nil, hclog.NewNullLogger()) != nil {
		t.Fatal("a nil provider (go-plugin's own TLS) must stay nil")
	}
	refused := errors.New("the TLS peer's certificate does not carry the key announced for it")
	var out bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &out, Level: hclog.Info})
	provider := func() (*tls.Config, error) {
		return &tls.Config{VerifyConnection: func(cs tls.ConnectionState) error {
			if cs.ServerName == "impostor" {
				return refused
			}
			return nil
		}}, nil
	}
	c, err := logRefusedPeers(provider, log)()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyConnection(tls.ConnectionState{ServerName: "supervisor"}); err != nil || out.Len() != 0 {
		t.Fatalf("an accepted peer: %v, log %q", err, out.String())
	}
	if err := c.VerifyConnection(tls.ConnectionState{ServerName: "impostor"}); !errors.Is(err, refused) {
		t.Fatalf("a refused peer: %v, want the config's own error", err)
	}
	if got := out.String(); !strings.Contains(got, "refused a TLS peer") || !strings.Contains(got, refused.Error()) {
		t.Fatalf("log %q does not say the peer was refused and why", got)
	}

	// A provider's error passes through untouched.
	failed := errors.New("PALYRA_SIDECAR_TLS_CLIENT_KEY: not a key")
	if _, err := logRefusedPeers(func() (*tls.Config, error) { return nil, failed }, log)(); !errors.Is(err, failed) {
		t.Fatalf("provider error: %v", err)
	}
}
