-- Customer vendor keys (AI providers, email verifiers, contact enrichers),
-- the cost ledger of every vendor call, and the per-user result caches.

CREATE TABLE vendor_keys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    family TEXT NOT NULL,
    provider TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    api_key TEXT NOT NULL,
    key_preview TEXT NOT NULL,
    endpoint_url TEXT,
    validation_model TEXT,
    is_active BIGINT NOT NULL DEFAULT 1,
    credits_remaining BIGINT,
    last_validated_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX vendor_keys_account ON vendor_keys(account_id, family);

CREATE TABLE vendor_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL,
    family TEXT NOT NULL,
    provider TEXT NOT NULL,
    key_id BIGINT,
    action_type TEXT NOT NULL,
    model TEXT,
    prompt_tokens BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    latency_ms BIGINT NOT NULL DEFAULT 0,
    cost_estimate_usd REAL NOT NULL DEFAULT 0,
    success BIGINT NOT NULL,
    cache_hit BIGINT NOT NULL DEFAULT 0,
    deliverability TEXT,
    error TEXT,
    ts BIGINT NOT NULL
);
CREATE INDEX vendor_calls_account ON vendor_calls(account_id, family, ts);

CREATE TABLE vendor_cache (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_key TEXT NOT NULL,
    family TEXT NOT NULL,
    subject TEXT NOT NULL,
    provider TEXT NOT NULL,
    result TEXT NOT NULL,
    cached_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX vendor_cache_lookup ON vendor_cache(user_key, family, subject, expires_at);
