-- The operator configuration of skills (manifest [config]): one row per
-- key an operator set, per skill (not per version: it survives upgrades).
-- Only non-sensitive values are here, as JSON text; a sensitive value is in
-- the vault under skill:<id>/config.<key> and never in this table.
CREATE TABLE skill_config (
    skill_id           TEXT    NOT NULL,
    key                TEXT    NOT NULL,
    value_json         TEXT    NOT NULL CHECK (json_valid(value_json)),
    updated_at_unix_ms INTEGER NOT NULL,
    operator_principal TEXT    NOT NULL,
    PRIMARY KEY (skill_id, key)
) STRICT;
