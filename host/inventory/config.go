package inventory

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// EventConfigChanged records an operator's change of a skill's config: the
// keys set and unset (details {"set": [...], "unset": [...]}), never a
// value.
const EventConfigChanged EventKind = "skill.config_changed"

// ConfigValue is one config value an operator set for a skill (manifest
// [config]). The inventory keeps non-sensitive values only; sensitive ones
// live in the vault.
type ConfigValue struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	UpdatedAt time.Time       `json:"updated_at"`
	Principal string          `json:"operator_principal"`
}

// ConfigChange is one change of a skill's config: values to set (upserted)
// and keys to unset, by a principal. Keys are not judged here (the caller
// checks them against the manifest's schema); values must be valid JSON.
type ConfigChange struct {
	SkillID   string
	Set       []ConfigValue
	Unset     []string
	Principal string
	// Drop are keys whose values are removed without being journaled as
	// unset: the plain copy of a key that is now kept in the vault.
	Drop []string
	// JournalSet and JournalUnset are keys journaled besides those of Set
	// and Unset: the sensitive keys the caller keeps in the vault.
	JournalSet, JournalUnset []string
}

// SkillConfig returns the config values stored for skill id, in key
// order. A skill with none (or not installed) has an empty list.
func (d *DB) SkillConfig(ctx context.Context, id string) ([]ConfigValue, error) {
	id, err := normalizeSkillID("skill_id", id)
	if err != nil {
		return nil, err
	}
	return readConfig(ctx, d.sql, id)
}

func readConfig(ctx context.Context, q querier, id string) ([]ConfigValue, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value_json, updated_at_unix_ms, operator_principal
FROM skill_config WHERE skill_id = ? ORDER BY key`, id)
	if err != nil {
		return nil, wrap("read config", err)
	}
	defer rows.Close()
	var out []ConfigValue
	for rows.Next() {
		var v ConfigValue
		var value string
		var at int64
		if err := rows.Scan(&v.Key, &value, &at, &v.Principal); err != nil {
			return nil, wrap("read config", err)
		}
		v.Value, v.UpdatedAt = json.RawMessage(value), fromMillis(at)
		out = append(out, v)
	}
	return out, wrap("read config", rows.Err())
}

// SkillConfig is DB.SkillConfig inside the transaction.
func (t *Tx) SkillConfig(id string) ([]ConfigValue, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	id, err := normalizeSkillID("skill_id", id)
	if err != nil {
		return nil, err
	}
	return readConfig(t.ctx, t.tx, id)
}

// ChangeConfig applies ch: it upserts ch.Set, deletes ch.Unset and journals
// the keys changed (EventConfigChanged, no values) when any key is named.
func (t *Tx) ChangeConfig(ch ConfigChange) error {
	if err := t.check(); err != nil {
		return err
	}
	id, err := normalizeSkillID("skill_id", ch.SkillID)
	if err != nil {
		return err
	}
	principal, err := checkText("operator_principal", ch.Principal)
	if err != nil {
		return err
	}
	now := t.now().UnixMilli()
	set, unset := slices.Clone(ch.JournalSet), slices.Clone(ch.JournalUnset)
	for _, v := range ch.Set {
		if v.Key == "" {
			return invalid("key", "empty")
		}
		value, err := checkJSON("value", v.Value)
		if err != nil {
			return err
		}
		if value == nil {
			return invalid("value", "empty")
		}
		if _, err := t.tx.ExecContext(t.ctx, `INSERT INTO skill_config (skill_id, key, value_json, updated_at_unix_ms, operator_principal)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (skill_id, key) DO UPDATE SET value_json = excluded.value_json,
    updated_at_unix_ms = excluded.updated_at_unix_ms, operator_principal = excluded.operator_principal`,
			id, v.Key, value, now, principal); err != nil {
			return wrap("set config", err)
		}
		set = append(set, v.Key)
	}
	for _, k := range ch.Unset {
		if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM skill_config WHERE skill_id = ? AND key = ?`, id, k); err != nil {
			return wrap("unset config", err)
		}
		unset = append(unset, k)
	}
	for _, k := range ch.Drop {
		if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM skill_config WHERE skill_id = ? AND key = ?`, id, k); err != nil {
			return wrap("drop config", err)
		}
	}
	if len(set) == 0 && len(unset) == 0 {
		return nil
	}
	slices.Sort(set)
	slices.Sort(unset)
	details, err := json.Marshal(struct {
		Set   []string `json:"set,omitempty"`
		Unset []string `json:"unset,omitempty"`
	}{slices.Compact(set), slices.Compact(unset)})
	if err != nil {
		return invalid("details", "%v", err)
	}
	_, err = t.AppendEvent(Event{Kind: EventConfigChanged, SkillID: id, Principal: principal, Details: details})
	return err
}
