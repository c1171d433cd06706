package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// SetPolicyRequest is a new operator profile (policy.toml's TOML).
type SetPolicyRequest struct {
	// Profile is the profile's TOML, at most policy.MaxProfileBytes.
	Profile []byte `json:"profile"`
}

// PolicyResult describes the operator profile in effect.
type PolicyResult struct {
	// SHA256 is PolicyDigest of the profile: the same profile gives the
	// same digest on every host, however it was written.
	SHA256 string `json:"sha256"`
	// Path is the file the profile was written to.
	Path string `json:"path"`
	// Summary is the profile's main bounds.
	Summary PolicySummary `json:"summary"`
}

// PolicySummary is an operator profile's main bounds, for a glance.
type PolicySummary struct {
	HTTPAllowedHosts       []string `json:"http_allowed_hosts"`
	HTTPAllowPrivate       bool     `json:"http_allow_private"`
	SecretsAllowed         []string `json:"secrets_allowed"`
	StorageAllowedPrefixes []string `json:"storage_allowed_prefixes"`
	ChannelsAllowed        []string `json:"channels_allowed"`
	MaxFuel                int64    `json:"max_fuel"`
	MaxMemoryBytes         int64    `json:"max_memory_bytes"`
	MaxWallClockMS         int64    `json:"max_wall_clock_ms"`
	// AllowInline is [dev] allow_inline: whether RunInline may run
	// unsigned inline modules on this host.
	AllowInline bool `json:"allow_inline"`
}

// PolicyDigest is the lower-case hex sha256 of the profile's canonical
// TOML (policy.Profile.Marshal, every key written out), so two hosts with
// the same profile report the same digest.
func PolicyDigest(p *policy.Profile) string {
	b, err := p.Marshal()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// InlineAllowed reports whether the profile the host judges by now lets
// inline modules run ([dev] allow_inline).
func (h *Host) InlineAllowed() bool { return h.in.Policy().InlineNotAllowed() == nil }

// PolicySHA256 is PolicyDigest of the profile the host judges by now.
func (h *Host) PolicySHA256() string { return PolicyDigest(h.in.Policy()) }

// policyFile is the file SetPolicy writes: Config.PolicyPath, else
// <state>/policy.toml.
func (h *Host) policyFile() string {
	if h.cfg.PolicyPath != "" {
		return h.cfg.PolicyPath
	}
	return statedir.At(h.in.StateDir()).Policy()
}

// SetPolicy implements Service: it parses and validates the profile
// (policy.Parse; a bad one is refused with policy.ErrInvalidProfile and
// nothing changes), writes the TOML as given, atomically, to the host's
// policy file (Config.PolicyPath, else <state>/policy.toml — also when
// the host was opened with Config.Policy as a value: the file is what the
// next Open without a value reads), then swaps the profile every install,
// enable, re-audit and call judges by: the next call is granted under the
// new profile. It quarantines nothing by itself: an active skill the new
// profile no longer allows is refused at its next call (policy_violation)
// and quarantined by the next Reaudit.
func (h *Host) SetPolicy(ctx context.Context, req SetPolicyRequest) (*PolicyResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if len(req.Profile) == 0 {
		return nil, fmt.Errorf("host: %w: the profile is empty", install.ErrInvalidArgument)
	}
	p, err := policy.Parse(req.Profile)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := h.policyFile()
	h.policyMu.Lock()
	defer h.policyMu.Unlock()
	if err := fsutil.WriteAtomic(path, req.Profile, 0o600); err != nil {
		return nil, fmt.Errorf("host: write the policy %s: %w", path, err)
	}
	if err := h.in.SetPolicy(p); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	res := &PolicyResult{SHA256: PolicyDigest(p), Path: path, Summary: PolicySummary{
		HTTPAllowedHosts: p.HTTP.AllowedHosts, HTTPAllowPrivate: p.HTTP.AllowPrivate,
		SecretsAllowed: p.Secrets.Allowed, StorageAllowedPrefixes: p.Storage.AllowedPrefixes,
		ChannelsAllowed: p.Channels.Allowed, MaxFuel: p.Quotas.MaxFuel,
		MaxMemoryBytes: p.Quotas.MaxMemoryBytes, MaxWallClockMS: p.Quotas.MaxWallClockMS,
		AllowInline: p.Dev.AllowInline,
	}}
	h.log.Info("operator policy set", "path", path, "sha256", res.SHA256, "principal", PrincipalFrom(ctx))
	return res, nil
}
