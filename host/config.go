package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/textutil"
)

// Operator config of skills (manifest [config], a Palyra-Go extension).
// Values are set per skill, not per version, and judged by the schema of
// the current version. Non-sensitive values live in the inventory
// (skill_config), sensitive ones in the vault under
// skill:<id>/config.<key>; a key's value is the inventory's when it has
// one, else the vault's. A call resolves the effective config (defaults,
// then values) when it runs, so a change applies to the next call; the
// sensitive values are read from the vault for that call only and are
// never logged, journaled or returned.

// ErrConfigMissing is a call of a skill whose required config keys are
// not all set (and have no default): the message names them.
var ErrConfigMissing = errcode.New("config_missing", "required skill config missing")

// ErrConfigInvalid is a config value that does not fit the schema of the
// skill's current version (manifest.ErrConfigInvalid).
var ErrConfigInvalid = manifest.ErrConfigInvalid

// RedactedValue is what a sensitive value that is set shows instead of
// itself.
const RedactedValue = "***"

// SkillConfig is a skill's config as an operator sees it: every key the
// current version's schema declares, and any value kept for a key it does
// not declare (left by an older version), with sensitive values redacted.
type SkillConfig struct {
	SkillID string `json:"skill_id"`
	// Version is the current version, whose schema judges the values.
	Version string `json:"version"`
	// Schema is the [config] schema of Version (a JSON Schema of an
	// object); absent when the version declares no config.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Sensitive lists the sensitive keys.
	Sensitive []string `json:"sensitive,omitempty"`
	// Entries are the keys, sorted.
	Entries []ConfigEntry `json:"entries"`
	// Missing are the required keys with neither a value nor a default:
	// while there is one, the skill is not eligible (config_missing).
	Missing []string `json:"missing"`
	// Unfit are the values kept that the schema does not accept: while
	// there is one, the skill is not eligible (config_invalid).
	Unfit []install.ConfigIssue `json:"unfit,omitempty"`
}

// ConfigEntry is one config key of a skill.
type ConfigEntry struct {
	Key string `json:"key"`
	// Type is the schema's "type" of the key when it is one string.
	Type      string `json:"type,omitempty"`
	Required  bool   `json:"required,omitempty"`
	Sensitive bool   `json:"sensitive,omitempty"`
	// Set reports whether an operator set a value.
	Set bool `json:"set"`
	// Value is the value set; for a sensitive key it is "***" when set
	// and absent otherwise.
	Value json.RawMessage `json:"value,omitempty"`
	// Default is the schema's default (never for a sensitive key).
	Default json.RawMessage `json:"default,omitempty"`
	// Declared is false for a value kept for a key the current schema
	// does not declare.
	Declared bool `json:"declared"`
	// Problem says why the value kept does not fit the schema ("" when
	// it does).
	Problem   string `json:"problem,omitempty"`
	UpdatedAt int64  `json:"updated_at_unix_ms,omitempty"`
	Principal string `json:"operator_principal,omitempty"`
}

// SetConfigRequest sets config values of a skill: each value is JSON,
// checked against the schema of the current version.
type SetConfigRequest struct {
	SkillID string                     `json:"skill_id"`
	Values  map[string]json.RawMessage `json:"values"`
}

// UnsetConfigRequest removes config values of a skill.
type UnsetConfigRequest struct {
	SkillID string   `json:"skill_id"`
	Keys    []string `json:"keys"`
}

// configName is the vault name of the sensitive value of key.
func configName(skillID, key string) vault.Name {
	return vault.Name{Scope: "skill:" + skillID, Key: install.ConfigSecretKey(key)}
}

// currentManifest returns the current version of skill id and its
// manifest (as recorded at install).
func (h *Host) currentManifest(ctx context.Context, id string) (inventory.Entry, *manifest.Manifest, error) {
	e, err := h.in.Inventory().Skill(ctx, id, "")
	if err != nil {
		if errors.Is(err, inventory.ErrNotFound) {
			return e, nil, fmt.Errorf("host: %w: %s", ErrSkillNotFound, id)
		}
		return e, nil, fmt.Errorf("host: %w", err)
	}
	var m manifest.Manifest
	if err := json.Unmarshal(e.Manifest, &m); err != nil {
		return e, nil, fmt.Errorf("host: %s %s: recorded manifest: %w", e.SkillID, e.Version, err)
	}
	return e, &m, nil
}

