package cluster

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Config configures a node's link to its cluster. Exactly one of URLs
// (an existing NATS deployment) and Embedded (a nats-server inside this
// process) is set.
type Config struct {
	// ClusterName names the cluster (DefaultClusterName when empty).
	ClusterName string
	// NodeName names this node; unique in the cluster. Required.
	NodeName string
	// URLs are the NATS servers of an existing deployment
	// (nats://host:port, tls://host:port).
	URLs []string
	// Embedded runs a nats-server with JetStream in this process, its data
	// under StoreDir.
	Embedded *EmbeddedConfig
	// CredsFile is a NATS credentials file (user JWT and nkey seed): the
	// node's user when the servers run in operator (JWT) mode.
	CredsFile string
	// NKeyFile is a file holding a NATS user nkey seed (SU...): the node's
	// user when the servers list nkey users (in an account).
	NKeyFile string
	// User and Password are the node's NATS user when the servers list
	// users with passwords (in an account, e.g. PALYRA).
	User, Password string
	// TLS secures the client connection (and, embedded, the server's
	// client and route listeners).
	TLS TLSConfig
	// Replicas is the replica count of the streams and buckets; 0 is
	// min(3, the number of servers the embedded config knows of), or 1
	// for URLs.
	Replicas int
	// Skills, when not empty, restricts the skills this node serves
	// (calls to others are routed to nodes that serve them).
	Skills []string
	// Labels describe the node (shown in the cluster status).
	Labels map[string]string
	// HeartbeatInterval is how often the node publishes its status
	// (default 250 ms); a node unheard for LivenessWindow (default 1.5 s)
	// is lost.
	HeartbeatInterval, LivenessWindow time.Duration
	// ConnectTimeout bounds joining: the connection, and the cluster's
	// streams becoming available (default 30 s).
	ConnectTimeout time.Duration
	// Logger receives the link's logs (nil discards them).
	Logger hclog.Logger
}

// EmbeddedConfig is the nats-server a node runs in its own process.
type EmbeddedConfig struct {
	// StoreDir holds the server's JetStream data. Required.
	StoreDir string
	// Listen is the client listener, host:port (default 127.0.0.1:4222;
	// port 0 picks one).
	Listen string
	// RouteListen is the cluster (route) listener, host:port (default
	// 127.0.0.1:6222; port 0 picks one).
	RouteListen string
	// Routes are the other nodes' route listeners (nats-route://host:port).
	Routes []string
	// Token, when set, is the secret every route presents, and every
	// client too unless ConfigFile lists users (then the users guard the
	// client listener and the token the routes).
	Token string
	// ConfigFile is a nats-server configuration file the embedded server
	// starts from: accounts, users, authorization, limits, system account
	// and anything else a NATS deployment sets. What the node sets wins
	// over the file: the server name (the node name), Listen,
	// RouteListen, Routes and the cluster name, JetStream with StoreDir,
	// and TLS when Config.TLS is set (otherwise the file's tls blocks
	// stay). See docs/cluster-production.md.
	ConfigFile string
}

// TLSConfig is TLS for NATS connections: CAFile verifies the peer, and
// CertFile/KeyFile are this side's certificate (client certificates).
// For an embedded server all three are required: the certificate serves
// the client and route listeners and is the node's client certificate on
// its routes (so it needs both server and client extended key usage), and
// CAFile verifies clients' and peers' certificates (client certificates
// are required on both listeners).
type TLSConfig struct {
	CAFile, CertFile, KeyFile string
}

// Enabled reports whether any TLS file is set.
func (t TLSConfig) Enabled() bool { return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

func (c *Config) withDefaults() Config {
	out := *c
	if out.ClusterName == "" {
		out.ClusterName = DefaultClusterName
	}
	if out.HeartbeatInterval <= 0 {
		out.HeartbeatInterval = 250 * time.Millisecond
	}
	if out.LivenessWindow <= 0 {
		out.LivenessWindow = 1500 * time.Millisecond
	}
	if out.ConnectTimeout <= 0 {
		out.ConnectTimeout = 30 * time.Second
	}
	if out.Logger == nil {
		out.Logger = hclog.NewNullLogger()
	}
	if out.Embedded != nil {
		e := *out.Embedded
		if e.Listen == "" {
			e.Listen = "127.0.0.1:4222"
		}
		if e.RouteListen == "" {
			e.RouteListen = "127.0.0.1:6222"
		}
		out.Embedded = &e
	}
	if out.Replicas == 0 {
		out.Replicas = 1
		if out.Embedded != nil {
			out.Replicas = min(3, out.Embedded.servers())
		}
	}
	return out
}

// Validate reports the first setting that cannot work, naming it.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if !validName(c.NodeName) {
		return bad("node name %q: want 1..64 of [A-Za-z0-9_-]", c.NodeName)
	}
	if c.ClusterName != "" && !validName(c.ClusterName) {
		return bad("cluster name %q: want 1..64 of [A-Za-z0-9_-]", c.ClusterName)
	}
	switch {
	case len(c.URLs) == 0 && c.Embedded == nil:
		return bad("neither NATS URLs nor an embedded server")
	case len(c.URLs) > 0 && c.Embedded != nil:
		return bad("both NATS URLs and an embedded server: choose one")
	}
	for _, u := range c.URLs {
		p, err := url.Parse(u)
		if err != nil || p.Host == "" || (p.Scheme != "nats" && p.Scheme != "tls") {
			return bad("NATS URL %q: want nats://host:port or tls://host:port", u)
		}
	}
	if e := c.Embedded; e != nil {
		if e.StoreDir == "" {
			return bad("the embedded server has no store directory")
		}
		for _, r := range e.Routes {
			p, err := url.Parse(r)
			if err != nil || p.Host == "" || p.Scheme != "nats-route" && p.Scheme != "nats" && p.Scheme != "tls" {
				return bad("route %q: want nats-route://host:port", r)
			}
		}
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		return bad("replicas %d: want 1..5", c.Replicas)
	}
	if c.TLS.CertFile != "" && c.TLS.KeyFile == "" || c.TLS.KeyFile != "" && c.TLS.CertFile == "" {
		return bad("a TLS certificate needs its key and a key its certificate")
	}
	if c.Embedded != nil && c.TLS.Enabled() && (c.TLS.CAFile == "" || c.TLS.CertFile == "") {
		return bad("an embedded server's TLS needs a CA, a certificate and its key")
	}
	users := 0
	for _, set := range []bool{c.CredsFile != "", c.NKeyFile != "", c.User != ""} {
		if set {
			users++
		}
	}
	if users > 1 {
		return bad("more than one NATS user: choose one of a credentials file, an nkey seed file, a user and password")
	}
	if c.Password != "" && c.User == "" {
		return bad("a NATS password without a user")
	}
	for _, s := range c.Skills {
		if strings.TrimSpace(s) == "" {
			return bad("an empty skill id in the node's skills")
		}
	}
	return nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// servers counts the embedded cluster's servers its routes name: this
// one and every other route (a route to this node's own route listener,
// which every node may list, is this one).
func (e *EmbeddedConfig) servers() int {
	seen := map[string]bool{}
	for _, r := range e.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" || u.Host == e.RouteListen {
			continue
		}
		seen[u.Host] = true
	}
	return 1 + len(seen)
}
