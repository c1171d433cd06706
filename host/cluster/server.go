package cluster

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
)

// MaxPayload is the largest NATS message an embedded server accepts: room
// for a tool's input or output (1 MiB each) with its envelope, and for a
// skill's storage record.
const MaxPayload = 8 << 20

// startEmbedded starts the node's nats-server with JetStream (data under
// e.StoreDir) and waits until it takes connections. tokenClients reports
// whether clients present the token (no users in the config file).
func startEmbedded(cfg Config) (_ *server.Server, tokenClients bool, _ error) {
	e := cfg.Embedded
	host, port, err := splitHostPort(e.Listen)
	if err != nil {
		return nil, false, fmt.Errorf("%w: listen %q: %v", ErrInvalidConfig, e.Listen, err)
	}
	rhost, rport, err := splitHostPort(e.RouteListen)
	if err != nil {
		return nil, false, fmt.Errorf("%w: route listen %q: %v", ErrInvalidConfig, e.RouteListen, err)
	}
	if err := os.MkdirAll(e.StoreDir, 0o700); err != nil {
		return nil, false, fmt.Errorf("cluster: embedded server store: %w", err)
	}
	opts := &server.Options{}
	if e.ConfigFile != "" {
		if opts, err = server.ProcessConfigFile(e.ConfigFile); err != nil {
			return nil, false, fmt.Errorf("%w: embedded server config %s: %v", ErrInvalidConfig, e.ConfigFile, err)
		}
	}
	// What the node sets wins over the file (EmbeddedConfig.ConfigFile).
	opts.ServerName = cfg.NodeName
	opts.Host, opts.Port = host, port
	opts.JetStream, opts.StoreDir = true, e.StoreDir
	opts.MaxPayload = max(opts.MaxPayload, MaxPayload)
	opts.NoSigs = true
	// A node without routes is a cluster of one: plain JetStream, no
	// route listener. A NATS cluster needs routes on every node (each
	// node may list every node, itself included: NATS skips itself).
	opts.Routes = nil
	if len(e.Routes) > 0 {
		opts.Cluster.Name, opts.Cluster.Host, opts.Cluster.Port = cfg.ClusterName, rhost, rport
	} else {
		opts.Cluster = server.ClusterOpts{}
	}
	for _, r := range e.Routes {
		u, err := url.Parse(r)
		if err != nil {
			return nil, false, fmt.Errorf("%w: route %q: %v", ErrInvalidConfig, r, err)
		}
		if e.Token != "" && u.User == nil {
			u.User = url.UserPassword("palyra", e.Token)
		}
		opts.Routes = append(opts.Routes, u)
	}
	if e.Token != "" {
		// The token guards the routes always, and the clients unless the
		// file names users (then they do: NATS refuses a token beside
		// users).
		opts.Cluster.Username, opts.Cluster.Password = "palyra", e.Token
		if !hasUsers(opts) {
			opts.Authorization = e.Token
		}
	}
	if cfg.TLS.Enabled() {
		if err := embeddedTLS(opts, cfg.TLS); err != nil {
			return nil, false, err
		}
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, false, fmt.Errorf("%w: embedded server: %v", ErrInvalidConfig, err)
	}
	s.SetLogger(natsLogger{cfg.Logger.Named("nats")}, false, false)
	go s.Start()
	if !s.ReadyForConnections(cfg.ConnectTimeout) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, false, fmt.Errorf("%w: the embedded server did not take connections within %s (listen %s, routes %s)",
			ErrClusterUnavailable, cfg.ConnectTimeout, e.Listen, e.RouteListen)
	}
	return s, e.Token != "" && opts.Authorization == e.Token, nil
}

// embeddedTLS sets the server's client and route listeners to TLS with
// client certificates verified against t.CAFile. The route listener gets
// its own tls.Config: a route is both a TLS server and a TLS client, so it
// verifies the peer's certificate as a client (RootCAs) and as a server
// (ClientCAs, required) with the same CA, as nats-server does for a
// cluster tls block.
func embeddedTLS(opts *server.Options, t TLSConfig) error {
	gen := func() (*tls.Config, error) {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
			CertFile: t.CertFile, KeyFile: t.KeyFile, CaFile: t.CAFile, Verify: true, Timeout: tlsTimeout,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: TLS (certificate %s, CA %s): %v", ErrInvalidConfig, t.CertFile, t.CAFile, err)
		}
		return tc, nil
	}
	tc, err := gen()
	if err != nil {
		return err
	}
	opts.TLSConfig, opts.TLSVerify, opts.TLSTimeout = tc, true, tlsTimeout
	rtc, err := gen()
	if err != nil {
		return err
	}
	rtc.ClientAuth = tls.RequireAndVerifyClientCert
	rtc.RootCAs = rtc.ClientCAs
	opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = rtc, tlsTimeout
	return nil
}

// tlsTimeout is the embedded server's TLS handshake deadline, seconds.
const tlsTimeout = 2

// hasUsers reports whether a server's options authenticate clients as
// users (plain, nkey, or JWT through trusted operators).
func hasUsers(o *server.Options) bool {
	return len(o.Users) > 0 || len(o.Nkeys) > 0 || len(o.TrustedOperators) > 0 || len(o.TrustedKeys) > 0
}

func splitHostPort(hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("port %q", p)
	}
	if n == 0 {
		n = server.RANDOM_PORT
	}
	return h, n, nil
}

// natsLogger sends the embedded server's log lines to hclog.
type natsLogger struct{ l hclog.Logger }

func (n natsLogger) Noticef(format string, v ...any) { n.l.Debug(fmt.Sprintf(format, v...)) }
func (n natsLogger) Warnf(format string, v ...any)   { n.l.Warn(fmt.Sprintf(format, v...)) }
func (n natsLogger) Fatalf(format string, v ...any)  { n.l.Error(fmt.Sprintf(format, v...)) }
func (n natsLogger) Errorf(format string, v ...any)  { n.l.Error(fmt.Sprintf(format, v...)) }
func (n natsLogger) Debugf(format string, v ...any)  { n.l.Trace(fmt.Sprintf(format, v...)) }
func (n natsLogger) Tracef(format string, v ...any)  { n.l.Trace(fmt.Sprintf(format, v...)) }
