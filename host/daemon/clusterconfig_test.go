package daemon

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/cluster"
)

// TestClusterConfig parses a full [cluster] table into the cluster's
// configuration, and refuses each invalid field with an error that names
// it by its key in the file.
func TestClusterConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`
[cluster]
node_name = "node-a"
cluster_name = "prod"
creds_file = "/etc/palyra/nats.creds"
replicas = 3
skills = ["acme.echo", "acme.fetch"]
labels = { zone = "a", rack = "r7" }
[cluster.tls]
ca_file = "ca.crt"
cert_file = "n.crt"
key_file = "n.key"
[cluster.embedded]
listen = "127.0.0.1:14222"
route_listen = "127.0.0.1:16222"
routes = ["nats-route://127.0.0.1:16222", "nats-route://127.0.0.1:16223"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Cluster.Clustered() {
		t.Error("an embedded table does not cluster the daemon")
	}
	want := &cluster.Config{
		ClusterName: "prod", NodeName: "node-a", CredsFile: "/etc/palyra/nats.creds",
		TLS:      cluster.TLSConfig{CAFile: "ca.crt", CertFile: "n.crt", KeyFile: "n.key"},
		Replicas: 3, Skills: []string{"acme.echo", "acme.fetch"}, Labels: map[string]string{"zone": "a", "rack": "r7"},
		Embedded: &cluster.EmbeddedConfig{Listen: "127.0.0.1:14222", RouteListen: "127.0.0.1:16222", Routes: []string{"nats-route://127.0.0.1:16222", "nats-route://127.0.0.1:16223"}},
	}
	if got := c.Cluster.ClusterConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("cluster config:\n got %+v\nwant %+v", got, want)
	}

	// urls alone cluster the daemon; the table without servers does not.
	c, err = ParseConfig([]byte("[cluster]\nurls = [\"nats://10.0.0.1:4222\", \"tls://10.0.0.2:4222\"]\n"))
	if err != nil || !c.Cluster.Clustered() || len(c.Cluster.ClusterConfig().URLs) != 2 {
		t.Errorf("urls: %+v %v", c, err)
	}
	c, err = ParseConfig([]byte("[cluster]\nnode_name = \"n\"\n"))
	if err != nil || c.Cluster.Clustered() {
		t.Errorf("a table without servers: clustered=%t, %v", c.Cluster.Clustered(), err)
	}
	if c, err = ParseConfig(nil); err != nil || c.Cluster.Clustered() || c.Cluster.ClusterConfig() != nil {
		t.Errorf("no table: %+v %v", c.Cluster, err)
	}

	labels := make([]string, MaxClusterLabels+1)
	for i := range labels {
		labels[i] = fmt.Sprintf("k%d = \"v\"", i)
	}
	bad := []struct{ in, field string }{
		{`node_name = "node a"`, `cluster.node_name "node a"`},
		{`node_name = "` + strings.Repeat("n", 65) + `"`, "cluster.node_name"},
		{`cluster_name = "a.b"`, `cluster.cluster_name "a.b"`},
		{`urls = ["nats://ok:4222", "http://10.0.0.1:4222"]`, `cluster.urls[1] "http://10.0.0.1:4222"`},
		{`urls = ["nats://"]`, "cluster.urls[0]"},
		{"urls = [\"nats://a:4222\"]\n[cluster.embedded]", "cluster.urls and embedded"},
		{"[cluster.tls]\ncert_file = \"a.crt\"", "cluster.tls: cert_file and key_file"},
		{"[cluster.tls]\nkey_file = \"a.key\"", "cluster.tls: cert_file and key_file"},
		{"[cluster.embedded]\nlisten = \"4222\"", `cluster.embedded.listen "4222"`},
		{"[cluster.embedded]\nroute_listen = \"127.0.0.1:\"", `cluster.embedded.route_listen "127.0.0.1:"`},
		{"[cluster.embedded]\nroutes = [\"nats-route://a:6222\", \"a:6222\"]", `cluster.embedded.routes[1] "a:6222"`},
		{"[cluster.embedded]\nrouts = []", "unknown key"},
		{`replicas = 6`, "cluster.replicas 6"},
		{`replicas = -1`, "cluster.replicas -1"},
		{`skills = ["acme.echo", " "]`, "cluster.skills[1] is empty"},
		{`labels = { "a b" = "x" }`, `cluster.labels key "a b"`},
		{`labels = { zone = "` + strings.Repeat("z", MaxClusterLabelBytes+1) + `" }`, "cluster.labels.zone: 257 bytes, over the limit of 256"},
		{"labels = { " + strings.Join(labels, ", ") + " }", "cluster.labels: 33, over the limit of 32"},
		{`nodes = 3`, "unknown key"},
	}
	for _, b := range bad {
		_, err := ParseConfig([]byte("[cluster]\n" + b.in))
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%q: %v, want ErrInvalidConfig", b.in, err)
			continue
		}
		if !strings.Contains(err.Error(), b.field) {
			t.Errorf("%q: %v, want it to name %q", b.in, err, b.field)
		}
	}
}
