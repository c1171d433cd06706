package cluster

import (
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
// e.StoreDir) and waits until it takes connections.
func startEmbedded(cfg Config) (*server.Server, error) {
	e := cfg.Embedded
	host, port, err := splitHostPort(e.Listen)
	if err != nil {
		return nil, fmt.Errorf("%w: listen %q: %v", ErrInvalidConfig, e.Listen, err)
	}
	rhost, rport, err := splitHostPort(e.RouteListen)
	if err != nil {
		return nil, fmt.Errorf("%w: route listen %q: %v", ErrInvalidConfig, e.RouteListen, err)
	}
	if err := os.MkdirAll(e.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("cluster: embedded server store: %w", err)
	}
	opts := &server.Options{
		ServerName: cfg.NodeName,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   e.StoreDir,
		MaxPayload: MaxPayload,
		NoSigs:     true,
	}
	// A node without routes is a cluster of one: plain JetStream, no
	// route listener. A NATS cluster needs routes on every node (each
	// node may list every node, itself included: NATS skips itself).
	if len(e.Routes) > 0 {
		opts.Cluster = server.ClusterOpts{Name: cfg.ClusterName, Host: rhost, Port: rport}
	}
	for _, r := range e.Routes {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("%w: route %q: %v", ErrInvalidConfig, r, err)
		}
		if e.Token != "" && u.User == nil {
			u.User = url.UserPassword("palyra", e.Token)
		}
		opts.Routes = append(opts.Routes, u)
	}
	if e.Token != "" {
		opts.Authorization = e.Token
		opts.Cluster.Username, opts.Cluster.Password = "palyra", e.Token
	}
	if cfg.TLS.Enabled() {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
			CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile, CaFile: cfg.TLS.CAFile,
			Verify: cfg.TLS.CAFile != "",
		})
		if err != nil {
			return nil, fmt.Errorf("%w: TLS: %v", ErrInvalidConfig, err)
		}
		opts.TLSConfig, opts.TLSVerify, opts.TLSTimeout = tc, cfg.TLS.CAFile != "", 2
		rtc := tc.Clone()
		opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = rtc, 2
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("%w: embedded server: %v", ErrInvalidConfig, err)
	}
	s.SetLogger(natsLogger{cfg.Logger.Named("nats")}, false, false)
	go s.Start()
	if !s.ReadyForConnections(cfg.ConnectTimeout) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("%w: the embedded server did not take connections within %s (listen %s, routes %s)",
			ErrClusterUnavailable, cfg.ConnectTimeout, e.Listen, e.RouteListen)
	}
	return s, nil
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
