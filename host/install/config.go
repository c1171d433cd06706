package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
)

// Config eligibility reasons (Eligibility.Reasons): a required key of the
// manifest's [config] is not set, or a value kept is no longer accepted by
// the schema (after an upgrade) or is for a key the schema does not
// declare.
const (
	ReasonConfigMissing = "config_missing"
	ReasonConfigInvalid = "config_invalid"
)

// ConfigSecretKey is the vault key (in scope skill:<id>) under which the
// sensitive config value of key is kept.
func ConfigSecretKey(key string) string { return "config." + key }

// ConfigIssue is a config value kept for a skill that the schema of a
// version does not accept: the key and why (never the value).
type ConfigIssue struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// ConfigValues returns the non-sensitive config values set for skill id
// (the sensitive ones are in the vault), in key order.
func (in *Installer) ConfigValues(ctx context.Context, id string) ([]inventory.ConfigValue, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	vs, err := in.db.SkillConfig(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	return vs, nil
}

// ChangeConfig applies a config change to the inventory (see
// inventory.Tx.ChangeConfig).
func (in *Installer) ChangeConfig(ctx context.Context, ch inventory.ConfigChange) error {
	if err := in.check(ctx); err != nil {
		return err
	}
	if in.readOnly {
		return fmt.Errorf("install: %w", inventory.ErrReadOnly)
	}
	if err := in.db.Update(ctx, func(tx *inventory.Tx) error { return tx.ChangeConfig(ch) }); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	return nil
}

// ConfigFit judges the config kept for m's skill against m's [config]
// schema: the required keys with neither a value (in values, or in the
// vault for the keys present reports) nor a default, and the values kept
// that the schema does not accept. present may be nil (a reader without a
// vault): sensitive keys then count as set. A manifest without [config]
// accepts no value: every kept value is an issue.
func ConfigFit(m *manifest.Manifest, values []inventory.ConfigValue, present func(key string) bool) (missing []string, unfit []ConfigIssue) {
	s, err := m.ConfigSchema()
	if err != nil {
		return nil, []ConfigIssue{{Key: "", Reason: err.Error()}}
	}
	set := make(map[string]json.RawMessage, len(values))
	for _, v := range values {
		set[v.Key] = v.Value
		if s == nil {
			unfit = append(unfit, ConfigIssue{Key: v.Key, Reason: "the skill declares no [config]"})
			continue
		}
		if err := s.ValidateValue(v.Key, v.Value); err != nil {
			var ve *manifest.ConfigValueError
			reason := err.Error()
			if errors.As(err, &ve) {
				reason = ve.Reason
			}
			unfit = append(unfit, ConfigIssue{Key: v.Key, Reason: reason})
		}
	}
	if s == nil {
		return nil, unfit
	}
	for _, k := range s.Keys() {
		if _, ok := set[k]; ok {
			continue
		}
		if present == nil || present(k) {
			if present != nil || s.Sensitive(k) {
				set[k] = nil
			}
		}
	}
	missing = s.Missing(set)
	slices.SortFunc(unfit, func(a, b ConfigIssue) int { return compareStrings(a.Key, b.Key) })
	return missing, unfit
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// configFit is ConfigFit of the kept config of e's skill against m, with
// the vault's view of the sensitive keys.
func (in *Installer) configFit(ctx context.Context, e inventory.Entry, m *manifest.Manifest) ([]string, []ConfigIssue) {
	if m.Config == nil {
		// Cheap path for the skills without config: values kept from an
		// older version that had one are still reported.
		vs, err := in.db.SkillConfig(ctx, e.SkillID)
		if err != nil || len(vs) == 0 {
			return nil, nil
		}
		return ConfigFit(m, vs, nil)
	}
	vs, err := in.db.SkillConfig(ctx, e.SkillID)
	if err != nil {
		return nil, []ConfigIssue{{Reason: "cannot read the config: " + err.Error()}}
	}
	var present func(string) bool
	if in.secretOK != nil {
		present = func(k string) bool {
			ok, err := in.secretOK(ctx, "skill:"+e.SkillID, ConfigSecretKey(k))
			return err == nil && ok
		}
	}
	return ConfigFit(m, vs, present)
}
