package main

import (
	"errors"
	"testing"

	"github.com/spf13/pflag"

	"github.com/palyra-go/palyra/host/cluster"
)

// TestClusterSecurityFlags: serve's security flags reach cluster.Config —
// the embedded server's config file, the node's NATS user (the password
// and the token from the environment, never flags), TLS files — and
// settings that cannot work are refused.
func TestClusterSecurityFlags(t *testing.T) {
	t.Setenv(EnvClusterPassword, "pw-from-env")
	t.Setenv(EnvClusterToken, "token-from-env")
	tests := []struct {
		name    string
		args    []string
		check   func(*cluster.Config) bool
		wantErr bool
	}{
		{
			name: "embedded with a server config file, user and TLS",
			args: []string{"--cluster-embedded", "--node-name", "a", "--cluster-server-config", "/etc/palyra/nats.conf",
				"--cluster-user", "palyra", "--cluster-tls-ca", "ca.pem", "--cluster-tls-cert", "a.pem", "--cluster-tls-key", "a-key.pem"},
			check: func(c *cluster.Config) bool {
				return c.Embedded != nil && c.Embedded.ConfigFile == "/etc/palyra/nats.conf" && c.Embedded.Token == "token-from-env" &&
					c.User == "palyra" && c.Password == "pw-from-env" &&
					c.TLS == cluster.TLSConfig{CAFile: "ca.pem", CertFile: "a.pem", KeyFile: "a-key.pem"}
			},
		},
		{
			name:  "an nkey user of a deployment",
			args:  []string{"--cluster", "tls://nats:4222", "--node-name", "a", "--cluster-nkey", "node.nk"},
			check: func(c *cluster.Config) bool { return c.NKeyFile == "node.nk" && c.Password == "" },
		},
		{name: "a server config file without the embedded server", args: []string{"--cluster", "nats://nats:4222", "--node-name", "a", "--cluster-server-config", "x.conf"}, wantErr: true},
		{name: "a server config file alone", args: []string{"--cluster-server-config", "x.conf"}, wantErr: true},
		{name: "two users", args: []string{"--cluster", "nats://nats:4222", "--node-name", "a", "--cluster-user", "u", "--cluster-creds", "c"}, wantErr: true},
		{name: "embedded TLS without a CA", args: []string{"--cluster-embedded", "--node-name", "a", "--cluster-tls-cert", "a.pem", "--cluster-tls-key", "k"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cf clusterFlags
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			cf.register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got, err := cf.config(fs, nil)
			if tt.wantErr {
				if !errors.Is(err, cluster.ErrInvalidConfig) {
					t.Fatalf("config: %v, want cluster_invalid_config", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(got) {
				t.Fatalf("config = %+v (embedded %+v)", got, got.Embedded)
			}
		})
	}
}
