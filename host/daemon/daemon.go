package daemon

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/cluster"
	"github.com/palyra-go/palyra/host/daemon/internal/telemetry"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/mcpserver"
	"github.com/palyra-go/palyra/host/source"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// ErrAlreadyRunning is a second daemon on a state directory.
var ErrAlreadyRunning = errcode.New("daemon_already_running", "another palyra-host serves this state directory")

// PrincipalDaemon is the principal of the daemon's own actions (the
// scheduled re-audit).
const PrincipalDaemon = "system:daemon"

// Options configure Open.
type Options struct {
	// StateDir is the state directory. Required; a relative path is made
	// absolute.
	StateDir string
	// TrustStore, VaultKey and VaultKeyCommand are the host's
	// (host.Config): the trust store file ("" = the state directory's) and
	// the vault key sources. The daemon reads no environment; palyra-host
	// fills them from its own.
	TrustStore, VaultKey, VaultKeyCommand string
	// Sources configures fetching from registries (host.Config.Sources:
	// the docker config file, plain HTTP to loopback OCI registries).
	Sources source.Config
	// Config is the daemon's configuration (nil: every default).
	Config *Config
	// PolicyPath is the operator profile ("" = <state>/policy.toml when it
	// exists, else the default profile).
	PolicyPath string
	// SidecarPath is the palyra-sidecar binary. Required.
	SidecarPath string
	// Logger receives the daemon's structured logs (nil discards them).
	Logger hclog.Logger
	// Supervisor tunes the supervisor (tests shorten its timeouts).
	Supervisor supervisor.Config
	// Cluster, when set, makes the daemon a node of a NATS cluster
	// (host/cluster): it joins before the host opens, and every verb goes
	// through the node. Its Embedded.StoreDir defaults to
	// <state>/cluster/nats.
	Cluster *cluster.Config
	// Version is the palyra-host version the daemon reports.
	Version string
}

// Daemon is a running palyra-host: the one process that owns a state
// directory, serving the gRPC and HTTP APIs on one port.
type Daemon struct {
	cfg      Config
	stateDir string
	log      hclog.Logger
	lock     *os.File

	// posture is the security posture of the deployment profile.
	posture Posture

	// version is Options.Version: reported for this node by GET
	// /v1/cluster when the service does not know it (a host that is not
	// clustered).
	version string

	// served are the API routes registered on the mux, in order (route
	// records each; the OpenAPI coverage test reads them).
	served []apiRoute

	// link and node are the daemon's cluster membership (nil when not
	// clustered): node is then svc.
	link *cluster.Link
	node *cluster.Node
	// host is the daemon's library host: opened and closed here, and the
	// source of the capability registry and the Prometheus figures.
	host *host.Host
	// svc is host as the Service: every route and RPC is one call on it.
	svc     host.Service
	auth    *Authenticator
	metrics *telemetry.Metrics
	grpc    *grpc.Server
	// mcp serves the skills' tools over MCP at /mcp (mcp.go); mcpWake
	// carries the service's events to it.
	mcp     *mcpserver.Server
	mcpHTTP http.Handler
	mcpWake *events.Bus

	ready    atomic.Bool
	stopping chan struct{} // closed when shutdown starts: ends event streams
	stopOnce sync.Once
	loops    sync.WaitGroup
}

