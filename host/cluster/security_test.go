package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// runServer starts a standalone nats-server from a configuration file
// with the text conf, the way an operator runs a NATS deployment, and
// stops it when the test ends.
func runServer(t testing.TB, conf string) *server.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.NoSigs = true
	return startServer(t, opts)
}

func startServer(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

// confPath quotes a path for a nats-server configuration file.
func confPath(p string) string { return fmt.Sprintf("%q", p) }

// TestDialTLSClientCertificates: a node's link to a NATS deployment that
// requires client certificates connects with a certificate from the
// deployment's CA, and is refused (cluster_unavailable, naming the server
// and the TLS failure) without one, with one from another CA, or when it
// does not trust the server's CA.
func TestDialTLSClientCertificates(t *testing.T) {
	ca, other := newTestCA(t, "palyra-test-ca"), newTestCA(t, "other-ca")
	srvTLS := ca.issue(t, "server")
	s := runServer(t, fmt.Sprintf(`
listen: "127.0.0.1:-1"
jetstream { store_dir: %s }
tls {
  cert_file: %s
  key_file: %s
  ca_file: %s
  verify: true
  timeout: 2
}
`, confPath(t.TempDir()), confPath(srvTLS.CertFile), confPath(srvTLS.KeyFile), confPath(ca.CAFile)))
	addr := s.Addr().String()
	good, foreign := ca.issue(t, "node-a"), other.issue(t, "node-b")
	tests := []struct {
		name    string
		tls     TLSConfig
		wantErr string // "" is a successful Dial
	}{
		// A Go TLS client sends no certificate the server's acceptable CAs
		// do not cover: a foreign certificate is a missing one.
		{"certificate from the CA", good, ""},
		{"no client certificate", TLSConfig{CAFile: ca.CAFile}, "certificate required"},
		{"certificate from another CA", TLSConfig{CAFile: ca.CAFile, CertFile: foreign.CertFile, KeyFile: foreign.KeyFile}, "certificate required"},
		{"server's CA not trusted", TLSConfig{CAFile: other.CAFile, CertFile: good.CertFile, KeyFile: good.KeyFile}, "certificate signed by unknown authority"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l, err := Dial(ctx, Config{NodeName: "a", URLs: []string{"tls://" + addr}, TLS: tc.tls, ConnectTimeout: 5 * time.Second})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				if _, err := l.JetStream().Publish(ctx, OpsSubjectPrefix+"test", []byte("x")); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				l.Close()
				t.Fatal("Dial succeeded")
			}
			if !errors.Is(err, ErrClusterUnavailable) {
				t.Fatalf("error %v: want cluster_unavailable", err)
			}
			if msg := err.Error(); !strings.Contains(msg, addr) || !strings.Contains(msg, tc.wantErr) {
				t.Fatalf("error %q: want it to name the server %s and the TLS failure %q", msg, addr, tc.wantErr)
			}
		})
	}
}