// vaultConfigKeys returns the config keys of skill id that have a value in
// the vault.
func (h *Host) vaultConfigKeys(ctx context.Context, id string) (map[string]bool, error) {
	out := map[string]bool{}
	if h.vault == nil {
		return out, nil
	}
	ents, err := h.vault.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: config: %w", err)
	}
	scope := "skill:" + id
	for _, e := range ents {
		if k, ok := strings.CutPrefix(e.Name.Key, install.ConfigSecretKey("")); ok && e.Name.Scope == scope {
			out[k] = true
		}
	}
	return out, nil
}

// SkillConfig implements Service. It also serves a read-only host (the
// sensitive keys then show as set when the vault file has them).
func (h *Host) SkillConfig(ctx context.Context, skillID string) (*SkillConfig, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	if h.ro != nil {
		return nil, ErrReadOnly
	}
	id := strings.ToLower(strings.TrimSpace(skillID))
	e, m, err := h.currentManifest(ctx, id)
	if err != nil {
		return nil, err
	}
	return h.skillConfig(ctx, e, m)
}

// configState is what a config verb reads of version e (manifest m): its
// [config] schema (nil without one), the values the inventory keeps for
// the skill, and which keys the vault holds.
func (h *Host) configState(ctx context.Context, e inventory.Entry, m *manifest.Manifest) (*manifest.ConfigSchema, []inventory.ConfigValue, map[string]bool, error) {
	s, err := m.ConfigSchema()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("host: %s %s: %w", e.SkillID, e.Version, err)
	}
	values, err := h.in.ConfigValues(ctx, e.SkillID)
	if err != nil {
		return nil, nil, nil, err
	}
	inVault, err := h.vaultConfigKeys(ctx, e.SkillID)
	if err != nil {
		return nil, nil, nil, err
	}
	return s, values, inVault, nil
}

func (h *Host) skillConfig(ctx context.Context, e inventory.Entry, m *manifest.Manifest) (*SkillConfig, error) {
	s, values, inVault, err := h.configState(ctx, e, m)
	if err != nil {
		return nil, err
	}
	out := &SkillConfig{SkillID: e.SkillID, Version: e.Version, Entries: []ConfigEntry{}, Missing: []string{}}
	byKey := map[string]*ConfigEntry{}
	entry := func(k string) *ConfigEntry {
		if ce, ok := byKey[k]; ok {
			return ce
		}
		ce := &ConfigEntry{Key: k}
		if s != nil && s.Has(k) {
			ce.Declared, ce.Type, ce.Sensitive = true, s.Type(k), s.Sensitive(k)
			ce.Required = slices.Contains(s.Required(), k)
			if d, ok := s.Default(k); ok {
				ce.Default = d
			}
		}
		byKey[k] = ce
		return ce
	}
	if s != nil {
		out.Schema = s.Schema()
		for _, k := range s.Keys() {
			entry(k)
			if s.Sensitive(k) {
				out.Sensitive = append(out.Sensitive, k)
			}
		}
	}
	for _, v := range values {
		ce := entry(v.Key)
		ce.Set, ce.Value, ce.UpdatedAt, ce.Principal = true, v.Value, v.UpdatedAt.UnixMilli(), v.Principal
	}
	for k := range inVault {
		ce := entry(k)
		if !ce.Set {
			ce.Set, ce.Value = true, nil
			ce.Sensitive = ce.Sensitive || !ce.Declared
		}
	}
	present := func(k string) bool { return inVault[k] }
	missing, unfit := install.ConfigFit(m, values, present)
	out.Missing = append(out.Missing, missing...)
	out.Unfit = unfit
	for _, u := range unfit {
		if ce, ok := byKey[u.Key]; ok {
			ce.Problem = u.Reason
		}
	}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		ce := *byKey[k]
		if ce.Sensitive && ce.Set {
			// Never the value, whether it is in the vault or was kept in
			// the inventory while the key was not sensitive.
			ce.Value = json.RawMessage(`"` + RedactedValue + `"`)
		}
		if !ce.Declared && ce.Set && inVault[k] && ce.Problem == "" {
			ce.Problem = "the config schema declares no such key"
			out.Unfit = append(out.Unfit, install.ConfigIssue{Key: k, Reason: ce.Problem})
		}
		out.Entries = append(out.Entries, ce)
	}
	return out, nil
}

