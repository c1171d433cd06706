package main

import (
	"errors"
	"reflect"
	"testing"

	"github.com/spf13/pflag"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/cluster"
	"github.com/palyra-go/palyra/host/daemon"
)

// TestClusterConfigMerge merges the configuration file's [cluster] table
// with serve's flags: the table alone configures the node, a flag set on
// the command line overrides its key, and unset flags keep the table's
// values (their defaults fill only what the table leaves empty).
func TestClusterConfigMerge(t *testing.T) {
	t.Setenv(EnvClusterToken, "s3cret")
	parse := func(t *testing.T, toml string) *daemon.ClusterConfig {
		t.Helper()
		c, err := daemon.ParseConfig([]byte(toml))
		if err != nil {
			t.Fatal(err)
		}
		return c.Cluster
	}
	const embedded = `[cluster]
node_name = "file-node"
cluster_name = "filecluster"
skills = ["acme.echo"]
labels = { zone = "a" }
[cluster.embedded]
route_listen = "127.0.0.1:16222"
routes = ["nats-route://127.0.0.1:16222"]
`
	tests := []struct {
		name    string
		file    string
		args    []string
		want    *cluster.Config
		wantErr error
	}{
		{name: "neither file nor flags: not clustered", want: nil},
		{name: "a table without servers: not clustered", file: "[cluster]\nnode_name = \"n\"\n", want: nil},
		{name: "the table alone", file: embedded, want: &cluster.Config{
			ClusterName: "filecluster", NodeName: "file-node", Skills: []string{"acme.echo"}, Labels: map[string]string{"zone": "a"},
			Embedded: &cluster.EmbeddedConfig{Listen: "127.0.0.1:4222", RouteListen: "127.0.0.1:16222", Routes: []string{"nats-route://127.0.0.1:16222"}, Token: "s3cret"},
		}},
		{name: "flags override the table key by key", file: embedded,
			args: []string{"--node-name", "flag-node", "--cluster-routes", "nats-route://127.0.0.1:1,nats-route://127.0.0.1:2", "--cluster-listen", "127.0.0.1:14222", "--cluster-replicas", "2"},
			want: &cluster.Config{
				ClusterName: "filecluster", NodeName: "flag-node", Skills: []string{"acme.echo"}, Labels: map[string]string{"zone": "a"}, Replicas: 2,
				Embedded: &cluster.EmbeddedConfig{Listen: "127.0.0.1:14222", RouteListen: "127.0.0.1:16222", Routes: []string{"nats-route://127.0.0.1:1", "nats-route://127.0.0.1:2"}, Token: "s3cret"},
			}},
		{name: "flags alone", args: []string{"--cluster", "nats://10.0.0.1:4222", "--cluster-creds", "n.creds"}, want: &cluster.Config{
			ClusterName: cluster.DefaultClusterName, NodeName: host.LocalNodeName(), URLs: []string{"nats://10.0.0.1:4222"}, CredsFile: "n.creds",
		}},
		{name: "the file's urls and a flag's TLS", file: "[cluster]\nurls = [\"tls://10.0.0.1:4222\"]\n[cluster.tls]\nca_file = \"file-ca\"\n",
			args: []string{"--cluster-tls-cert", "c.crt", "--cluster-tls-key", "c.key"},
			want: &cluster.Config{
				ClusterName: cluster.DefaultClusterName, NodeName: host.LocalNodeName(), URLs: []string{"tls://10.0.0.1:4222"},
				TLS: cluster.TLSConfig{CAFile: "file-ca", CertFile: "c.crt", KeyFile: "c.key"},
			}},
		{name: "--cluster-embedded=false turns the table's server off", file: embedded, args: []string{"--cluster-embedded=false"}, want: nil},
		{name: "--cluster with the table's embedded server", file: embedded, args: []string{"--cluster", "nats://10.0.0.1:4222"}, wantErr: cluster.ErrInvalidConfig},
		{name: "routes without an embedded server", args: []string{"--cluster-routes", "nats-route://127.0.0.1:1"}, wantErr: cluster.ErrInvalidConfig},
		{name: "routes with --cluster", args: []string{"--cluster", "nats://10.0.0.1:4222", "--cluster-routes", "nats-route://127.0.0.1:1"}, wantErr: cluster.ErrInvalidConfig},
		{name: "a bad node name from a flag", file: embedded, args: []string{"--node-name", "a b"}, wantErr: cluster.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var file *daemon.ClusterConfig
			if tt.file != "" {
				file = parse(t, tt.file)
			}
			var cf clusterFlags
			f := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			cf.register(f)
			if err := f.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got, err := cf.config(f, file)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("config: %+v, %v; want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("config:\n got %+v\nwant %+v", got, tt.want)
				if got != nil && tt.want != nil && got.Embedded != nil && tt.want.Embedded != nil {
					t.Errorf("embedded:\n got %+v\nwant %+v", *got.Embedded, *tt.want.Embedded)
				}
			}
		})
	}
}