// Open takes the state directory's daemon lock, makes sure the admin token
// exists and opens the host. Serve runs it; Close releases everything when
// Serve was never called.
func Open(ctx context.Context, opts Options) (*Daemon, error) {
	if opts.StateDir == "" {
		return nil, fmt.Errorf("%w: Options.StateDir is empty", statedir.ErrInvalid)
	}
	state, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", statedir.ErrInvalid, opts.StateDir, err)
	}
	layout := statedir.At(state)
	if err := os.MkdirAll(layout.DaemonDir(), 0o700); err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	cfg := Config{}
	if opts.Config != nil {
		cfg = *opts.Config
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.SidecarPath == "" {
		return nil, fmt.Errorf("daemon: %w: no sidecar binary", supervisor.ErrSidecarNotFound)
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if cfg.Deployment == DeploymentHardened {
		if opts.Cluster != nil && (opts.Cluster.TLS.CAFile == "" || opts.Cluster.TLS.CertFile == "") {
			return nil, fmt.Errorf("%w: deployment \"hardened\" requires TLS on the cluster's NATS connections too: set [cluster.tls] ca_file, cert_file and key_file (or serve's --cluster-tls-* flags)", ErrInvalidConfig)
		}
		if err := checkHardenedHost(ctx, opts.Supervisor, opts.SidecarPath); err != nil {
			return nil, err
		}
		prof, err := LoadProfile(opts.PolicyPath, state)
		if err != nil {
			return nil, fmt.Errorf("daemon: %w", err)
		}
		if err := StrictEgress(prof); err != nil {
			return nil, err
		}
		ts := opts.TrustStore
		if ts == "" {
			ts = layout.TrustStore()
		}
		v, err := vault.Open(vault.Config{StateDir: state, EncodedKey: opts.VaultKey, KeyCommand: opts.VaultKeyCommand})
		if err != nil {
			return nil, fmt.Errorf("daemon: %w", err)
		}
		if err := checkAllowlistOnly(ctx, ts, trust.WithVault(v)); err != nil {
			return nil, err
		}
	}
	lock, err := fsutil.LockExclusive(ctx, layout.DaemonLock(), -1)
	if err != nil {
		pid := ""
		if b, rerr := os.ReadFile(InfoPath(state)); rerr == nil {
			var info Info
			if json.Unmarshal(b, &info) == nil {
				pid = fmt.Sprintf(" (pid %d, %s)", info.PID, info.URL)
			}
		}
		return nil, fmt.Errorf("%w: %s%s: %v", ErrAlreadyRunning, state, pid, err)
	}
	d := &Daemon{cfg: cfg, stateDir: state, version: opts.Version, posture: cfg.Posture(opts.Supervisor.Hardening.Off), log: log, lock: lock, stopping: make(chan struct{}), mcpWake: &events.Bus{}}
	ok := false
	defer func() {
		if !ok {
			d.releaseLock()
		}
	}()
	if _, err := EnsureToken(state); err != nil {
		return nil, err
	}
	if d.auth, err = NewAuthenticator(TokenPath(state)); err != nil {
		return nil, err
	}
	// The metrics exist before the host, whose callbacks feed them; their
	// source is the host once it is open.
	src := &metricsSource{}
	node := host.LocalNodeName()
	if opts.Cluster != nil && opts.Cluster.NodeName != "" {
		node = opts.Cluster.NodeName
	}
	d.metrics = telemetry.New(src, node)
	if opts.Cluster != nil {
		cc := *opts.Cluster
		if cc.Logger == nil {
			cc.Logger = log
		}
		if cc.Embedded != nil && cc.Embedded.StoreDir == "" {
			e := *cc.Embedded
			e.StoreDir = filepath.Join(state, "cluster", "nats")
			cc.Embedded = &e
		}
		if d.link, err = cluster.Dial(ctx, cc); err != nil {
			return nil, err
		}
	}
	defer func() {
		if !ok && d.link != nil {
			d.link.Close()
		}
	}()
	hcfg := host.Config{
		StateDir: state, PolicyPath: opts.PolicyPath, Logger: log, SidecarPath: opts.SidecarPath,
		TrustStore: opts.TrustStore, VaultKey: opts.VaultKey, VaultKeyCommand: opts.VaultKeyCommand,
		Supervisor: opts.Supervisor, Anomaly: cfg.Anomaly, Sources: opts.Sources,
		OnCall: d.observeCall, OnHook: d.observeHook,
		DispatchHooks: d.link == nil, HookTimeout: cfg.HookTimeout.Duration, HookRetryBackoff: cfg.HookRetryBackoff.Duration,
		ApprovalTTL: cfg.Approvals.TTL.Duration,
	}
	if cfg.HookRetries != nil {
		hcfg.HookRetries = *cfg.HookRetries
		if hcfg.HookRetries == 0 {
			hcfg.HookRetries = -1 // none
		}
	}
	if d.link != nil {
		hcfg.Storage = d.link.SkillStorage() // skills keep one state cluster-wide
	}
	if d.host, err = host.Open(ctx, hcfg); err != nil {
		return nil, err
	}
	src.h, d.svc = d.host, d.host
	if d.link != nil {
		if d.node, err = cluster.NewNode(ctx, d.link, d.host, cluster.NodeOptions{Version: opts.Version, Logger: log}); err != nil {
			d.host.Close(ctx)
			return nil, err
		}
		d.svc = d.node
	}
	if cfg.Deployment == DeploymentHardened {
		d.svc = hardenedService{Service: d.svc}
	}
	if err := d.registerChannels(); err != nil {
		d.closeHost(ctx)
		return nil, err
	}
	if err := d.newMCP(); err != nil {
		d.closeHost(ctx)
		return nil, err
	}
	d.grpc = d.newGRPCServer()
	ok = true
	return d, nil
}

// registerChannels registers the configured channels on the host.
func (d *Daemon) registerChannels() error {
	reg := d.host.Channels()
	for _, s := range d.cfg.Channels {
		var c channels.Channel
		switch s.Type {
		case channels.TypeLog:
			c = &channels.Log{Logger: d.log.Named("channel")}
		case channels.TypePubSub:
			c = &channels.PubSub{}
		case channels.TypeWebhook:
			w, err := d.host.WebhookChannel(s.URL)
			if err != nil {
				return fmt.Errorf("daemon: channel %s: %w", s.Name, err)
			}
			c = w
		}
		if err := reg.Register(s.Name, c); err != nil {
			return fmt.Errorf("daemon: channel %s: %w", s.Name, err)
		}
	}
	return nil
}

// Host returns the daemon's host (for embedding and tests).
func (d *Daemon) Host() *host.Host { return d.host }

// Posture returns the security posture the daemon runs with.
// Under "local", AllowInline follows the profile the host judges by now.
func (d *Daemon) Posture() Posture {
	p := d.posture
	if p.Deployment != DeploymentHardened && d.host != nil {
		p.AllowInline = d.host.InlineAllowed()
	}
	return p
}

// StateDir returns the state directory the daemon owns.
func (d *Daemon) StateDir() string { return d.stateDir }

// Info is <state>/daemon/daemon.json, written while the daemon serves: how
// to reach it. The CLI reads it to find a running daemon.
type Info struct {
	PID       int    `json:"pid"`
	URL       string `json:"url"`
	TokenFile string `json:"token_file"`
	StartedAt string `json:"started_at"`
}

// InfoPath is the daemon.json of a state directory (statedir.Layout.DaemonInfo).
func InfoPath(stateDir string) string { return statedir.At(stateDir).DaemonInfo() }

// ReadInfo reads the daemon.json of a state directory.
func ReadInfo(stateDir string) (*Info, error) {
	b, err := os.ReadFile(InfoPath(stateDir))
	if err != nil {
		return nil, err
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("%s: %w", InfoPath(stateDir), err)
	}
	return &info, nil
}

// Listen opens the configured listen address.
func (d *Daemon) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", d.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("daemon: listen %s: %w", d.cfg.Listen, err)
	}
	return ln, nil
}

