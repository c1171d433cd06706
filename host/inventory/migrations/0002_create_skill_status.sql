-- Palyra's skill_status table (journal migration 7), plus the crashlooping
-- status and a CHECK on the status values.
CREATE TABLE skill_status (
    skill_id           TEXT    NOT NULL,
    version            TEXT    NOT NULL,
    status             TEXT    NOT NULL CHECK (status IN ('active', 'quarantined', 'disabled', 'crashlooping')),
    reason             TEXT    NULL CHECK (reason IS NULL OR trim(reason) <> ''),
    detected_at_ms     INTEGER NOT NULL,
    operator_principal TEXT    NOT NULL,
    created_at_unix_ms INTEGER NOT NULL,
    updated_at_unix_ms INTEGER NOT NULL,
    PRIMARY KEY (skill_id, version)
) STRICT;

CREATE INDEX idx_skill_status_skill_detected ON skill_status (skill_id, detected_at_ms DESC, version DESC);
CREATE INDEX idx_skill_status_status_detected ON skill_status (status, detected_at_ms DESC);
