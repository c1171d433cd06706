package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/cluster"
	"github.com/palyra-go/palyra/host/daemon"
)

// EnvClusterToken is the environment variable holding the secret every
// embedded server's routes and clients present (never a flag: it would
// show in ps).
const EnvClusterToken = "PALYRA_CLUSTER_TOKEN"

// EnvClusterPassword is the environment variable holding the password of
// --cluster-user (never a flag, for the same reason).
const EnvClusterPassword = "PALYRA_CLUSTER_PASSWORD"

// clusterFlags are serve's cluster flags (host/cluster.Config).
type clusterFlags struct {
	urls                   []string
	embedded               bool
	routes                 []string
	listen, routeListen    string
	nodeName, clusterName  string
	creds, nkey, user      string
	serverConfig           string
	tlsCA, tlsCert, tlsKey string
	skills                 []string
	replicas               int
}

func (c *clusterFlags) register(f *pflag.FlagSet) {
	f.StringSliceVar(&c.urls, "cluster", nil, "join the cluster behind these NATS servers (nats://HOST:PORT[,...])")
	f.BoolVar(&c.embedded, "cluster-embedded", false, "run an embedded nats-server with JetStream in this node (data under <state>/cluster/nats)")
	f.StringSliceVar(&c.routes, "cluster-routes", nil, "with --cluster-embedded: every node's route listener (nats-route://HOST:PORT[,...]; listing this node too is fine)")
	f.StringVar(&c.listen, "cluster-listen", "127.0.0.1:4222", "with --cluster-embedded: the embedded server's client listener")
	f.StringVar(&c.routeListen, "cluster-route-listen", "127.0.0.1:6222", "with --cluster-embedded: the embedded server's route listener")
	f.StringVar(&c.nodeName, "node-name", "", "this node's name in the cluster (default: the host name)")
	f.StringVar(&c.clusterName, "cluster-name", cluster.DefaultClusterName, "the cluster's name")
	f.StringVar(&c.creds, "cluster-creds", "", "NATS credentials file (user JWT and nkey seed): this node's user when the servers run in operator mode")
	f.StringVar(&c.nkey, "cluster-nkey", "", "file holding this node's NATS user nkey seed (an nkey user of the servers' accounts)")
	f.StringVar(&c.user, "cluster-user", "", "this node's NATS user (a user of the servers' accounts; password from $"+EnvClusterPassword+")")
	f.StringVar(&c.serverConfig, "cluster-server-config", "", "with --cluster-embedded: a nats-server configuration file the embedded server starts from (accounts, users, limits); this node's flags win over it")
	f.StringVar(&c.tlsCA, "cluster-tls-ca", "", "CA that verifies the NATS servers (embedded: the clients' and peers' certificates, required)")
	f.StringVar(&c.tlsCert, "cluster-tls-cert", "", "this node's NATS client certificate (embedded: also the server's, on the client and route listeners)")
	f.StringVar(&c.tlsKey, "cluster-tls-key", "", "the key of --cluster-tls-cert")
	f.StringSliceVar(&c.skills, "cluster-skills", nil, "serve only these skills on this node (calls to others are routed)")
	f.IntVar(&c.replicas, "cluster-replicas", 0, "replicas of the cluster's streams (default min(3, nodes) embedded, 1 with --cluster)")
}

// config merges the configuration file's [cluster] table (file, nil when
// there is none) with the flags set on the command line (f), a flag
// overriding its key of the table, into one cluster configuration; nil
// when neither names NATS servers nor an embedded server.
func (c *clusterFlags) config(f *pflag.FlagSet, file *daemon.ClusterConfig) (*cluster.Config, error) {
	set := func(name string) bool { return f.Changed(name) }
	cfg := file.ClusterConfig()
	if cfg == nil {
		cfg = &cluster.Config{}
	}
	if set("cluster-server-config") && !(c.embedded || cfg.Embedded != nil) {
		return nil, fmt.Errorf("%w: --cluster-server-config needs an embedded server (--cluster-embedded or [cluster.embedded])", cluster.ErrInvalidConfig)
	}
	if set("cluster") {
		cfg.URLs = c.urls
	}
	if set("cluster-embedded") {
		if !c.embedded {
			cfg.Embedded = nil
		} else if cfg.Embedded == nil {
			cfg.Embedded = &cluster.EmbeddedConfig{}
		}
	}
	if len(cfg.URLs) == 0 && cfg.Embedded == nil {
		if set("cluster-routes") {
			return nil, fmt.Errorf("%w: --cluster-routes needs --cluster-embedded", cluster.ErrInvalidConfig)
		}
		return nil, nil
	}
	str := func(dst *string, name, v string) {
		if set(name) || *dst == "" {
			*dst = v
		}
	}
	str(&cfg.ClusterName, "cluster-name", c.clusterName)
	str(&cfg.NodeName, "node-name", c.nodeName)
	str(&cfg.CredsFile, "cluster-creds", c.creds)
	str(&cfg.NKeyFile, "cluster-nkey", c.nkey)
	str(&cfg.User, "cluster-user", c.user)
	if cfg.User != "" {
		cfg.Password = os.Getenv(EnvClusterPassword)
	}
	str(&cfg.TLS.CAFile, "cluster-tls-ca", c.tlsCA)
	str(&cfg.TLS.CertFile, "cluster-tls-cert", c.tlsCert)
	str(&cfg.TLS.KeyFile, "cluster-tls-key", c.tlsKey)
	if set("cluster-skills") {
		cfg.Skills = c.skills
	}
	if set("cluster-replicas") {
		cfg.Replicas = c.replicas
	}
	if cfg.User != "" {
		cfg.Password = os.Getenv(EnvClusterPassword)
	}
	if cfg.NodeName == "" {
		cfg.NodeName = host.LocalNodeName()
	}
	if e := cfg.Embedded; e != nil {
		str(&e.Listen, "cluster-listen", c.listen)
		str(&e.RouteListen, "cluster-route-listen", c.routeListen)
		if set("cluster-routes") {
			e.Routes = c.routes
		}
		str(&e.ConfigFile, "cluster-server-config", c.serverConfig)
		e.Token = os.Getenv(EnvClusterToken)
	} else if set("cluster-routes") || set("cluster-listen") || set("cluster-route-listen") {
		return nil, fmt.Errorf("%w: --cluster-routes, --cluster-listen and --cluster-route-listen need an embedded server (--cluster-embedded or [cluster.embedded])", cluster.ErrInvalidConfig)
	}
	// The store directory is filled in by the daemon; Validate wants one.
	probe := *cfg
	if probe.Embedded != nil {
		e := *probe.Embedded
		e.StoreDir = "-"
		probe.Embedded = &e
	}
	if err := probe.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}
