-- Integrations (issue 33): the automation platform's REST hooks and
-- score-threshold crossings, and the spreadsheet export's OAuth 2.0
-- connections, pending authorisations and finished exports.

-- The automation platform's new-domain trigger walks the newest records.
CREATE INDEX pool_facets_entered_all ON pool_facets(entered_at, domain_id);

-- A REST hook is a webhook subscription the automation platform made
-- (POST /v1/zapier/hooks): rest_hook names its trigger (new-domain,
-- domain-enriched, score-threshold) and rest_hook_params its query as
-- JSON. NULL for the account's own webhooks, which alone /v1/webhooks
-- lists, counts and fans events out to.
ALTER TABLE webhooks ADD COLUMN rest_hook TEXT;
ALTER TABLE webhooks ADD COLUMN rest_hook_params TEXT;
-- When the deliverer last looked for a hook's new items, and who holds it.
ALTER TABLE webhooks ADD COLUMN rest_hook_scan_at BIGINT;
ALTER TABLE webhooks ADD COLUMN rest_hook_lease TEXT;
CREATE INDEX webhooks_rest_hook_scan ON webhooks(rest_hook, rest_hook_scan_at);

-- The trigger items a REST hook has been sent (or had already when it
-- was made), so each goes out once.
CREATE TABLE rest_hook_items (
    webhook_id BIGINT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    item_id TEXT NOT NULL,
    seen_at BIGINT NOT NULL,
    PRIMARY KEY (webhook_id, item_id)
);

-- A list domain's score under the account's default rule reaching a
-- threshold: open (cleared_at NULL) while it stays there; a later drop
-- clears it and a new crossing gets a new row (and a new trigger id).
CREATE TABLE score_crossings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    domain TEXT NOT NULL,
    threshold BIGINT NOT NULL,
    triggered_at BIGINT NOT NULL,
    cleared_at BIGINT
);
CREATE UNIQUE INDEX score_crossings_open ON score_crossings(account_id, threshold, domain)
    WHERE cleared_at IS NULL;
CREATE INDEX score_crossings_recent ON score_crossings(account_id, threshold, id);

-- An account's connection to the spreadsheet service. Tokens are sealed
-- with the account id as associated data. status: connected, broken.
CREATE TABLE sheets_connections (
    account_id BIGINT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    access_token TEXT NOT NULL,
    refresh_token TEXT,
    expires_at BIGINT,
    status TEXT NOT NULL,
    connected_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Authorisations started by GET /v1/sheets/connect and not yet finished:
-- state_hash is the SHA-256 of the state parameter, the PKCE verifier is
-- sealed. A callback consumes its row; rows expire after 10 minutes.
CREATE TABLE sheets_oauth_states (
    state_hash TEXT PRIMARY KEY,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    pkce_verifier TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- Finished exports, the export.completed event's export_id.
CREATE TABLE sheets_exports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    spreadsheet_id TEXT NOT NULL,
    spreadsheet_url TEXT NOT NULL,
    template TEXT NOT NULL,
    list_id BIGINT,
    row_count BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX sheets_exports_account ON sheets_exports(account_id, id);
