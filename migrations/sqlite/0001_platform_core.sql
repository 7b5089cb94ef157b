-- Platform core: tenants (accounts), their members, API keys, reseller clients,
-- Flags are BIGINT 0/1: sqlx's Any driver maps no boolean type on SQLite.
-- request usage, password resets, the durable job queue and server settings.
-- Timestamps are milliseconds since the Unix epoch; JSON is TEXT.

CREATE TABLE accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    plan TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active',
    billing_day BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    role TEXT NOT NULL DEFAULT 'member',
    totp_secret TEXT,
    totp_enabled BIGINT NOT NULL DEFAULT 0,
    totp_last_step BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX users_account ON users(account_id);

CREATE TABLE reseller_clients (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    monthly_quota BIGINT NOT NULL,
    disabled BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE INDEX reseller_clients_account ON reseller_clients(account_id);

CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
    reseller_client_id BIGINT REFERENCES reseller_clients(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    lookup TEXT NOT NULL UNIQUE,
    key_hash TEXT NOT NULL,
    preview TEXT NOT NULL,
    allowed_ips TEXT NOT NULL DEFAULT '[]',
    allowed_groups TEXT NOT NULL DEFAULT '[]',
    request_count BIGINT NOT NULL DEFAULT 0,
    last_used_at BIGINT,
    revoked_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX api_keys_account ON api_keys(account_id);

CREATE TABLE usage_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT NOT NULL,
    account_id BIGINT NOT NULL,
    api_key_id BIGINT,
    reseller_client_id BIGINT,
    ts BIGINT NOT NULL,
    method TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    category TEXT NOT NULL,
    status BIGINT NOT NULL,
    response_time_ms BIGINT NOT NULL,
    filters_summary TEXT,
    results_count BIGINT NOT NULL DEFAULT 0,
    billable BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX usage_events_account_ts ON usage_events(account_id, ts);
CREATE INDEX usage_events_client_ts ON usage_events(reseller_client_id, ts);

CREATE TABLE password_resets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL,
    payload TEXT NOT NULL,
    idempotency_key TEXT,
    status TEXT NOT NULL DEFAULT 'queued',
    run_at BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    max_attempts BIGINT NOT NULL DEFAULT 5,
    lease_owner TEXT,
    lease_until BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX jobs_idempotency ON jobs(queue, idempotency_key);
CREATE INDEX jobs_due ON jobs(queue, status, run_at);

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
