package daemon

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/anomaly"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/tomltext"
	"github.com/palyra-go/palyra/host/mcpserver"
)

// Defaults of the daemon's configuration.
const (
	DefaultListen          = "127.0.0.1:7142"
	DefaultReauditInterval = 6 * time.Hour
	DefaultHookTimeout     = 10 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultMaxRequestBytes caps a JSON request body (and a gRPC message
	// other than an install): room for a tool input of host.MaxInputBytes
	// and its framing, so that a call's input is judged by the host's own
	// limit (input_too_large) rather than by the body's.
	DefaultMaxRequestBytes = 2 << 20
	// DefaultMaxArtifactBytes caps an uploaded artifact (Palyra's
	// MAX_ARTIFACT_BYTES, 64 MiB).
	DefaultMaxArtifactBytes = 64 << 20
	// MaxConfigBytes caps the configuration file.
	MaxConfigBytes = 256 << 10
)

// ErrInvalidConfig is a configuration the daemon refuses to start with.
var ErrInvalidConfig = errcode.New("daemon_config_invalid", "invalid daemon configuration")

// Duration is a time.Duration written as a Go duration string ("6h", "250ms")
// in the configuration file: the host's one such type (also anomaly's).
type Duration = tomltext.Duration

// TLS names the certificate and key the daemon serves with. A listen address
// that is not loopback needs them.
type TLS struct {
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

// Enabled reports whether TLS is configured.
func (t TLS) Enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Config is the daemon's configuration file (TOML, --config), merged with the
// command line. Every field has a default.
//
//	deployment = "local"           # or "hardened" (see Deployment); serve's --deployment overrides it
//	listen = "127.0.0.1:7142"
//	reaudit_interval = "6h"        # 0 disables the scheduled re-audit
//	hook_timeout = "10s"
//	hook_retries = 3               # tries after a hook fails on a journal event, then skill.hook_gave_up (0: none)
//	hook_retry_backoff = "1s"      # the wait before the first retry, doubled for each next one
//	shutdown_timeout = "30s"       # how long SIGTERM waits for in-flight calls
//	max_request_bytes = 1048576
//	max_artifact_bytes = 67108864
//	[tls]
//	cert_file = "/etc/palyra/tls.crt"
//	key_file = "/etc/palyra/tls.key"
//	[anomaly]                      # runtime anomaly quarantine (host/anomaly)
//	window = "5m"
//	thresholds = { fuel_exhausted = 5, trap = 5, capability_denied = 10 }
//	[approvals]                    # calls of tools that need a human's approval
//	ttl = "15m"                    # how long an approval waits for its decision, then for its use (10s..168h)
//	[mcp]                          # the MCP endpoint /mcp (host/mcpserver)
//	approval_without_elicitation = "deny"  # or "allow": tools needing approval, clients without elicitation
//	[[channels]]                   # channels skills may send to (host/channels)
//	name = "ops"
//	type = "webhook"
//	url = "https://hooks.example.com/palyra"
//	[cluster]                      # a node of a NATS cluster (host/cluster); serve's --cluster* flags override it
//	node_name = "node-a"           # default: the host name
//	cluster_name = "palyra"
//	urls = ["tls://nats-1.example.com:4222"]  # an existing NATS deployment, or [cluster.embedded]
//	creds_file = "/etc/palyra/nats.creds"
//	replicas = 3                   # default min(3, nodes) embedded, 1 with urls
//	skills = ["acme.echo"]         # serve only these (default: every active skill)
//	labels = { zone = "a" }
//	[cluster.tls]                  # NATS TLS: the CA, and this node's client certificate
//	ca_file = "/etc/palyra/nats-ca.crt"
//	cert_file = "/etc/palyra/nats.crt"
//	key_file = "/etc/palyra/nats.key"
//	[cluster.embedded]             # a nats-server with JetStream in this process (data under <state>/cluster/nats)
//	listen = "127.0.0.1:4222"
//	route_listen = "127.0.0.1:6222"
//	routes = ["nats-route://10.0.0.2:6222", "nats-route://10.0.0.3:6222"]
//
// The embedded servers' shared secret is never in the file: palyra-host
// reads it from $PALYRA_CLUSTER_TOKEN.
type Config struct {
	// Deployment is the deployment profile ("" is DeploymentLocal).
	Deployment       Deployment      `toml:"deployment"`
	Listen           string          `toml:"listen"`
	TLS              TLS             `toml:"tls"`
	ReauditInterval  *Duration       `toml:"reaudit_interval"`
	HookTimeout      Duration        `toml:"hook_timeout"`
	ShutdownTimeout  Duration        `toml:"shutdown_timeout"`
	MaxRequestBytes  int64           `toml:"max_request_bytes"`
	MaxArtifactBytes int64           `toml:"max_artifact_bytes"`
	Anomaly          *anomaly.Policy `toml:"anomaly"`
	Channels         []channels.Spec `toml:"channels"`
	MCP              MCPConfig       `toml:"mcp"`
	Approvals        ApprovalsConfig `toml:"approvals"`
	Cluster          *ClusterConfig  `toml:"cluster"`

	// HookRetries is how many times a hook that failed on a journal event
	// is tried again before the daemon gives up on it (nil:
	// hooks.DefaultRetries; 0: none); HookRetryBackoff the wait before the
	// first retry (0: hooks.DefaultRetryBackoff). See host/hooks,
	// "Delivery from the journal".
	HookRetries      *int     `toml:"hook_retries"`
	HookRetryBackoff Duration `toml:"hook_retry_backoff"`
}

// MCPConfig is the [mcp] table: the MCP endpoint's options.
type MCPConfig struct {
	// ApprovalWithoutElicitation is what a call of a tool that needs
	// approval gets from a client without the elicitation capability:
	// "deny" (the default: refused with approval_required) or "allow".
	ApprovalWithoutElicitation mcpserver.Fallback `toml:"approval_without_elicitation"`
}

// ApprovalsConfig is the [approvals] table.
type ApprovalsConfig struct {
	// TTL is how long an approval waits for its decision and, approved,
	// for its use (host.Config.ApprovalTTL; default
	// host.DefaultApprovalTTL, host.MinApprovalTTL..host.MaxApprovalTTL).
	TTL Duration `toml:"ttl"`
}

// LoadConfig reads and validates a configuration file.
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %v", ErrInvalidConfig, path, err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig decodes a configuration (unknown keys are errors) and
// validates it; missing fields get their defaults.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit (MaxConfigBytes)", ErrInvalidConfig, len(data), MaxConfigBytes)
	}
	var c Config
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidConfig, tomltext.Describe(err))
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate fills in defaults and checks every field.
func (c *Config) Validate() error {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.ReauditInterval == nil {
		c.ReauditInterval = &Duration{Duration: DefaultReauditInterval}
	}
	if c.HookTimeout.Duration == 0 {
		c.HookTimeout.Duration = DefaultHookTimeout
	}
	if c.ShutdownTimeout.Duration == 0 {
		c.ShutdownTimeout.Duration = DefaultShutdownTimeout
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxArtifactBytes == 0 {
		c.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	switch {
	case c.ReauditInterval.Duration < 0:
		return fmt.Errorf("%w: reaudit_interval %s is negative (0 disables it)", ErrInvalidConfig, c.ReauditInterval.Duration)
	case c.ReauditInterval.Duration > 0 && c.ReauditInterval.Duration < 100*time.Millisecond:
		return fmt.Errorf("%w: reaudit_interval %s is under 100ms", ErrInvalidConfig, c.ReauditInterval.Duration)
	case c.HookTimeout.Duration < 0 || c.HookTimeout.Duration > 10*time.Minute:
		return fmt.Errorf("%w: hook_timeout %s is outside 0..10m", ErrInvalidConfig, c.HookTimeout.Duration)
	case c.HookRetries != nil && (*c.HookRetries < 0 || *c.HookRetries > 100):
		return fmt.Errorf("%w: hook_retries %d is outside 0..100", ErrInvalidConfig, *c.HookRetries)
	case c.HookRetryBackoff.Duration < 0 || c.HookRetryBackoff.Duration > 10*time.Minute:
		return fmt.Errorf("%w: hook_retry_backoff %s is outside 0..10m", ErrInvalidConfig, c.HookRetryBackoff.Duration)
	case c.ShutdownTimeout.Duration < 0 || c.ShutdownTimeout.Duration > time.Hour:
		return fmt.Errorf("%w: shutdown_timeout %s is outside 0..1h", ErrInvalidConfig, c.ShutdownTimeout.Duration)
	case c.MaxRequestBytes < 1<<10 || c.MaxRequestBytes > 64<<20:
		return fmt.Errorf("%w: max_request_bytes %d is outside 1 KiB..64 MiB", ErrInvalidConfig, c.MaxRequestBytes)
	case c.MaxArtifactBytes < 1<<10 || c.MaxArtifactBytes > 1<<30:
		return fmt.Errorf("%w: max_artifact_bytes %d is outside 1 KiB..1 GiB", ErrInvalidConfig, c.MaxArtifactBytes)
	case c.Approvals.TTL.Duration != 0 && (c.Approvals.TTL.Duration < host.MinApprovalTTL || c.Approvals.TTL.Duration > host.MaxApprovalTTL):
		return fmt.Errorf("%w: approvals.ttl %s is outside %s..%s", ErrInvalidConfig, c.Approvals.TTL.Duration, host.MinApprovalTTL, host.MaxApprovalTTL)
	case (c.TLS.CertFile == "") != (c.TLS.KeyFile == ""):
		return fmt.Errorf("%w: tls needs both cert_file and key_file", ErrInvalidConfig)
	}
	if err := c.validateDeployment(); err != nil {
		return err
	}
	if err := CheckListen(c.Listen, c.TLS.Enabled()); err != nil {
		return err
	}
	if c.Anomaly != nil {
		if err := c.Anomaly.Validate(); err != nil {
			return fmt.Errorf("%w: anomaly: %w", ErrInvalidConfig, err)
		}
	}
	fb, err := mcpserver.ParseFallback(string(c.MCP.ApprovalWithoutElicitation))
	if err != nil {
		return fmt.Errorf("%w: mcp: %w", ErrInvalidConfig, err)
	}
	c.MCP.ApprovalWithoutElicitation = fb
	if c.Deployment == DeploymentHardened && fb == mcpserver.FallbackAllow {
		return fmt.Errorf("%w: deployment \"hardened\" refuses [mcp] approval_without_elicitation = \"allow\": remove it (the default is deny)", ErrInvalidConfig)
	}
	specs, err := channels.ValidateSpecs(c.Channels)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	c.Channels = specs
	if c.Cluster != nil {
		if err := c.Cluster.validate(); err != nil {
			return fmt.Errorf("%w: cluster.%w", ErrInvalidConfig, err)
		}
	}
	return nil
}

// ErrInsecureListen is a listen address off loopback without TLS.
var ErrInsecureListen = errcode.New("insecure_listen", "refusing to listen off loopback without TLS")

// CheckListen checks that addr is host:port and that a host other than a
// loopback address is served with TLS only. "localhost" counts as
// loopback; an empty host (every interface) does not.
func CheckListen(addr string, tls bool) error {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: listen %q: %v", ErrInvalidConfig, addr, err)
	}
	if p == "" {
		return fmt.Errorf("%w: listen %q has no port", ErrInvalidConfig, addr)
	}
	if tls || isLoopback(h) {
		return nil
	}
	return fmt.Errorf("%w: listen %q is not a loopback address; configure [tls] cert_file and key_file to serve on it", ErrInsecureListen, addr)
}

func isLoopback(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