// SetSkillConfig implements Service: every value is checked against the
// schema of the current version (a key it does not declare, a value that
// does not fit: ErrConfigInvalid naming the key and why, never quoting a
// sensitive value) before anything is stored; then the sensitive values go
// to the vault, the others to the inventory, and the change is journaled
// (skill.config_changed, keys only).
func (h *Host) SetSkillConfig(ctx context.Context, req SetConfigRequest) (*SkillConfig, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	c, err := h.checkConfig(ctx, req)
	if err != nil {
		return nil, err
	}
	e, m, s, values := c.e, c.m, c.s, c.values
	ch := inventory.ConfigChange{SkillID: e.SkillID, Principal: PrincipalFrom(ctx)}
	for _, k := range slices.Sorted(maps.Keys(req.Values)) {
		v := compactJSON(req.Values[k])
		if !s.Sensitive(k) {
			ch.Set = append(ch.Set, inventory.ConfigValue{Key: k, Value: v})
			// A copy left in the vault while the key was sensitive goes.
			if err := h.deleteConfigSecret(ctx, e.SkillID, k); err != nil {
				return nil, err
			}
			continue
		}
		if h.vault == nil {
			return nil, fmt.Errorf("host: %w: %s: sensitive config key %q needs the vault, which this host has not", ErrConfigInvalid, e.SkillID, k)
		}
		if err := h.vault.Set(ctx, configName(e.SkillID, k), v); err != nil {
			return nil, fmt.Errorf("host: %s: config key %q: %w", e.SkillID, k, err)
		}
		ch.JournalSet = append(ch.JournalSet, k)
		// A plain copy kept while the key was not sensitive goes.
		if slices.ContainsFunc(values, func(cv inventory.ConfigValue) bool { return cv.Key == k }) {
			ch.Drop = append(ch.Drop, k)
		}
	}
	if err := h.in.ChangeConfig(ctx, ch); err != nil {
		return nil, err
	}
	h.log.Info("skill config set", "skill_id", e.SkillID, "keys", slices.Sorted(maps.Keys(req.Values)), "principal", ch.Principal)
	return h.skillConfig(ctx, e, m)
}

// checkedConfig is a config change that passed checkConfig.
type checkedConfig struct {
	e      inventory.Entry
	m      *manifest.Manifest
	s      *manifest.ConfigSchema
	values []inventory.ConfigValue // the values kept before the change
}

// CheckSkillConfig runs SetSkillConfig's checks and stores nothing: a
// cluster node checks a change before it appends it to the ops stream.
func (h *Host) CheckSkillConfig(ctx context.Context, req SetConfigRequest) error {
	if err := h.open(); err != nil {
		return err
	}
	_, err := h.checkConfig(ctx, req)
	return err
}

