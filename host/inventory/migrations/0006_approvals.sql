-- Approvals: a call of a tool that needs a human's approval (manifest
-- requires_approval or default_sensitive, a capability class the profile
-- marks require_approval, a run hook asking for it) is not run; it is kept
-- here, pending, until an operator approves or denies it, or it expires.
-- An approved row is used once, by a call of the same skill version and
-- tool with the same input (input_sha256 of the canonical input). Every
-- change is journaled in skill_events (skill.approval_*).
CREATE TABLE approvals (
    id                   TEXT    PRIMARY KEY,
    skill_id             TEXT    NOT NULL,
    version              TEXT    NOT NULL,
    tool_id              TEXT    NOT NULL,
    input_json           TEXT    NOT NULL CHECK (json_valid(input_json)),
    input_sha256         TEXT    NOT NULL CHECK (length(input_sha256) = 64),
    reasons_json         TEXT    NOT NULL CHECK (json_valid(reasons_json)),
    requested_by         TEXT    NOT NULL,
    requested_at_unix_ms INTEGER NOT NULL,
    expires_at_unix_ms   INTEGER NOT NULL,
    state                TEXT    NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired', 'used')),
    decided_by           TEXT    NULL,
    decided_at_unix_ms   INTEGER NULL,
    reason               TEXT    NULL,
    used_by              TEXT    NULL,
    used_at_unix_ms      INTEGER NULL
) STRICT;

CREATE INDEX idx_approvals_state ON approvals (state, requested_at_unix_ms);
