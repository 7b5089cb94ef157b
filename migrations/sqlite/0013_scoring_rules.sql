-- Scoring rules (issue 12) an account defines; the first-party default
-- rules live in code and are not stored. conditions is a JSON array of
-- {field, op, value, points}.
CREATE TABLE scoring_rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    conditions TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX scoring_rules_account ON scoring_rules(account_id, id);