// checkConfig checks every value of req against the schema of the
// current version (each key, then the values that would be kept taken
// together, the schema's required list aside).
func (h *Host) checkConfig(ctx context.Context, req SetConfigRequest) (*checkedConfig, error) {
	id := strings.ToLower(strings.TrimSpace(req.SkillID))
	if len(req.Values) == 0 {
		return nil, fmt.Errorf("host: %w: no value to set", ErrConfigInvalid)
	}
	e, m, err := h.currentManifest(ctx, id)
	if err != nil {
		return nil, err
	}
	s, err := m.ConfigSchema()
	if err != nil {
		return nil, fmt.Errorf("host: %s %s: %w", e.SkillID, e.Version, err)
	}
	if s == nil {
		return nil, fmt.Errorf("host: %w: %s %s declares no [config]", ErrConfigInvalid, e.SkillID, e.Version)
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(req.Values)) {
		if err := s.ValidateValue(k, req.Values[k]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("host: %s: %w", e.SkillID, errors.Join(errs...))
	}
	values, err := h.in.ConfigValues(ctx, e.SkillID)
	if err != nil {
		return nil, err
	}
	merged := map[string]json.RawMessage{}
	for _, v := range values {
		if s.ValidateValue(v.Key, v.Value) == nil {
			merged[v.Key] = v.Value
		}
	}
	maps.Copy(merged, req.Values)
	if _, err := s.Effective(merged); err != nil {
		return nil, fmt.Errorf("host: %s: %w", e.SkillID, err)
	}
	return &checkedConfig{e: e, m: m, s: s, values: values}, nil
}

// deleteConfigSecret removes the vault entry of key, if any.
func (h *Host) deleteConfigSecret(ctx context.Context, id, key string) error {
	if h.vault == nil {
		return nil
	}
	if _, err := h.vault.Delete(ctx, configName(id, key)); err != nil {
		return fmt.Errorf("host: %s: config key %q: %w", id, key, err)
	}
	return nil
}

// UnsetSkillConfig implements Service: it removes the values of keys
// (from the inventory and the vault). A key that has no value and that
// the current schema does not declare is refused (ErrConfigInvalid), so a
// typo does not pass for a change; a required key may be unset (the skill
// is then not eligible until it is set again).
func (h *Host) UnsetSkillConfig(ctx context.Context, req UnsetConfigRequest) (*SkillConfig, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	id := strings.ToLower(strings.TrimSpace(req.SkillID))
	if len(req.Keys) == 0 {
		return nil, fmt.Errorf("host: %w: no key to unset", ErrConfigInvalid)
	}
	e, m, err := h.currentManifest(ctx, id)
	if err != nil {
		return nil, err
	}
	s, values, inVault, err := h.configState(ctx, e, m)
	if err != nil {
		return nil, err
	}
	ch := inventory.ConfigChange{SkillID: e.SkillID, Principal: PrincipalFrom(ctx)}
	for _, k := range req.Keys {
		stored := slices.ContainsFunc(values, func(v inventory.ConfigValue) bool { return v.Key == k })
		if !stored && !inVault[k] && (s == nil || !s.Has(k)) {
			return nil, fmt.Errorf("host: %w: %s: config key %q is neither set nor declared", ErrConfigInvalid, e.SkillID, truncateKey(k))
		}
		if inVault[k] {
			if err := h.deleteConfigSecret(ctx, e.SkillID, k); err != nil {
				return nil, err
			}
			ch.JournalUnset = append(ch.JournalUnset, k)
		}
		if stored {
			ch.Unset = append(ch.Unset, k)
		}
	}
	if err := h.in.ChangeConfig(ctx, ch); err != nil {
		return nil, err
	}
	h.log.Info("skill config unset", "skill_id", e.SkillID, "keys", req.Keys, "principal", ch.Principal)
	return h.skillConfig(ctx, e, m)
}

// purgeConfig deletes every config value kept for skill id: the
// inventory's rows and the vault's sensitive entries, journaled as unset
// (a purge after the skill's last version was removed: a reinstall starts
// without them, and no secret of a removed skill stays in the vault).
func (h *Host) purgeConfig(ctx context.Context, id string) error {
	values, err := h.in.ConfigValues(ctx, id)
	if err != nil {
		return err
	}
	inVault, err := h.vaultConfigKeys(ctx, id)
	if err != nil {
		return err
	}
	if len(values) == 0 && len(inVault) == 0 {
		return nil
	}
	ch := inventory.ConfigChange{SkillID: id, Principal: PrincipalFrom(ctx)}
	for _, v := range values {
		ch.Unset = append(ch.Unset, v.Key)
	}
	for _, k := range slices.Sorted(maps.Keys(inVault)) {
		if err := h.deleteConfigSecret(ctx, id, k); err != nil {
			return err
		}
		ch.JournalUnset = append(ch.JournalUnset, k)
	}
	return h.in.ChangeConfig(ctx, ch)
}

func truncateKey(k string) string {
	return textutil.Ellipsize(k, manifest.MaxConfigKeyBytes, "...")
}

// compactJSON returns v without insignificant white space (v as given
// when it is not JSON: the schema check has refused that already).
func compactJSON(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

// resolveConfig returns the config document a call of e (manifest m)
// receives: nil when the manifest declares no [config] and no value is
// kept; else the effective object (defaults, then values). Required keys
// without a value fail with ErrConfigMissing naming them; a value the
// schema does not accept fails with ErrConfigInvalid naming the key.
func (h *Host) resolveConfig(ctx context.Context, e inventory.Entry, v *verified) (json.RawMessage, error) {
	s := v.config
	if s == nil {
		return nil, nil
	}
	values, err := h.in.ConfigValues(ctx, e.SkillID)
	if err != nil {
		return nil, err
	}
	set := make(map[string]json.RawMessage, len(values))
	for _, cv := range values {
		set[cv.Key] = cv.Value
	}
	for _, k := range s.Keys() {
		if _, ok := set[k]; ok || h.vault == nil {
			continue
		}
		val, err := h.vault.Get(ctx, configName(e.SkillID, k))
		switch {
		case err == nil:
			set[k] = val
		case errors.Is(err, vault.ErrNotFound):
		default:
			return nil, fmt.Errorf("host: %s: config key %q: %w", e.SkillID, k, err)
		}
	}
	if missing := s.Missing(set); len(missing) > 0 {
		return nil, fmt.Errorf("host: %w: %s %s needs %s (palyra skills config set %s KEY=VALUE)", ErrConfigMissing, e.SkillID, e.Version, strings.Join(missing, ", "), e.SkillID)
	}
	doc, err := s.Effective(set)
	if err != nil {
		return nil, fmt.Errorf("host: %s %s: %w", e.SkillID, e.Version, err)
	}
	return doc, nil
}
