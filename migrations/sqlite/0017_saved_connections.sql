-- Saved connections (issue 30): a base URL and headers an http_request
-- action names by connection_id. `headers` is a JSON object of header name
-- to value sealed with the secrets facility (associated data
-- `saved_connections:<id>:header:<lower-case name>`), so the names can be
-- listed without the key and a value copied to another row or name does
-- not open.
CREATE TABLE saved_connections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    base_url TEXT NOT NULL,
    auth_type TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    headers TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX saved_connections_account ON saved_connections(account_id, id);

-- Workflow analytics read one account's runs by creation time, and the
-- hourly retention deletes every account's runs by it.
CREATE INDEX workflow_runs_account_created ON workflow_runs(account_id, created_at);
CREATE INDEX workflow_runs_created ON workflow_runs(created_at);
