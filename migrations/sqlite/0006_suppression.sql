-- The suppression list (spec/1 "Suppression entry"): per account, across all
-- sequences. `email` is a lowercased address, or `@domain` for a whole
-- domain (ours: suppresses every address there).

CREATE TABLE suppression_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    domain TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX suppression_entries_email ON suppression_entries(account_id, email);
CREATE INDEX suppression_entries_domain ON suppression_entries(account_id, domain);
