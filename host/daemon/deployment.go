package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/anomaly"
	"github.com/palyra-go/palyra/host/desired"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

// Deployment is a deployment profile: the security posture the daemon
// runs with (Palyra's canonical local and hardened profiles). It is the
// configuration's `deployment` key, or serve's --deployment.
type Deployment string

// The deployment profiles.
const (
	// DeploymentLocal is the default: a daemon on one machine for its
	// user, as the configuration sets it (TOFU allowed on request, TLS
	// only off loopback, anomaly quarantine and hardening as configured).
	DeploymentLocal Deployment = "local"
	// DeploymentHardened is for production. The daemon refuses to start
	// without TLS (the API's, and the cluster's NATS connections'), with the sidecar hardening off or where the kernel
	// cannot apply it (no Landlock, seccomp or no_new_privs), with an
	// operator profile whose egress is not strict (allow_private, plain
	// http, wildcards), or with MCP approvals allowed without
	// elicitation, or with a trust store holding keys pinned on first
	// use; it turns the anomaly quarantine on (anomaly's default policy
	// unless [anomaly] is given), refuses every request to pin a publisher
	// key on first use (allow_tofu: the trust store's allowlist only) and every profile change that loosens egress, and allows no
	// inline (unsigned) module.
	DeploymentHardened Deployment = "hardened"
)

// Deployments are the valid deployment profiles.
var Deployments = []Deployment{DeploymentLocal, DeploymentHardened}

// ErrDeploymentRefused is a request the deployment profile forbids (a
// TOFU install, a looser egress profile under "hardened").
var ErrDeploymentRefused = errcode.New("deployment_refused", "refused by the deployment profile")

// ParseDeployment checks a deployment name; "" is DeploymentLocal.
func ParseDeployment(s string) (Deployment, error) {
	if s == "" {
		return DeploymentLocal, nil
	}
	d := Deployment(s)
	if !slices.Contains(Deployments, d) {
		return "", fmt.Errorf("%w: deployment %q: use local or hardened", ErrInvalidConfig, s)
	}
	return d, nil
}

// Posture is the security posture the daemon runs with, as its deployment
// profile and configuration set it. /readyz, /v1/cluster and `palyra
// doctor` report it; every setting the deployment profile decides is one
// field, so that a new one (inline modules) has one place.
type Posture struct {
	// Deployment is the profile.
	Deployment Deployment `json:"deployment"`
	// TLS is whether the API is served over TLS.
	TLS bool `json:"tls"`
	// AllowTOFU is whether a request may pin an unknown publisher's key on
	// first use; false means the trust store's allowlist only.
	AllowTOFU bool `json:"allow_tofu"`
	// SidecarHardening is "required" (hardened: the daemon did not start
	// without it), "on" or "off" (--no-harden-sidecars).
	SidecarHardening string `json:"sidecar_hardening"`
	// AnomalyQuarantine is whether the runtime anomaly quarantine is on.
	AnomalyQuarantine bool `json:"anomaly_quarantine"`
	// StrictEgress is whether the operator profile must keep egress
	// strict (https only, no private addresses, no wildcards): checked at
	// start and on every SetPolicy.
	StrictEgress bool `json:"strict_egress"`
	// AllowInline is whether inline (unsigned, unpackaged) modules may
	// run (palyra dev run): under "local" the operator profile's [dev]
	// allow_inline as it is now; never under "hardened", which refuses a
	// profile that sets it and every inline run.
	AllowInline bool `json:"allow_inline"`
}

// Posture returns the posture of a validated configuration, given
// whether the supervisor's hardening is off (--no-harden-sidecars).
func (c *Config) Posture(hardeningOff bool) Posture {
	p := Posture{Deployment: c.Deployment, TLS: c.TLS.Enabled(), AllowTOFU: true, SidecarHardening: "on", AnomalyQuarantine: c.Anomaly != nil}
	if hardeningOff {
		p.SidecarHardening = "off"
	}
	if c.Deployment == DeploymentHardened {
		p.AllowTOFU, p.SidecarHardening, p.StrictEgress, p.AllowInline = false, "required", true, false
	}
	return p
}

