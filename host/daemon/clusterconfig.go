package daemon

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/cluster"
)

// ClusterConfig is the [cluster] table: this daemon as a node of a NATS
// cluster (host/cluster). The table alone does not cluster the daemon:
// urls or [cluster.embedded] (or serve's --cluster / --cluster-embedded)
// do; its other fields are then the node's settings, which serve's flags
// override one by one.
type ClusterConfig struct {
	// NodeName names this node, unique in the cluster (default: the host
	// name).
	NodeName string `toml:"node_name"`
	// ClusterName names the cluster (default cluster.DefaultClusterName).
	ClusterName string `toml:"cluster_name"`
	// URLs are the servers of an existing NATS deployment
	// (nats://host:port, tls://host:port).
	URLs []string `toml:"urls"`
	// CredsFile is a NATS credentials file (user JWT and nkey seed).
	CredsFile string `toml:"creds_file"`
	// TLS secures the NATS connections.
	TLS ClusterTLS `toml:"tls"`
	// Embedded runs a nats-server with JetStream in the daemon.
	Embedded *ClusterEmbedded `toml:"embedded"`
	// Replicas of the cluster's streams and buckets (1..5; 0: min(3,
	// nodes) embedded, 1 with urls).
	Replicas int `toml:"replicas"`
	// Skills, when not empty, are the only skills this node serves.
	Skills []string `toml:"skills"`
	// Labels describe the node in the cluster status.
	Labels map[string]string `toml:"labels"`
}

// ClusterTLS is the [cluster.tls] table: the CA that verifies the NATS
// peers and this node's client certificate and key.
type ClusterTLS struct {
	CAFile   string `toml:"ca_file"`
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

// ClusterEmbedded is the [cluster.embedded] table: the nats-server the
// node runs in its own process (its data under <state>/cluster/nats).
type ClusterEmbedded struct {
	// Listen is the client listener (default 127.0.0.1:4222).
	Listen string `toml:"listen"`
	// RouteListen is the route listener (default 127.0.0.1:6222).
	RouteListen string `toml:"route_listen"`
	// Routes are every node's route listener (nats-route://host:port).
	Routes []string `toml:"routes"`
}

// Limits of the [cluster] table.
const (
	// MaxClusterLabels caps the labels of a node.
	MaxClusterLabels = 32
	// MaxClusterLabelBytes caps a label's value.
	MaxClusterLabelBytes = 256
)

// clusterNameRE is what node and cluster names (and label keys) may be:
// they become parts of NATS subjects and stream names.
var clusterNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// validate checks every field, naming the first that cannot work by its
// key in the table.
func (c *ClusterConfig) validate() error {
	name := func(key, v string) error {
		if v != "" && !clusterNameRE.MatchString(v) {
			return fmt.Errorf("%s %q: want 1..64 of [A-Za-z0-9_-]", key, v)
		}
		return nil
	}
	if err := name("node_name", c.NodeName); err != nil {
		return err
	}
	if err := name("cluster_name", c.ClusterName); err != nil {
		return err
	}
	for i, u := range c.URLs {
		p, err := url.Parse(u)
		if err != nil || p.Host == "" || (p.Scheme != "nats" && p.Scheme != "tls") {
			return fmt.Errorf("urls[%d] %q: want nats://host:port or tls://host:port", i, u)
		}
	}
	if len(c.URLs) > 0 && c.Embedded != nil {
		return errors.New("urls and embedded: a node joins an existing NATS deployment (urls) or runs its own server (embedded), not both")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return errors.New("tls: cert_file and key_file go together")
	}
	if e := c.Embedded; e != nil {
		for _, l := range []struct{ key, addr string }{{"embedded.listen", e.Listen}, {"embedded.route_listen", e.RouteListen}} {
			if l.addr == "" {
				continue
			}
			if _, port, err := net.SplitHostPort(l.addr); err != nil || port == "" {
				return fmt.Errorf("%s %q: want host:port", l.key, l.addr)
			}
		}
		for i, r := range e.Routes {
			p, err := url.Parse(r)
			if err != nil || p.Host == "" || p.Scheme != "nats-route" {
				return fmt.Errorf("embedded.routes[%d] %q: want nats-route://host:port", i, r)
			}
		}
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		return fmt.Errorf("replicas %d: want 1..5 (0: the default)", c.Replicas)
	}
	for i, s := range c.Skills {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("skills[%d] is empty", i)
		}
	}
	if len(c.Labels) > MaxClusterLabels {
		return fmt.Errorf("labels: %d, over the limit of %d (MaxClusterLabels)", len(c.Labels), MaxClusterLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		if !clusterNameRE.MatchString(k) {
			return fmt.Errorf("labels key %q: want 1..64 of [A-Za-z0-9_-]", k)
		}
		if v := c.Labels[k]; len(v) > MaxClusterLabelBytes {
			return fmt.Errorf("labels.%s: %d bytes, over the limit of %d (MaxClusterLabelBytes)", k, len(v), MaxClusterLabelBytes)
		}
	}
	return nil
}

// Clustered reports whether the table makes the daemon a node on its own:
// it names NATS servers or an embedded server.
func (c *ClusterConfig) Clustered() bool {
	return c != nil && (len(c.URLs) > 0 || c.Embedded != nil)
}

// ClusterConfig returns the table as the cluster's configuration (nil for
// a nil table). Defaults are left to host/cluster; the node name is left
// empty when the table has none, for the caller to fill.
func (c *ClusterConfig) ClusterConfig() *cluster.Config {
	if c == nil {
		return nil
	}
	out := &cluster.Config{
		ClusterName: c.ClusterName, NodeName: c.NodeName, URLs: slices.Clone(c.URLs), CredsFile: c.CredsFile,
		TLS:      cluster.TLSConfig{CAFile: c.TLS.CAFile, CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile},
		Replicas: c.Replicas, Skills: slices.Clone(c.Skills), Labels: maps.Clone(c.Labels),
	}
	if e := c.Embedded; e != nil {
		out.Embedded = &cluster.EmbeddedConfig{Listen: e.Listen, RouteListen: e.RouteListen, Routes: slices.Clone(e.Routes)}
	}
	return out
}
