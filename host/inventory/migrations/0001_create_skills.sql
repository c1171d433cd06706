-- One row per installed (skill_id, version). install_state is not stored:
-- installed_current / installed_superseded is derived from current.
CREATE TABLE skills (
    skill_id             TEXT    NOT NULL,
    version              TEXT    NOT NULL,
    publisher            TEXT    NOT NULL,
    current              INTEGER NOT NULL DEFAULT 0 CHECK (current IN (0, 1)),
    artifact_sha256      TEXT    NOT NULL CHECK (length(artifact_sha256) = 64),
    payload_sha256       TEXT    NOT NULL CHECK (length(payload_sha256) = 64),
    signature_key_id     TEXT    NOT NULL,
    trust_decision       TEXT    NOT NULL,
    source_kind          TEXT    NOT NULL,
    source_ref           TEXT    NOT NULL DEFAULT '',
    installed_at_unix_ms INTEGER NOT NULL,
    install_dir          TEXT    NOT NULL,
    manifest_json        TEXT    NOT NULL CHECK (json_valid(manifest_json)),
    tool_count           INTEGER NOT NULL DEFAULT 0 CHECK (tool_count >= 0),
    audit_report_json    TEXT    NULL CHECK (audit_report_json IS NULL OR json_valid(audit_report_json)),
    grants_json          TEXT    NULL CHECK (grants_json IS NULL OR json_valid(grants_json)),
    missing_secrets_json TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(missing_secrets_json)),
    PRIMARY KEY (skill_id, version)
) STRICT;

-- At most one current version per skill; the code keeps it exactly one
-- whenever any version is installed.
CREATE UNIQUE INDEX idx_skills_one_current ON skills (skill_id) WHERE current = 1;
CREATE INDEX idx_skills_publisher ON skills (publisher);