// validateDeployment checks the deployment key and what "hardened" needs
// of the rest of the configuration, and turns its anomaly quarantine on.
func (c *Config) validateDeployment() error {
	d, err := ParseDeployment(string(c.Deployment))
	if err != nil {
		return err
	}
	c.Deployment = d
	if d != DeploymentHardened {
		return nil
	}
	if !c.TLS.Enabled() {
		return fmt.Errorf("%w: deployment \"hardened\" requires TLS: set [tls] cert_file and key_file (or use --deployment local on a trusted machine)", ErrInvalidConfig)
	}
	if c.Anomaly == nil {
		p := anomaly.DefaultPolicy()
		c.Anomaly = &p
	}
	return nil
}

// checkHardenedHost is what Open checks under "hardened" before it opens
// the host: the sidecar hardening is on, and the sidecar (asked with
// host.SidecarVersion) matches this host and reports a kernel that can
// apply all of its hardening.
func checkHardenedHost(ctx context.Context, sup supervisor.Config, sidecarPath string) error {
	if sup.Hardening.Off {
		return fmt.Errorf("%w: deployment \"hardened\" requires the sidecar hardening: drop --no-harden-sidecars", ErrInvalidConfig)
	}
	info, err := host.SidecarVersion(ctx, sidecarPath)
	if err != nil {
		return fmt.Errorf("daemon: deployment \"hardened\" checks the kernel through the sidecar: %w", err)
	}
	if diff := buildinfo.Get("palyra-host").Compatible(*info); diff != "" {
		return fmt.Errorf("daemon: %w: %s: %s", host.ErrSidecarMismatch, sidecarPath, diff)
	}
	return hardeningSupported(*info.Kernel)
}

// hardeningSupported refuses a kernel that cannot apply the whole
// sidecar hardening, naming what is missing.
func hardeningSupported(k buildinfo.KernelSupport) error {
	if missing := k.Missing(); len(missing) > 0 {
		return fmt.Errorf("%w: deployment \"hardened\" requires the sidecar hardening, which this system cannot apply: missing %s",
			ErrInvalidConfig, strings.Join(missing, "; "))
	}
	return nil
}

// TOFUPins lists the publishers of the trust store at path that are
// trusted through a key pinned on first use only (not allowlisted); a
// missing file has none. "hardened" refuses to start with any: a pinned
// key would still pass verification, and the profile trusts the
// allowlist only. opts are the store's (trust.WithVault, so a store
// sealed with the vault key verifies); a tampered store is an error.
func TOFUPins(ctx context.Context, path string, opts ...trust.Option) ([]string, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	st, err := trust.OpenFile(path, opts...).Load(ctx)
	if err != nil {
		return nil, err
	}
	var pins []string
	for _, p := range st.Publishers() {
		if p.TOFUKey != "" && len(p.TrustedKeys) == 0 {
			pins = append(pins, p.Publisher)
		}
	}
	return pins, nil
}

// checkAllowlistOnly refuses a trust store holding TOFU pins.
func checkAllowlistOnly(ctx context.Context, path string, opts ...trust.Option) error {
	pins, err := TOFUPins(ctx, path, opts...)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	if len(pins) > 0 {
		return fmt.Errorf("%w: deployment \"hardened\" trusts the allowlist only, and the trust store %s holds keys pinned on first use for %s: "+
			"allowlist the ones you trust (its trusted_publishers; palyra skills install --trusted-publisher PUBLISHER=KEYHEX adds one) and remove its tofu_publishers",
			ErrDeploymentRefused, path, strings.Join(pins, ", "))
	}
	return nil
}