// URL is the base URL of the daemon served on ln.
func (d *Daemon) URL(ln net.Listener) string {
	scheme := "http"
	if d.cfg.TLS.Enabled() {
		scheme = "https"
	}
	return scheme + "://" + ln.Addr().String()
}

// Serve serves the APIs on ln until ctx ends, then shuts down gracefully:
// it stops accepting, ends event streams, waits for in-flight requests up
// to the shutdown timeout (then cancels them), stops the hooks, the
// scheduled loops and every sidecar, and releases the state directory.
// It returns nil after a clean shutdown.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener) error {
	if err := CheckListen(ln.Addr().String(), d.cfg.TLS.Enabled()); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           d.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          d.log.Named("http").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetHTTP2(true)
	if d.cfg.TLS.Enabled() {
		cert, err := tls.LoadX509KeyPair(d.cfg.TLS.CertFile, d.cfg.TLS.KeyFile)
		if err != nil {
			ln.Close()
			return fmt.Errorf("%w: tls: %v", ErrInvalidConfig, err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	} else {
		protos.SetUnencryptedHTTP2(true)
	}
	srv.Protocols = &protos

	url := d.URL(ln)
	info, _ := json.MarshalIndent(Info{PID: os.Getpid(), URL: url, TokenFile: TokenPath(d.stateDir), StartedAt: time.Now().UTC().Format(time.RFC3339)}, "", "  ")
	if err := fsutil.WriteAtomic(InfoPath(d.stateDir), append(info, '\n'), 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("daemon: %w", err)
	}

	loopCtx, stopLoops := context.WithCancel(context.WithoutCancel(ctx))
	d.loops.Add(2)
	go func() { defer d.loops.Done(); d.reauditLoop(loopCtx) }()
	go func() { defer d.loops.Done(); d.fireStartup(loopCtx, url) }()
	d.startMCP(loopCtx)

	serveErr := make(chan error, 1)
	var native sync.WaitGroup // the demultiplexer and gRPC's own transport
	if srv.TLSConfig != nil {
		go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	} else {
		m := newDemux(ln, sniffTimeout)
		native.Add(2)
		go func() { defer native.Done(); m.run() }()
		go func() { defer native.Done(); d.grpc.Serve(m.grpc) }()
		go func() { serveErr <- srv.Serve(m.http) }()
	}
	d.ready.Store(true)
	d.log.Info("palyra-host serving", "url", url, "state_dir", d.stateDir, "token_file", TokenPath(d.stateDir), "deployment", d.posture.Deployment)

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
		err = fmt.Errorf("daemon: serve: %w", err)
	}
	d.log.Info("shutting down", "drain_timeout", d.cfg.ShutdownTimeout.Duration)
	d.ready.Store(false)
	d.stopOnce.Do(func() { close(d.stopping) })
	drain, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownTimeout.Duration)
	defer cancel()
	// The gRPC server stops after the http.Server: its GracefulStop must
	// not meet a call still served through ServeHTTP (it cannot drain one).
	if serr := srv.Shutdown(drain); serr != nil {
		d.log.Warn("drain deadline passed; cancelling in-flight requests", "error", serr)
		srv.Close()
		d.grpc.Stop()
	} else {
		grpcDrained := make(chan struct{})
		go func() { d.grpc.GracefulStop(); close(grpcDrained) }()
		select {
		case <-grpcDrained:
		case <-drain.Done():
			d.log.Warn("drain deadline passed; cancelling in-flight gRPC calls")
			d.grpc.Stop()
			<-grpcDrained
		}
	}
	native.Wait()
	if err == nil {
		<-serveErr
	}
	stopLoops()
	d.loops.Wait()
	return errors.Join(err, d.close(drain))
}

