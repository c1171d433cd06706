package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"sync"

	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/broker/egress"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/host/vault"
)

// capabilities are the broker and its backends as Open built them.
type capabilities struct {
	broker    *broker.Broker
	vault     *vault.Vault
	storage   storage.Backend
	ownsStore bool
	channels  *channels.Registry
	egress    *egress.Client
}

func (c *capabilities) close() {
	if c.ownsStore && c.storage != nil {
		c.storage.Close()
	}
}

// secretPresent is the installer's view of the vault (install.Config.SecretPresent).
func (c *capabilities) secretPresent(ctx context.Context, scope, key string) (bool, error) {
	return c.vault.Has(ctx, vault.Name{Scope: scope, Key: key})
}

// openCapabilities opens the vault, the store and the channel registry of
// cfg (defaults in the state dir) and builds the broker over them.
func openCapabilities(ctx context.Context, cfg *Config) (*capabilities, error) {
	c := &capabilities{vault: cfg.Vault, storage: cfg.Storage, channels: cfg.Channels}
	if c.vault == nil {
		v, err := vault.Open(vault.Config{StateDir: cfg.StateDir, EncodedKey: cfg.VaultKey, KeyCommand: cfg.VaultKeyCommand})
		if err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		c.vault = v
	}
	if c.storage == nil {
		st, err := storage.Open(ctx, statedir.At(cfg.StateDir).StorageDB())
		if err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		c.storage, c.ownsStore = st, true
	}
	if c.channels == nil {
		c.channels = channels.NewRegistry()
	}
	c.egress = egress.New(cfg.Egress)
	c.broker = broker.New(broker.Config{
		Egress:   c.egress,
		Secrets:  vaultSecrets{c.vault},
		Storage:  c.storage,
		Channels: c.channels,
		Logger:   cfg.Logger,
	})
	return c, nil
}

// vaultSecrets adapts the vault to broker.SecretStore.
type vaultSecrets struct{ v *vault.Vault }

func (s vaultSecrets) Lookup(ctx context.Context, scope, key string) ([]byte, bool, error) {
	val, err := s.v.Get(ctx, vault.Name{Scope: scope, Key: key})
	switch {
	case errors.Is(err, vault.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return val, true, nil
}

// Channels returns the registry skills' channel grants resolve against: an
// embedding application registers its channels here.
func (h *Host) Channels() *channels.Registry { return h.channels }

// Vault returns the secrets vault the broker injects from (an embedding
// application sets its skills' secrets here). It is not a way into a
// call: skills still get a secret only through a granted handle.
func (h *Host) Vault() *vault.Vault { return h.vault }

// WebhookChannel returns a channel that POSTs messages to rawURL through
// the broker's egress firewall, under the operator profile's HTTP rules
// with the URL's host as the only allowed host. Register it with
// Channels().Register.
func (h *Host) WebhookChannel(rawURL string) (*channels.Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("host: webhook url %q is not an absolute URL", rawURL)
	}
	hr, err := h.in.Policy().HTTPRules()
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	rules := broker.EgressRules(hr, []string{strings.ToLower(u.Hostname())})
	if _, err := egress.CheckURL(rules, rawURL); err != nil {
		return nil, fmt.Errorf("host: webhook: %w", err)
	}
	return &channels.Webhook{URL: rawURL, Poster: broker.Poster(h.egress, rules)}, nil
}

// SkillStats are a skill's counters since the host opened.
type SkillStats struct {
	// Calls counts tool calls; Errors the failed ones by error code.
	Calls  int64            `json:"calls"`
	Errors map[string]int64 `json:"errors"`
	// Capabilities are the broker's counters: capability calls, denials
	// by reason, egress and storage bytes.
	Capabilities broker.Stats `json:"capabilities"`
}

// Stats returns the counters of skillID.
func (h *Host) Stats(skillID string) SkillStats {
	s := h.stats.get(skillID)
	s.Capabilities = h.broker.Stats(skillID)
	return s
}

// AllStats returns the counters of every skill seen since the host opened.
func (h *Host) AllStats() map[string]SkillStats {
	out := map[string]SkillStats{}
	for id, cs := range h.broker.AllStats() {
		out[id] = SkillStats{Errors: map[string]int64{}, Capabilities: cs}
	}
	for id, s := range h.stats.all() {
		s.Capabilities = h.broker.Stats(id)
		out[id] = s
	}
	return out
}

type callStats struct {
	mu sync.Mutex
	m  map[string]*SkillStats
}

func newCallStats() *callStats { return &callStats{m: map[string]*SkillStats{}} }

func (c *callStats) record(skillID string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.m[skillID]
	if s == nil {
		s = &SkillStats{Errors: map[string]int64{}}
		c.m[skillID] = s
	}
	s.Calls++
	if err != nil {
		code := errcode.Of(err)
		if code == "" {
			code = "internal"
		}
		s.Errors[code]++
	}
}

func (c *callStats) get(skillID string) SkillStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.m[skillID]; s != nil {
		return SkillStats{Calls: s.Calls, Errors: maps.Clone(s.Errors)}
	}
	return SkillStats{Errors: map[string]int64{}}
}

func (c *callStats) all() map[string]SkillStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]SkillStats, len(c.m))
	for id, s := range c.m {
		out[id] = SkillStats{Calls: s.Calls, Errors: maps.Clone(s.Errors)}
	}
	return out
}

// DeniedError is a call that failed after the broker refused one of its
// capability operations: Denial is the first refusal, Cause the call's own
// failure (usually the tool error the guest returned). It matches
// broker.ErrCapabilityDenied (code capability_denied) and Cause with
// errors.Is and errors.As.
type DeniedError struct {
	SkillID, Version, ToolID string
	Denial                   broker.Denial
	Cause                    error
}

// Error names the skill, the tool and the refusal.
func (e *DeniedError) Error() string {
	return fmt.Sprintf("host: %s %s tool %s: capability denied: %s %s: %s", e.SkillID, e.Version, e.ToolID, e.Denial.Kind, e.Denial.Reason, e.Denial.Message)
}

// Unwrap returns broker.ErrCapabilityDenied and the cause.
func (e *DeniedError) Unwrap() []error { return []error{broker.ErrCapabilityDenied, e.Cause} }