// LoadProfile reads the operator profile the host will judge by: path,
// else <state>/policy.toml when it exists, else policy.Default.
func LoadProfile(path, state string) (*policy.Profile, error) {
	if path == "" {
		path = statedir.At(state).Policy()
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return policy.Default(), nil
		}
	}
	return policy.Load(path)
}

// StrictEgress reports why a profile's egress is not strict (nil when it
// is): https only, no private, loopback or metadata address (except the
// narrow allowed_private_networks), no manifest wildcard.
func StrictEgress(p *policy.Profile) error {
	var why []string
	if p.HTTP.AllowPrivate {
		why = append(why, "http.allow_private = true")
	}
	if slices.Contains(p.HTTP.AllowedSchemes, "http") {
		why = append(why, "http.allowed_schemes has \"http\"")
	}
	if p.Capabilities.AllowWildcards {
		why = append(why, "capabilities.allow_wildcards = true")
	}
	if p.Dev.AllowInline {
		why = append(why, "dev.allow_inline = true (hardened runs signed skills only)")
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w: deployment \"hardened\" requires strict egress and no inline modules; the operator profile has %s: remove it", ErrDeploymentRefused, strings.Join(why, ", "))
}

// hardenedService is the Service under "hardened": it refuses what the
// profile forbids before the host sees it, for every adapter alike
// (HTTP, gRPC, MCP).
type hardenedService struct {
	host.Service
}

// refuseTOFU is the refusal of a request asking for TOFU.
func refuseTOFU(what string) error {
	return fmt.Errorf("%w: deployment \"hardened\" refuses %s with allow_tofu: the trust store's allowlist decides: allowlist the publisher's key in the daemon's trust store first (palyra skills install --trusted-publisher PUBLISHER=KEYHEX on its state directory adds one)", ErrDeploymentRefused, what)
}

// RunInline refuses every inline run: hardened runs signed, installed
// skills only, whatever the profile says.
func (s hardenedService) RunInline(ctx context.Context, req host.InlineRunRequest) (*host.CallResult, error) {
	return nil, fmt.Errorf("%w: deployment \"hardened\" disables inline modules (palyra dev run): package, sign and install the skill, or run a local deployment", ErrDeploymentRefused)
}

func (s hardenedService) Install(ctx context.Context, req host.InstallRequest) (*host.InstallResult, error) {
	if req.AllowTOFU {
		return nil, refuseTOFU("an install")
	}
	if len(req.TrustedPublishers) > 0 {
		return nil, fmt.Errorf("%w: deployment \"hardened\" refuses an install that brings its own trusted publisher keys: add them to the trust store first", ErrDeploymentRefused)
	}
	return s.Service.Install(ctx, req)
}

func (s hardenedService) Outdated(ctx context.Context, req host.OutdatedRequest) (*host.OutdatedReport, error) {
	if req.AllowTOFU {
		return nil, refuseTOFU("an outdated check")
	}
	return s.Service.Outdated(ctx, req)
}

func (s hardenedService) Update(ctx context.Context, req host.UpdateRequest) (*host.UpdateResult, error) {
	if req.AllowTOFU {
		return nil, refuseTOFU("an update")
	}
	return s.Service.Update(ctx, req)
}

func (s hardenedService) Apply(ctx context.Context, req host.ApplyRequest) (*host.ApplyResult, error) {
	// A document that does not parse is the host's to report.
	if doc, err := desired.Parse([]byte(req.Document)); err == nil {
		for _, sk := range doc.Skills {
			if sk.AllowTOFU {
				return nil, refuseTOFU("a desired state whose skill " + sk.ID + " is")
			}
		}
	}
	return s.Service.Apply(ctx, req)
}

func (s hardenedService) SetPolicy(ctx context.Context, req host.SetPolicyRequest) (*host.PolicyResult, error) {
	// A profile that does not parse is the host's to report.
	if p, err := policy.Parse(req.Profile); err == nil {
		if err := StrictEgress(p); err != nil {
			return nil, err
		}
	}
	return s.Service.SetPolicy(ctx, req)
}