// Close releases a daemon that was opened but never served.
func (d *Daemon) Close(ctx context.Context) error {
	d.stopOnce.Do(func() { close(d.stopping) })
	return d.close(ctx)
}

// closeHost leaves the cluster (other nodes stop routing here), closes
// the host, then the cluster link.
func (d *Daemon) closeHost(ctx context.Context) error {
	var errs []error
	if d.node != nil {
		errs = append(errs, d.node.Close(ctx))
	}
	if d.host != nil {
		errs = append(errs, d.host.Close(ctx))
	}
	if d.link != nil {
		errs = append(errs, d.link.Close())
	}
	return errors.Join(errs...)
}

func (d *Daemon) close(ctx context.Context) error {
	var errs []error
	// The sidecars stop even when the drain used up ctx.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	errs = append(errs, d.closeHost(hctx))
	cancel()
	// Serve stops the gRPC server when it ends; a daemon never served (or
	// whose Serve is still draining) has its stream workers stopped here.
	if d.grpc != nil {
		d.grpc.Stop()
	}
	if err := os.Remove(InfoPath(d.stateDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	d.releaseLock()
	return errors.Join(errs...)
}

func (d *Daemon) releaseLock() {
	if d.lock != nil {
		fsutil.Unlock(d.lock)
		d.lock = nil
	}
}

// reauditLoop re-audits every installed version at the configured interval.
func (d *Daemon) reauditLoop(ctx context.Context) {
	iv := d.cfg.ReauditInterval.Duration
	if iv <= 0 {
		return
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := d.svc.Reaudit(host.WithPrincipal(ctx, PrincipalDaemon))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			d.metrics.ObserveReaudit("error")
			d.log.Error("scheduled re-audit failed", "error", err)
			continue
		}
		d.metrics.ObserveReaudit("ok")
		if rep.Quarantined > 0 {
			d.log.Warn("scheduled re-audit quarantined skills", "checked", rep.Checked, "quarantined", rep.Quarantined)
		} else {
			d.log.Debug("scheduled re-audit", "checked", rep.Checked, "passed", rep.Passed)
		}
	}
}

// fireStartup runs the hooks bound to gateway:startup once the daemon
// serves, through the Service as a fire from the API would.
func (d *Daemon) fireStartup(ctx context.Context, url string) {
	payload, err := json.Marshal(map[string]any{"source": "gateway.startup", "url": url})
	if err != nil {
		return
	}
	ctx = host.WithPrincipal(ctx, PrincipalDaemon)
	if _, err := d.svc.FireHooks(ctx, host.FireRequest{Event: hooks.EventGatewayStartup, Payload: payload}); err != nil && ctx.Err() == nil {
		d.log.Warn("gateway:startup hooks", "code", errcode.Of(err), "error", err)
	}
}

// observeCall feeds a call's record to the telemetry (host.Config.OnCall).
func (d *Daemon) observeCall(r host.CallRecord) {
	c := telemetry.Call{SkillID: r.SkillID, Version: r.Version, ToolID: r.ToolID, Code: r.Code, Duration: r.Duration}
	if r.Result != nil {
		c.PeakMemoryBytes = r.Result.Stats.PeakMemoryBytes
		// A lower bound (a timed-out call) would skew the histogram down.
		if !r.Result.Stats.FuelLowerBound {
			c.FuelConsumed = r.Result.Stats.FuelConsumed
		}
	}
	d.metrics.ObserveCall(c)
	if r.Anomaly != nil {
		d.metrics.ObserveAnomalyQuarantine(r.SkillID, r.Anomaly.Kind)
	}
}

// observeHook counts a hook's outcome (host.Config.OnHook): its decision,
// or its error code when it failed.
func (d *Daemon) observeHook(o hooks.Outcome) {
	result := string(o.Decision)
	if o.Err != "" {
		result = o.Code
	}
	d.metrics.ObserveHook(o.Event, result, o.Duration)
}

// metricsSource adapts the host to telemetry.Source; h is nil until the
// host is open.
type metricsSource struct{ h *host.Host }

func (s *metricsSource) AllStats() map[string]host.SkillStats {
	if s.h == nil {
		return nil
	}
	return s.h.AllStats()
}

func (s *metricsSource) SidecarStates() []supervisor.State {
	if s.h == nil {
		return nil
	}
	st, _ := s.h.Sidecars(context.Background())
	return st
}

// principalOf validates a principal header value; "" gives
// host.DefaultPrincipal.
func principalOf(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return host.DefaultPrincipal, nil
	}
	if len(v) > maxPrincipalBytes {
		return "", fmt.Errorf("%w: x-palyra-principal is %d bytes, over the %d-byte limit", ErrBadRequest, len(v), maxPrincipalBytes)
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":._@-/", r)) {
			return "", fmt.Errorf("%w: x-palyra-principal %q has the character %q (allowed: letters, digits and :._@-/)", ErrBadRequest, v, r)
		}
	}
	return v, nil
}

// DefaultPrincipal is recorded when a request names no x-palyra-principal.
const DefaultPrincipal = host.DefaultPrincipal

const maxPrincipalBytes = 128

// ErrBadRequest is a malformed request (host.ErrBadRequest).
var ErrBadRequest = host.ErrBadRequest

// cluster is the Service's Cluster with this daemon's version on the node
// that answered, when the service left it out (a host that is not
// clustered knows no version).
func (d *Daemon) cluster(ctx context.Context) (*host.ClusterStatus, error) {
	st, err := d.svc.Cluster(ctx)
	if err != nil {
		return nil, err
	}
	for i := range st.Nodes {
		if st.Nodes[i].Name == st.Node && st.Nodes[i].Version == "" {
			st.Nodes[i].Version = d.version
		}
	}
	return st, nil
}
