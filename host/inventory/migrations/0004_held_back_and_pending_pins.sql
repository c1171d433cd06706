-- A version held back by an upgrade: installed (quarantined or disabled)
-- but not made current, because an active version was current and keeps
-- serving. held_back_code is the stable code of why (audit_failed,
-- policy_violation, precompile_failed, skill_quarantined, ...), reason the
-- message. The hold ends when the version becomes current (Tx.SetCurrent,
-- an explicit enable of that version).
ALTER TABLE skills ADD COLUMN held_back_code TEXT NULL CHECK (held_back_code IS NULL OR trim(held_back_code) <> '');
ALTER TABLE skills ADD COLUMN held_back_reason TEXT NULL;
ALTER TABLE skills ADD COLUMN held_back_at_unix_ms INTEGER NULL;

-- A trust-on-first-use pin that belongs to a committed install and may not
-- have reached the trust store yet: written in the install's transaction,
-- deleted once the pin is saved. Recovery saves what a crash left here.
CREATE TABLE pending_trust_pins (
    skill_id           TEXT    NOT NULL,
    version            TEXT    NOT NULL,
    publisher          TEXT    NOT NULL,
    public_key_hex     TEXT    NOT NULL CHECK (length(public_key_hex) = 64),
    created_at_unix_ms INTEGER NOT NULL,
    PRIMARY KEY (skill_id, version)
) STRICT;
