-- The audit journal. Rows are only ever appended; ids are never reused
-- (AUTOINCREMENT), so a reader can follow the journal by id.
CREATE TABLE skill_events (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    at_unix_ms         INTEGER NOT NULL,
    kind               TEXT    NOT NULL,
    skill_id           TEXT    NOT NULL,
    version            TEXT    NULL,
    status             TEXT    NULL CHECK (status IS NULL OR status IN ('active', 'quarantined', 'disabled', 'crashlooping')),
    reason             TEXT    NULL,
    operator_principal TEXT    NOT NULL,
    details_json       TEXT    NULL CHECK (details_json IS NULL OR json_valid(details_json))
) STRICT;

CREATE INDEX idx_skill_events_skill ON skill_events (skill_id, id);
