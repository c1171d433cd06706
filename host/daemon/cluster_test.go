package daemon_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/manifest"
)

// TestClusteredDaemon serves a daemon made a node of a one-node cluster by
// its configuration file alone ([cluster] with an embedded server), the
// node's name given there: GET /v1/cluster reports the cluster and the
// node by those names, at the daemon's version, and every metric carries
// the node's name; SIGTERM stops the node cleanly.
func TestClusteredDaemon(t *testing.T) {
	state := t.TempDir()
	p := startDaemon(t, state, `
[cluster]
node_name = "node-x"
cluster_name = "conf-cluster"
labels = { zone = "z1" }
[cluster.embedded]
listen = "127.0.0.1:0"
route_listen = "127.0.0.1:0"
`)
	var cl host.ClusterStatus
	p.must(http.StatusOK, http.MethodGet, "/v1/cluster", nil, &cl)
	if !cl.Clustered || cl.Cluster != "conf-cluster" || cl.Node != "node-x" || len(cl.Nodes) == 0 {
		t.Fatalf("cluster: %+v", cl)
	}
	if n := cl.Nodes[0]; n.Name != "node-x" || !n.Live || n.Version != manifest.RuntimeVersion {
		t.Errorf("this node: %+v", n)
	}
	metrics := string(p.must(http.StatusOK, http.MethodGet, "/metrics", nil, nil))
	for _, want := range []string{`palyra_sidecars_alive{node="node-x"}`, `go_goroutines{node="node-x"}`, `palyra_api_requests_total{api="http",code="200",node="node-x",route="GET /v1/cluster"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	p.stop()
}
